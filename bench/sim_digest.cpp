// A digest of every number the paging simulator gives, for a change meant to keep
// results bit-identical (a speed-up): run it before and after, and diff the output.
// Not a test (it asserts nothing and knows no expected values): a checksum over
//  - thousands of random small configurations (every policy, preemption mode, n,
//    beam, prefix caching, truncation or refusal, snapshots taken between chunks):
//    every Summary field, series point and block-map snapshot, or the error;
//  - trace parsing: random CSV texts with and without faults, read whole
//    (parse_trace_csv) and streamed through a source that returns short reads:
//    every request, or the error message;
//  - the Azure conversation trace in the two bench_sim settings, four policies,
//    streamed as the CLI reads it, with snapshots;
//  - SimSession as the CLI and the page run it (Llama-3.1-8B on an A100-80GB, the
//    Azure trace, all four policies): the --json text, the page's result JSON and
//    the packed block maps.
// Usage: sim_digest [TRIALS]   (default 3000; prints a running digest every 500)
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "model/model.h"
#include "report/sim_json.h"
#include "sim/rng.h"
#include "sim/session.h"
#include "sim/simulator.h"

using namespace kvb;
using namespace kvb::sim;

namespace {

// FNV-1a over the bytes of every value.
uint64_t h = 1469598103934665603ull;
void mix_bytes(const void* p, size_t n) {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) {
        h ^= c[i];
        h *= 1099511628211ull;
    }
}
void md(double x) {
    mix_bytes(&x, sizeof x);
}
void mi(int64_t x) {
    mix_bytes(&x, sizeof x);
}
void ms(const std::string& s) {
    mi(static_cast<int64_t>(s.size()));
    mix_bytes(s.data(), s.size());
}

void digest(const MemorySplit& m) {
    for (double v : {m.token_states, m.reserved, m.internal_fragmentation, m.external_fragmentation, m.cached, m.free,
                     m.null_block})
        md(v);
}

void digest(const BlockSnapshot& sn) {
    mi(sn.step);
    md(sn.time_s);
    mi(sn.block_size);
    mi(sn.capacity_tokens);
    for (auto v : sn.owner) mi(v);
    for (auto v : sn.refcount) mi(v);
    for (auto v : sn.fill) mi(v);
    for (const Region& g : sn.regions)
        for (int64_t v : {int64_t{g.request}, int64_t{g.seq}, g.offset, g.allocated, g.reserved, g.length, g.stored})
            mi(v);
}

void digest(const SimResult& r) {
    const Summary& s = r.summary;
    ms(s.policy);
    for (int64_t v :
         {s.requests, s.finished, s.refused, s.truncated, s.preemptions, s.swapped_out, s.recomputed_tokens,
          s.swap_fallbacks, s.steps, s.capacity_tokens, s.num_blocks, s.max_running, s.max_waiting, s.max_blocks_saved,
          s.cow_copies, s.prefix_hit_tokens, s.prefix_query_tokens, s.prompt_tokens, s.generated_tokens})
        mi(v);
    digest(s.memory);
    digest(s.of_used);
    for (double v : {s.makespan_s,     s.token_states_of_used,
                     s.mean_running,   s.mean_waiting,
                     s.sharing_saved,  s.throughput_tokens_per_s,
                     s.requests_per_s, s.ttft_mean_s,
                     s.ttft_p50_s,     s.ttft_p90_s,
                     s.ttft_p99_s,     s.tpot_mean_s,
                     s.tpot_p50_s,     s.tpot_p90_s,
                     s.tpot_p99_s,     s.e2e_mean_s,
                     s.e2e_p50_s,      s.e2e_p90_s,
                     s.e2e_p99_s,      s.normalized_latency_s})
        md(v);
    for (const TimePoint& p : r.series) {
        for (double v : {p.time_s, p.duration_s, p.running, p.waiting, p.sharing_saved}) md(v);
        digest(p.memory);
        mi(p.preemptions);
        mi(p.finished);
    }
    for (const BlockSnapshot& sn : r.snapshots) digest(sn);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void random_configs(int trials) {
    Rng r(777);
    for (int trial = 0; trial < trials; ++trial) {
        SimConfig c;
        const int64_t pk = r.uniform_int(0, 5);
        c.policy = pk <= 2 ? Policy::Paged : pk == 3 ? Policy::Max : pk == 4 ? Policy::Pow2 : Policy::Oracle;
        c.block_size = static_cast<int32_t>(r.uniform_int(1, 16));
        c.kv_bytes_per_token = r.uniform_int(1, 3);
        c.max_model_len = static_cast<int32_t>(r.uniform_int(8, 300));
        const int64_t min_slots =
            c.policy == Policy::Paged
                ? (c.max_model_len + c.block_size - 1) / c.block_size * c.block_size + 2 * c.block_size
                : 512;
        c.kv_capacity_bytes = r.uniform_int(min_slots, min_slots * 8) * c.kv_bytes_per_token;
        c.max_num_seqs = static_cast<int32_t>(r.uniform_int(1, 40));
        c.max_num_batched_tokens = static_cast<int32_t>(r.uniform_int(1, 400));
        if (r.chance(0.15)) {
            c.n = static_cast<int32_t>(r.uniform_int(2, 4));
            if (c.n > c.max_num_seqs) c.n = 1;
        } else if (r.chance(0.1)) {
            c.beam_width = static_cast<int32_t>(r.uniform_int(2, 4));
            if (c.beam_width > c.max_num_seqs) c.beam_width = 1;
        }
        c.independent_sample_lengths = r.chance(0.7);
        c.prefix_caching = c.policy == Policy::Paged && r.chance(0.15);
        c.preemption = r.chance(0.3) ? Preemption::Swap : r.chance(0.5) ? Preemption::V0 : Preemption::Recompute;
        c.swap_space_bytes = r.uniform_int(0, 400) * c.kv_bytes_per_token * c.block_size;
        c.overlong = r.chance(0.5) ? Overlong::Truncate : Overlong::Refuse;
        c.seed = static_cast<uint64_t>(r.uniform_int(0, 3));
        c.latency.weights_bytes = 1e9;
        c.latency.active_params = 1e9;
        c.latency.attn_flops_per_pair = 1e5;
        c.latency.bandwidth_bytes_per_s = 1e12;
        c.latency.flops_per_s = 1e14;
        c.series_points = static_cast<int32_t>(r.uniform_int(1, 50));
        c.snapshot_every_steps = r.chance(0.5) ? r.uniform_int(1, 30) : 0;
        c.max_snapshots = static_cast<int32_t>(r.uniform_int(1, 10));
        std::vector<Request> reqs;
        const int64_t nreq = r.uniform_int(1, 300);
        double t = 0;
        const double rate = r.uniform() * 50 + 0.1;
        const bool prefixed = r.chance(0.2);
        for (int64_t i = 0; i < nreq; ++i) {
            Request q;
            if (r.chance(0.7)) t += r.exponential(rate);
            q.arrival_s = t;
            q.prompt_tokens = static_cast<int32_t>(r.uniform_int(1, 200));
            q.output_tokens = static_cast<int32_t>(r.uniform_int(1, 200));
            if (prefixed) q.prefix_tokens = static_cast<int32_t>(r.uniform_int(0, q.prompt_tokens));
            reqs.push_back(q);
        }
        Simulator sim(c, reqs);
        const int64_t chunk = r.uniform_int(1, 500);
        while (sim.ok() && !sim.done()) {
            sim.run(chunk);
            if (trial % 7 == 0) digest(sim.snapshot());
            if (trial % 11 == 0) mi(sim.requests_held());
        }
        if (!sim.ok())
            ms(sim.error_message());
        else
            digest(sim.result());
        if (trial % 500 == 499) std::printf("random configs %5d  %016" PRIx64 "\n", trial + 1, h);
    }
}

// A random CSV trace: mostly good rows, sometimes one fault.
std::string random_csv(Rng& r) {
    const bool raw = r.chance(0.3);
    std::string s = r.chance(0.1) ? "\xEF\xBB\xBF" : "";
    s += raw ? "TIMESTAMP,ContextTokens,GeneratedTokens"
             : (r.chance(0.5) ? "arrived_at,num_prefill_tokens,num_decode_tokens"
                              : " Num_Decode_Tokens ,arrived_at,num_prefill_tokens");
    const bool swapped = s.find("Num_Decode") != std::string::npos;
    s += r.chance(0.2) ? "\r\n" : "\n";
    const int64_t rows = r.uniform_int(0, 60);
    double t = r.uniform() * 100;
    const int64_t fault_at = r.chance(0.4) ? r.uniform_int(0, rows) : -1;
    static const char* faults[] = {"", "x", "-1", "0", "1.2.3", "1e999", "20000000", " ", "1,2", "1e-400", "12abc"};
    for (int64_t i = 0; i < rows; ++i) {
        if (r.chance(0.1)) t -= r.uniform();  // out of order: read whole and sorted
        t += r.exponential(2.0);
        if (t < 0) t = 0;
        char ts[64];
        if (raw) {
            const int64_t secs = static_cast<int64_t>(t);
            std::snprintf(ts, sizeof ts, "2023-11-16 %02d:%02d:%02d.%07d%s", static_cast<int>(10 + secs / 3600 % 12),
                          static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60),
                          static_cast<int>((t - static_cast<double>(secs)) * 1e7), r.chance(0.1) ? "Z" : "");
        } else {
            std::snprintf(ts, sizeof ts, r.chance(0.2) ? "%.3e" : "%.6f", t);
        }
        std::string tf = ts, pf = std::to_string(r.uniform_int(1, 5000)), of = std::to_string(r.uniform_int(1, 900));
        if (r.chance(0.1)) pf = " " + pf + "\t";
        if (i == fault_at) {
            const std::string f = faults[r.uniform_int(0, 10)];
            const int64_t which = r.uniform_int(0, 2);
            (which == 0 ? tf : which == 1 ? pf : of) = f;
        }
        s += swapped ? of + "," + tf + "," + pf : tf + "," + pf + "," + of;
        if (r.chance(0.05)) s += "\n   ";  // a blank line
        s += r.chance(0.2) ? "\r\n" : "\n";
    }
    if (r.chance(0.3) && !s.empty()) s.pop_back();  // no newline at the end
    return s;
}

void digest_requests(const Result<std::vector<Request>>& reqs) {
    if (!reqs) {
        ms(reqs.error().message);
        return;
    }
    for (const Request& q : reqs.value()) {
        md(q.arrival_s);
        mi(q.prompt_tokens);
        mi(q.output_tokens);
        mi(q.prefix_tokens);
    }
}

void traces(int count) {
    Rng r(4242);
    for (int k = 0; k < count; ++k) {
        const std::string csv = random_csv(r);
        digest_requests(parse_trace_csv(csv, "t.csv"));
        // Streamed, the reads cut short at random.
        auto held = std::make_shared<std::string>(csv);
        auto cut = std::make_shared<Rng>(static_cast<uint64_t>(k));
        TraceSource src = [held, cut](int64_t at, char* buf, int64_t n) -> int64_t {
            if (at >= static_cast<int64_t>(held->size())) return 0;
            const int64_t want = std::min<int64_t>(n, cut->uniform_int(1, 100));
            const int64_t got = std::min<int64_t>(want, static_cast<int64_t>(held->size()) - at);
            std::copy_n(held->data() + at, static_cast<size_t>(got), buf);
            return got;
        };
        auto scan = scan_trace(src, "s.csv");
        if (!scan) {
            ms(scan.error().message);
        } else {
            WorkloadSpec w;
            w.arrival = Arrival::Trace;
            w.lengths = Lengths::Trace;
            w.trace_file = scan.value();
            digest_requests(make_workload(w));
        }
        if (k % 1000 == 999) std::printf("traces %5d          %016" PRIx64 "\n", k + 1, h);
    }
}

TraceSource file_source(const std::string& path) {
    return text_source(read_file(path));
}

void azure(const std::string& trace_path) {
    auto scan = scan_trace(file_source(trace_path), "azure-llm-2023-conv.csv");
    if (!scan) {
        std::printf("azure: %s\n", scan.error().message.c_str());
        return;
    }
    WorkloadSpec w;
    w.arrival = Arrival::Trace;
    w.lengths = Lengths::Trace;
    w.trace_file = scan.value();
    auto stream = RequestStream::create(w);
    for (int setting = 0; setting < 2; ++setting)
        for (Policy p : {Policy::Paged, Policy::Max, Policy::Pow2, Policy::Oracle}) {
            SimConfig c;
            if (setting == 0) {  // OPT-13B / A100-40GB, overloaded
                c.kv_bytes_per_token = 819200;
                c.kv_capacity_bytes = int64_t{12} << 30;
                c.max_model_len = 2048;
                c.latency.weights_bytes = 26e9;
                c.latency.active_params = 13e9;
                c.latency.attn_flops_per_pair = 4.0 * 5120 * 40;
                c.latency.bandwidth_bytes_per_s = 1.555e12;
                c.latency.flops_per_s = 312e12;
            } else {  // Llama-3.1-8B / A100-80GB
                c.kv_bytes_per_token = 131072;
                c.kv_capacity_bytes = 58573183180;
                c.max_model_len = 16384;
                c.max_num_batched_tokens = 2048;
                c.latency.weights_bytes = 16096190464;
                c.latency.active_params = 8.03e9;
                c.latency.attn_flops_per_pair = 4.0 * 4096 * 32;
                c.latency.bandwidth_bytes_per_s = 2.039e12;
                c.latency.flops_per_s = 312e12;
            }
            c.policy = p;
            c.snapshot_every_steps = 500;
            c.max_snapshots = 30;
            Simulator sim(c, stream.value());
            while (!sim.done()) sim.run(3000);
            digest(sim.result());
            std::printf("azure %d %-6s          %016" PRIx64 "  steps %" PRId64 "\n", setting, policy_name(p), h,
                        sim.steps());
        }
}

void session(const std::string& fixtures, const std::string& trace_path) {
    auto model =
        parse_config(read_file(fixtures + "/configs/meta-llama--Llama-3.1-8B.json"), "meta-llama/Llama-3.1-8B");
    if (!model) {
        std::printf("session: %s\n", model.error().message.c_str());
        return;
    }
    SimInputs in;
    in.policies = {"all"};
    in.gpu = "a100-80gb";
    in.max_model_len = 16384;
    in.workload = "azure-conv";
    in.trace_source = file_source(trace_path);
    in.snapshots = 60;
    auto made = SimSession::create(model.value(), in);
    if (!made) {
        std::printf("session: %s\n", made.error().message.c_str());
        return;
    }
    SimSession& s = made.value();
    if (auto done = s.run_to_end(); !done) ms(done.error().message);
    ms(to_json_text(s.report()));
    std::printf("session --json        %016" PRIx64 "\n", h);
    ms(sim_result_json_text(s, true, true));
    const SimPackedSnapshots packed = sim_snapshots_packed(s);
    for (double v : packed.f64) md(v);
    for (int32_t v : packed.i32) mi(v);
    for (uint16_t v : packed.u16) mi(v);
    std::printf("session result, packed %016" PRIx64 "\n", h);
}

}  // namespace

int main(int argc, char** argv) {
    const int trials = argc > 1 ? std::atoi(argv[1]) : 3000;
    const std::string fixtures = KVB_FIXTURES;
    const std::string trace = fixtures + "/../../data/traces/azure-llm-2023-conv.csv";
    random_configs(trials);
    traces(trials);
    azure(trace);
    session(fixtures, trace);
    return 0;
}
