// Bounded memory (issue 14, item 10): the workload is drawn as the run goes, so
// what the simulator holds follows the requests in flight, not the workload; the
// reported series and snapshots stay within their bounds however long the run; the
// streamed workload is exactly the materialized one; settings are refused before
// any request is drawn or trace parsed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "fixtures.h"
#include "sim/session.h"
#include "sim/simulator.h"
#include "sim/workload.h"

using namespace kvb;
using namespace kvb::sim;
using kvb::test::fixture;

namespace {

SimConfig small_config() {
    SimConfig c;
    c.kv_bytes_per_token = 114688;  // Qwen3-0.6B, bf16
    c.kv_capacity_bytes = int64_t{1} << 30;
    c.max_model_len = 4096;
    c.latency.weights_bytes = 1.2e9;
    c.latency.active_params = 0.6e9;
    c.latency.bandwidth_bytes_per_s = 2e12;
    c.latency.flops_per_s = 312e12;
    return c;
}

void check_same(const Summary& a, const Summary& b) {
    CHECK(a.finished == b.finished);
    CHECK(a.steps == b.steps);
    CHECK(a.preemptions == b.preemptions);
    CHECK(a.generated_tokens == b.generated_tokens);
    CHECK(a.makespan_s == b.makespan_s);
    CHECK(a.memory.token_states == b.memory.token_states);
    CHECK(a.of_used.internal_fragmentation == b.of_used.internal_fragmentation);
    CHECK(a.ttft_p99_s == b.ttft_p99_s);
    CHECK(a.normalized_latency_s == b.normalized_latency_s);
}

}  // namespace

TEST_CASE("the streamed workload is the materialized one, request for request") {
    std::vector<WorkloadSpec> specs(3);
    specs[0].lengths = Lengths::ShareGpt;
    specs[0].arrival = Arrival::Poisson;
    specs[0].rate = 7;
    specs[0].requests = 500;
    specs[0].shared_prefix = 64;
    specs[0].shared_fraction = 0.3;
    specs[0].seed = 5;
    specs[1].lengths = Lengths::Alpaca;
    specs[1].requests = 300;
    // A hand-built trace out of order: sorted once, as make_workload always did.
    specs[2].arrival = Arrival::Trace;
    specs[2].lengths = Lengths::Trace;
    for (int i = 0; i < 50; ++i)
        specs[2].trace.push_back(Request{static_cast<double>((i * 37) % 50), 10 + i, 1 + i, 0});
    for (const WorkloadSpec& w : specs) {
        auto all = make_workload(w);
        REQUIRE(all);
        auto st = RequestStream::create(w);
        REQUIRE(st);
        REQUIRE(st->size() == static_cast<int64_t>(all->size()));
        RequestStream s = st.value();
        for (int pass = 0; pass < 2; ++pass) {  // and again after rewind()
            Request q;
            size_t i = 0;
            while (s.next(&q)) {
                REQUIRE(i < all->size());
                CHECK(q.arrival_s == all.value()[i].arrival_s);
                CHECK(q.prompt_tokens == all.value()[i].prompt_tokens);
                CHECK(q.output_tokens == all.value()[i].output_tokens);
                CHECK(q.prefix_tokens == all.value()[i].prefix_tokens);
                ++i;
            }
            CHECK(i == all->size());
            s.rewind();
        }
    }
}

TEST_CASE("a simulator drawing its requests gives the run over the materialized workload") {
    WorkloadSpec w;
    w.arrival = Arrival::Poisson;
    w.rate = 40;
    w.requests = 1500;
    for (Policy p : {Policy::Paged, Policy::Pow2}) {
        for (int n : {1, 3}) {
            CAPTURE(policy_name(p));
            CAPTURE(n);
            SimConfig c = small_config();
            c.policy = p;
            c.n = n;
            auto all = simulate(c, make_workload(w).value());
            REQUIRE(all);
            Simulator sim(c, RequestStream::create(w).value());
            REQUIRE(sim.ok());
            while (!sim.done()) sim.run(777);
            check_same(sim.summary(), all->summary);
            CHECK(sim.check_invariants() == "");
        }
    }
}

TEST_CASE("memory follows the requests in flight: a long steady run holds few requests, a bounded series") {
    // 100,000 requests at 5/s on a GPU that keeps up: tens in flight at a time.
    WorkloadSpec w;
    w.arrival = Arrival::Poisson;
    w.rate = 5;
    w.requests = 100'000;
    SimConfig c = small_config();
    c.kv_capacity_bytes = int64_t{4} << 30;
    c.series_points = 50;
    c.snapshot_every_steps = 8;
    c.max_snapshots = 10;
    Simulator sim(c, RequestStream::create(w).value());
    REQUIRE(sim.ok());
    int64_t most_series = 0, most_snaps = 0;
    while (!sim.done()) {
        sim.run(200'000);
        most_series = std::max<int64_t>(most_series, static_cast<int64_t>(sim.series().size()));
        most_snaps = std::max<int64_t>(most_snaps, static_cast<int64_t>(sim.snapshots().size()));
    }
    const Summary s = sim.summary();
    CHECK(s.finished == 100'000);
    CHECK(s.max_waiting == 0);
    // Held: in flight plus finished ones behind the oldest unfinished request.
    CHECK(sim.max_requests_held() < 1000);
    CHECK(sim.requests_held() == 0);
    // Series: between series_points and 2x series_points buckets, however long the run.
    CHECK(most_series <= 2 * c.series_points);
    CHECK(sim.series().size() >= static_cast<size_t>(c.series_points));
    CHECK(most_snaps <= c.max_snapshots);
}

TEST_CASE("settings are refused before a workload is drawn or a trace parsed") {
    const ModelSpec m = fixture("Qwen/Qwen3-0.6B");
    SimInputs in;
    in.kv_cache_memory = 64 << 20;  // 585 token slots: one 4,096-token sequence cannot fit
    in.max_model_len = 4096;
    in.requests = 10'000'000;  // the documented maximum: refused at once, nothing drawn
    auto s = SimSession::create(m, in);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().detail.code == "sim_pool_too_small");
    CHECK(s.error().message.find("paged") != std::string::npos);
    CHECK(s.error().message.find("fewer than the 256 one sequence of max model length 4,096 needs") !=
          std::string::npos);
    // A malformed trace is not parsed when the settings already fail.
    in.workload = "csv";
    in.trace = "not,a,trace\n";
    in.requests.reset();
    auto t = SimSession::create(m, in);
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message.find("fewer than the 256") != std::string::npos);
}

namespace {

// A sorted trace of `rows` requests that exists only as a function: line k sits at a
// fixed offset, so any byte range is made on demand and nothing is held. Records the
// largest read asked for and how far the reads reached.
struct GeneratedTrace {
    static constexpr int64_t kLine = 24;  // "%011.3f,%05d,%05d\n"
    std::string header = "arrived_at,num_prefill_tokens,num_decode_tokens\n";
    int64_t rows = 0;
    double rate = 5;
    std::shared_ptr<int64_t> largest_read = std::make_shared<int64_t>(0);

    std::string line(int64_t k) const {
        char b[32];
        std::snprintf(b, sizeof b, "%011.3f,%05d,%05d\n", static_cast<double>(k) / rate, static_cast<int>(20 + k % 700),
                      static_cast<int>(1 + (k * 7919) % 300));
        return b;
    }
    TraceSource source() const {
        GeneratedTrace self = *this;
        return [self](int64_t at, char* buf, int64_t n) -> int64_t {
            *self.largest_read = std::max(*self.largest_read, n);
            const int64_t h = static_cast<int64_t>(self.header.size()), end = h + self.rows * kLine;
            int64_t done = 0;
            while (done < n && at + done < end) {
                const int64_t p = at + done;
                const std::string l = p < h ? self.header : self.line((p - h) / kLine);
                const int64_t off = p < h ? p : (p - h) % kLine;
                const int64_t k = std::min<int64_t>(n - done, static_cast<int64_t>(l.size()) - off);
                std::copy_n(l.data() + off, static_cast<size_t>(k), buf + done);
                done += k;
            }
            return done;
        };
    }
    std::string text() const {
        std::string t = header;
        for (int64_t k = 0; k < rows; ++k) t += line(k);
        return t;
    }
};

}  // namespace

TEST_CASE("a sorted trace is read as the run goes: what is held follows the requests in flight") {
    // 300,000 requests past the longest trace held whole; the source is read 64 KiB at a time.
    GeneratedTrace g;
    g.rows = 300'000;
    auto scan = scan_trace(g.source(), "week.csv");
    REQUIRE(scan);
    CHECK(scan.value()->requests == 300'000);
    CHECK(scan.value()->sorted);
    WorkloadSpec w;
    w.arrival = Arrival::Trace;
    w.lengths = Lengths::Trace;
    w.trace_file = scan.value();
    SimConfig c = small_config();
    c.kv_capacity_bytes = int64_t{4} << 30;
    c.series_points = 50;
    Simulator sim(c, RequestStream::create(w).value());
    REQUIRE(sim.ok());
    while (!sim.done()) sim.run(1'000'000);
    REQUIRE(sim.ok());
    const Summary s = sim.summary();
    CHECK(s.finished == 300'000);
    CHECK(sim.max_requests_held() < 1000);
    CHECK(*g.largest_read == 65536);
    CHECK(s.makespan_s > 59'999.8);  // the last arrival is at 59,999.8 s
    // Past 65,536 finished requests the percentiles fold into 1/256-octave bins: within
    // 0.2 % of the exact ones, which a smaller run of the same rows gives exactly.
    CHECK(s.e2e_p50_s > 0);
    CHECK(s.e2e_p50_s <= s.e2e_p90_s);
    CHECK(s.e2e_p90_s <= s.e2e_p99_s);
}

TEST_CASE("a streamed trace gives the run of the same trace parsed whole") {
    GeneratedTrace g;
    g.rows = 3000;
    g.rate = 40;  // faster than the GPU serves: queues, preemptions
    auto held = parse_trace_csv(g.text(), "t.csv");
    REQUIRE(held);
    WorkloadSpec a;
    a.arrival = Arrival::Trace;
    a.lengths = Lengths::Trace;
    a.trace = held.value();
    WorkloadSpec b = a;
    b.trace.clear();
    b.trace_file = scan_trace(g.source(), "t.csv").value();
    SimConfig c = small_config();
    c.n = 2;  // independent sample lengths read the whole workload first, then rewind
    auto ra = simulate(c, make_workload(a).value());
    Simulator sb(c, RequestStream::create(b).value());
    while (!sb.done()) sb.run(100'000);
    REQUIRE(ra);
    REQUIRE(sb.ok());
    CHECK(ra->summary.preemptions > 0);
    check_same(ra->summary, sb.summary());
}

TEST_CASE("a trace that changes between its scan and the run stops the run with the reason") {
    const std::string first = "arrived_at,num_prefill_tokens,num_decode_tokens\n0,10,5\n1,10,5\n2,10,5\n";
    auto reads = std::make_shared<int>(0);
    // The scan reads the first text; every later read sees a shorter, edited file.
    TraceSource src = [first, reads](int64_t at, char* buf, int64_t n) -> int64_t {
        const std::string text = (*reads)++ < 2 ? first : "arrived_at,num_prefill_tokens,num_decode_tokens\n0,10,x\n";
        if (at >= static_cast<int64_t>(text.size())) return 0;
        const int64_t k = std::min<int64_t>(n, static_cast<int64_t>(text.size()) - at);
        std::copy_n(text.data() + at, static_cast<size_t>(k), buf);
        return k;
    };
    WorkloadSpec w;
    w.arrival = Arrival::Trace;
    w.lengths = Lengths::Trace;
    w.trace_file = scan_trace(src, "t.csv").value();
    Simulator sim(small_config(), RequestStream::create(w).value());
    while (!sim.done()) sim.run(1000);
    REQUIRE_FALSE(sim.ok());
    // What changed is not said: the line no longer reads as the scan read it.
    CHECK(sim.error().detail.code == "sim_trace_changed_line");
    CHECK(sim.error().message ==
          "line 2 of t.csv no longer reads as it did when the trace was scanned: the file changed since it was read");
}

TEST_CASE("a trace out of time order is held whole and sorted, up to 10,000,000 requests") {
    auto scan = scan_trace(text_source("arrived_at,num_prefill_tokens,num_decode_tokens\n5,10,5\n1,20,5\n"), "t.csv");
    REQUIRE(scan);
    CHECK_FALSE(scan.value()->sorted);
    WorkloadSpec w;
    w.arrival = Arrival::Trace;
    w.lengths = Lengths::Trace;
    w.trace_file = scan.value();
    auto reqs = make_workload(w);
    REQUIRE(reqs);
    REQUIRE(reqs->size() == 2);
    CHECK(reqs.value()[0].prompt_tokens == 20);
    CHECK(reqs.value()[0].arrival_s == 0);
    CHECK(reqs.value()[1].arrival_s == 4);
}

TEST_CASE("a line no trace has is refused, not held: 64 KiB at most") {
    const std::string text = "arrived_at,num_prefill_tokens,num_decode_tokens\n0,10,5\n" + std::string(70'000, '1');
    auto scan = scan_trace(text_source(text), "t.csv");
    REQUIRE_FALSE(scan);
    CHECK(scan.error().message == "line 3 of t.csv: longer than 65,536 bytes: not a trace line");
}
