// What fuzz_sim does with one input, shared with the CTest corpus replay: the input
// chooses a small workload and simulator settings (now and then an out-of-range one),
// the simulator runs step by step and every invariant is checked. Returns "" when
// all hold, else what broke (a crash or sanitizer report fails on its own).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/simulator.h"
#include "sim/workload.h"

namespace kvb::fuzz {

namespace detail {

// The input read as a stream of choices; past its end every choice is the smallest.
class Choices {
public:
    explicit Choices(const std::string& s) : s_(s) {}
    int64_t in(int64_t lo, int64_t hi) {
        if (hi <= lo) return lo;
        const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
        uint64_t v = byte();
        if (span > 256) v = v << 8 | byte();
        return lo + static_cast<int64_t>(v % span);
    }
    bool chance(int percent) { return in(0, 99) < percent; }
    // What follows the first `header` bytes (or the choices read, if more): free-form text.
    std::string rest(size_t header) {
        const size_t from = i_ > header ? i_ : header;
        i_ = s_.size();
        return from < s_.size() ? s_.substr(from) : std::string();
    }

private:
    uint64_t byte() { return i_ < s_.size() ? static_cast<unsigned char>(s_[i_++]) : 0; }
    const std::string& s_;
    size_t i_ = 0;
};

inline double split_sum(const sim::MemorySplit& m) {
    return m.token_states + m.reserved + m.internal_fragmentation + m.external_fragmentation + m.cached + m.free +
           m.null_block;  // the reserved null block is its own part, not waste
}

inline bool split_ok(const sim::MemorySplit& m) {
    for (double x : {m.token_states, m.reserved, m.internal_fragmentation, m.external_fragmentation, m.cached, m.free,
                     m.null_block})
        if (!(x >= -1e-9 && x <= 1 + 1e-9)) return false;
    return std::fabs(split_sum(m) - 1.0) < 1e-9;
}

}  // namespace detail

// Scheduler steps one input may take. The settings keep every sequence within 68
// tokens and at most 16 requests of 4 sequences, which finish in a few thousand
// steps even one token per step with preemptions; more means a livelock.
constexpr int64_t kSimStepCap = 200000;
// Trace inputs (first byte 3 mod 4) carry the CSV text from this offset on, so a seed
// can be made by hand: 48 bytes of settings, then a trace.
constexpr size_t kTraceOffset = 48;

inline std::string sim_check(const std::string& input) {
    using namespace sim;
    detail::Choices ch(input);
    const int mode = static_cast<int>(ch.in(0, 3));  // 0-1 hand-built requests, 2 generated, 3 trace CSV

    SimConfig c;
    const int pk = static_cast<int>(ch.in(0, 5));
    c.policy = pk <= 2 ? Policy::Paged : pk == 3 ? Policy::Max : pk == 4 ? Policy::Pow2 : Policy::Oracle;
    c.block_size = static_cast<int32_t>(ch.in(1, 16));
    c.kv_bytes_per_token = ch.in(1, 4);
    c.max_model_len = static_cast<int32_t>(ch.in(2, 64));
    int64_t pow2 = 1;
    while (pow2 < c.max_model_len) pow2 *= 2;
    // The smallest pool that holds one longest sequence (paged: plus the null block and slack).
    const int64_t min_slots =
        c.policy == Policy::Paged
            ? (c.max_model_len + c.block_size - 1) / c.block_size * c.block_size + 2 * c.block_size
            : pow2;
    c.kv_capacity_bytes = ch.in(min_slots, min_slots * 4) * c.kv_bytes_per_token;
    c.max_num_seqs = static_cast<int32_t>(ch.in(1, 12));
    c.max_num_batched_tokens = static_cast<int32_t>(ch.in(1, 96));
    const int sharing = static_cast<int>(ch.in(0, 2));
    if (sharing == 1) c.n = static_cast<int32_t>(ch.in(2, 4));
    if (sharing == 2) {
        c.beam_width = static_cast<int32_t>(ch.in(2, 4));
        c.beam_switches = static_cast<double>(ch.in(0, 300)) / 10;
    }
    if (c.n > c.max_num_seqs || c.beam_width > c.max_num_seqs) c.n = c.beam_width = 1;
    c.prefix_caching = c.policy == Policy::Paged && ch.chance(50);
    c.preemption = ch.chance(40) ? Preemption::Swap : Preemption::Recompute;
    c.swap_space_bytes = ch.in(0, 40) * c.kv_bytes_per_token * c.block_size;
    c.overlong = ch.chance(50) ? Overlong::Truncate : Overlong::Refuse;
    c.seed = static_cast<uint64_t>(ch.in(0, 65535));
    c.latency.step_overhead_s = 0.001 * static_cast<double>(ch.in(0, 5));
    c.latency.bandwidth_bytes_per_s = ch.chance(50) ? 1e6 : 0;
    c.latency.weights_bytes = 1000;
    c.series_points = static_cast<int32_t>(ch.in(1, 8));
    c.snapshot_every_steps = ch.in(0, 3);
    c.max_snapshots = static_cast<int32_t>(ch.in(1, 4));
    const int32_t len = c.max_model_len;  // request lengths follow the valid setting
    // Now and then one setting out of range: the simulator must refuse it with a message.
    if (ch.chance(8)) {
        const int32_t i32[] = {0, -1, 1, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
        const int32_t v = i32[ch.in(0, 4)];
        switch (ch.in(0, 9)) {
            case 0: c.block_size = v; break;
            case 1: c.max_model_len = v; break;
            case 2: c.max_num_seqs = v; break;
            case 3: c.max_num_batched_tokens = v; break;
            case 4: c.n = v; break;
            case 5: c.beam_width = v; break;
            case 6: c.series_points = v; break;
            case 7: c.kv_bytes_per_token = ch.chance(50) ? v : std::numeric_limits<int64_t>::max(); break;
            case 8: c.kv_capacity_bytes = ch.chance(50) ? v : (min_slots - 1) * c.kv_bytes_per_token; break;
            default: c.latency.step_overhead_s = ch.chance(50) ? -1.0 : std::nan(""); break;
        }
    }

    std::vector<Request> reqs;
    if (mode <= 1) {
        const int64_t nreq = ch.in(0, 16);
        const int32_t prefix = static_cast<int32_t>(ch.in(0, 10));
        double t = 0;
        for (int64_t i = 0; i < nreq; ++i) {
            if (ch.chance(60)) t += static_cast<double>(ch.in(0, 50)) / 1000;
            Request q;
            q.arrival_s = t;
            q.prompt_tokens = static_cast<int32_t>(ch.in(1, len + 4));
            q.output_tokens = static_cast<int32_t>(ch.in(1, len));
            if (prefix > 0 && ch.chance(50)) {
                q.prefix_tokens = prefix;
                q.prompt_tokens += prefix;
            }
            reqs.push_back(q);
        }
        if (!reqs.empty() && ch.chance(5)) {
            Request& q = reqs[static_cast<size_t>(ch.in(0, nreq - 1))];
            switch (ch.in(0, 4)) {
                case 0: q.arrival_s = -1; break;
                case 1: q.arrival_s = std::nan(""); break;
                case 2: q.prompt_tokens = 0; break;
                case 3: q.output_tokens = 0; break;
                default: q.prefix_tokens = q.prompt_tokens + 1; break;
            }
        }
    } else {
        WorkloadSpec w;
        const int64_t limit = len;
        if (mode == 3) {
            w.requests = ch.in(0, 16);
            w.arrival = ch.chance(70) ? Arrival::Trace : Arrival::Batch;
            w.lengths = ch.chance(70) ? Lengths::Trace : Lengths::Fixed;
            w.fixed_prompt = static_cast<int32_t>(ch.in(1, limit));
            w.fixed_output = static_cast<int32_t>(ch.in(1, limit));
            // Half the inputs read the trace as the CLI and the page do (scanned, then
            // streamed a line at a time from a source), half parse it whole.
            const std::string text = ch.rest(kTraceOffset);
            if (ch.chance(50)) {
                auto scan = scan_trace(text_source(text), "fuzz.csv");
                if (!scan) {
                    if (scan.error().code.empty() || scan.error().message.empty())
                        return "trace refused without a message";
                    return "";
                }
                w.trace_file = scan.value();
                if (w.requests == 0 && w.trace_file->requests > 16) w.requests = 16;
            } else {
                auto trace = parse_trace_csv(text, "fuzz.csv");
                if (!trace) {
                    if (trace.error().code.empty() || trace.error().message.empty())
                        return "trace refused without a message";
                    return "";
                }
                w.trace = std::move(trace.value());
                if (w.requests == 0 && w.trace.size() > 16) w.requests = 16;
            }
        } else {
            w.requests = ch.in(0, 16);
            w.arrival = ch.chance(50) ? Arrival::Batch : Arrival::Poisson;
            w.rate = static_cast<double>(ch.in(0, 1000)) / 10;
            w.lengths = static_cast<Lengths>(ch.in(0, 3));
            w.fixed_prompt = static_cast<int32_t>(ch.in(0, limit + 4));
            w.fixed_output = static_cast<int32_t>(ch.in(0, limit));
            w.min_prompt = static_cast<int32_t>(ch.in(0, limit));
            w.max_prompt = static_cast<int32_t>(ch.in(0, limit + 4));
            w.min_output = static_cast<int32_t>(ch.in(0, limit));
            w.max_output = static_cast<int32_t>(ch.in(0, limit));
        }
        w.shared_prefix = static_cast<int32_t>(ch.in(0, 16));
        w.shared_fraction = static_cast<double>(ch.in(0, 10)) / 10;
        w.seed = static_cast<uint64_t>(ch.in(0, 65535));
        auto got = make_workload(w);
        if (!got) {
            if (got.error().code.empty() || got.error().message.empty()) return "workload refused without a message";
            return "";
        }
        reqs = std::move(got.value());
    }

    Simulator s(c, reqs);
    if (!s.ok()) return s.error_message().empty() || s.error().code.empty() ? "settings refused without a message" : "";
    if (s.error().code != "") return "error set on a simulator that is ok";
    double last = 0;
    int64_t steps = 0;
    while (!s.done()) {
        s.run(1);
        if (!s.ok()) return "run failed: " + s.error_message();
        if (s.now_s() < last || !std::isfinite(s.now_s())) return "time went back or is not finite";
        last = s.now_s();
        const double p = s.progress();
        if (!(p >= 0 && p <= 1)) return "progress out of [0, 1]";
        if (std::string e = s.check_invariants(); !e.empty()) return "step " + std::to_string(s.steps()) + ": " + e;
        if (++steps > kSimStepCap) return "no end after " + std::to_string(kSimStepCap) + " steps";
        if (steps % 7 == 0) {
            const BlockSnapshot b = s.snapshot();
            for (size_t i = 0; i < b.owner.size(); ++i) {
                if (b.refcount[i] < 0) return "negative reference count in the snapshot";
                if (b.fill[i] < 0 || b.fill[i] > b.block_size) return "block filled past its size in the snapshot";
            }
            for (const Region& r : b.regions)
                if (r.stored > r.allocated || r.reserved > r.allocated || r.offset < 0 ||
                    r.offset + r.allocated > b.capacity_tokens)
                    return "region outside the arena or overfilled";
        }
    }
    if (std::string e = s.check_invariants(); !e.empty()) return "at the end: " + e;
    const SimResult r = s.result();
    const Summary& m = r.summary;
    if (m.requests != static_cast<int64_t>(reqs.size())) return "request count differs from the workload";
    if (m.finished + m.refused != m.requests) return "finished + refused != requests";
    for (int64_t v : {m.finished, m.refused, m.truncated, m.preemptions, m.swapped_out, m.recomputed_tokens, m.steps,
                      m.capacity_tokens, m.num_blocks, m.max_running, m.max_waiting, m.max_blocks_saved, m.cow_copies,
                      m.prefix_hit_tokens, m.prefix_query_tokens, m.prompt_tokens, m.generated_tokens})
        if (v < 0) return "negative count in the summary";
    if (m.prefix_hit_tokens > m.prefix_query_tokens) return "more prefix hits than queried tokens";
    if (m.max_running > c.max_num_seqs) return "more requests running than max-num-seqs";
    // A figure with no sample is kNotMeasured (NaN), never a number: the time-weighted ones when no time passed,
    // the shares of used memory when none was used, the finish-based ones exactly when nothing finished.
    const bool timed = sim::measured(m.memory.free);
    if (m.steps > 0 && timed && !detail::split_ok(m.memory)) return "summary memory split does not sum to 1";
    auto sound = [](double v) { return v >= 0 && std::isfinite(v); };
    if (m.finished == 0) {
        for (double v :
             {m.makespan_s, m.throughput_tokens_per_s, m.requests_per_s, m.ttft_mean_s, m.e2e_mean_s, m.tpot_mean_s})
            if (sim::measured(v)) return "a figure measured with no request finished";
    } else {
        if (!sound(m.makespan_s)) return "makespan negative or not finite";
        for (double v : {m.ttft_mean_s, m.e2e_mean_s})
            if (!sound(v)) return "negative or non-finite latency";
    }
    for (double v : {m.token_states_of_used, m.mean_running, m.mean_waiting, m.sharing_saved, m.throughput_tokens_per_s,
                     m.requests_per_s, m.tpot_mean_s})
        if (sim::measured(v) && !sound(v)) return "negative or non-finite summary value";
    if (timed && !(sound(m.mean_running) && sound(m.mean_waiting)))
        return "time passed but the queue means are not measured";
    auto ordered = [](double p50, double p90, double p99) {
        return sim::measured(p50) ? p50 <= p90 && p90 <= p99 : !sim::measured(p90) && !sim::measured(p99);
    };
    if (!(ordered(m.ttft_p50_s, m.ttft_p90_s, m.ttft_p99_s) && ordered(m.e2e_p50_s, m.e2e_p90_s, m.e2e_p99_s) &&
          ordered(m.tpot_p50_s, m.tpot_p90_s, m.tpot_p99_s)))
        return "percentiles out of order";
    int64_t finished = 0;
    for (const TimePoint& t : r.series) {
        if (!detail::split_ok(t.memory)) return "series memory split does not sum to 1";
        finished += t.finished;
    }
    if (finished != m.finished) return "series finished counts do not add up to the summary";
    if (r.snapshots.size() > static_cast<size_t>(c.max_snapshots)) return "more snapshots than max_snapshots";
    return "";
}

inline bool exercise_sim(const std::string& input) {
    return sim_check(input).empty();
}

}  // namespace kvb::fuzz
