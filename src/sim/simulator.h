// The paging simulator: replays a workload through an iteration-level scheduler
// in the vLLM v1 manner and one KV allocator (paged blocks, or contiguous
// Orca-style reservations on a buddy allocator), and measures where the KV memory
// goes over time. Pure computation: no I/O, no exceptions across this API,
// deterministic for a given config and workload on every platform.
//
// Made to be driven in chunks (a Web Worker calls run(steps) repeatedly, reports
// progress() between calls and stops calling to cancel); every type here is a plain
// struct of numbers, strings and vectors so it binds directly with embind:
//
//   auto reqs = make_workload(spec);                  // or parse_trace_csv(text, name) as spec.trace
//   Simulator sim(config, reqs.value());              // config.policy: one run per policy
//   if (!sim.ok()) show(sim.error_message());
//   while (!sim.done()) { sim.run(20000); post(sim.progress()); }   // ~20 ms per chunk
//   SimResult r = sim.result();   // summary + downsampled series (+ snapshots if asked)
//   BlockSnapshot b = sim.snapshot();  // the block map now (call between chunks for a scrubber)
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "sim/latency.h"
#include "sim/workload.h"

namespace kvb::sim {

enum class Policy { Paged, Max, Pow2, Oracle };
// V0: vLLM v0, the paper's system: swap groups running several sequences to CPU
// memory, recompute single sequences. Recompute: vLLM v1, recompute only. Swap:
// swap everything while the swap space lasts.
enum class Preemption { V0, Recompute, Swap };
const char* preemption_name(Preemption p);  // "v0", "recompute", "swap"
bool parse_preemption(const std::string& s, Preemption* out);
enum class Overlong { Truncate, Refuse };

const char* policy_name(Policy p);  // "paged", "max", "pow2", "oracle"
bool parse_policy(const std::string& s, Policy* out);

struct SimConfig {
    Policy policy = Policy::Paged;
    int64_t kv_bytes_per_token = 0;  // all layers, one sequence (src/kv.h ideal_kv().bytes_per_token)
    int64_t kv_capacity_bytes = 0;   // the KV pool; paged: floor(capacity / (block_size * bytes_per_token)) blocks
    int32_t block_size = 16;         // tokens per block (paged)
    int32_t max_model_len = 2048;    // longest sequence (prompt + output); Max reserves this much
    int32_t max_num_seqs = 256;      // sequences running at once (a group of n samples counts n)
    int32_t max_num_batched_tokens = 8192;  // token budget per step (chunked prefill)
    int32_t n = 1;                          // parallel samples per request (share the prompt blocks)
    int32_t beam_width = 1;                 // beam search (beams share prompt and common history)
    // Beam search model: how many times, over a whole answer, a beam continues from
    // another beam, chosen uniformly, instead of its own (taking that beam's history,
    // copy-on-write); per step the probability is beam_switches / output tokens.
    // FITTED: the default reproduces the paper's beam savings (see simulator.cpp).
    double beam_switches = 9.0;
    bool prefix_caching = false;  // paged only
    Preemption preemption = Preemption::V0;
    int64_t swap_space_bytes = 4 * (int64_t{1} << 30);  // CPU swap space (vLLM v0's --swap-space default, 4 GiB)
    // n > 1: each sample draws its own output length (see simulator.cpp); false:
    // every sample has the request's length.
    bool independent_sample_lengths = true;
    Overlong overlong = Overlong::Truncate;  // prompt >= max_model_len is always refused
    uint64_t seed = 0;                       // beam choices (the workload has its own seed)
    LatencyModel latency;
    int32_t series_points = 200;       // time series is downsampled to between this and 2x this many points
    int64_t snapshot_every_steps = 0;  // >0: keep a block-table snapshot every this many steps
    int32_t max_snapshots = 100;       // thinned (every other dropped, interval doubled) beyond this
};

// Memory split of the whole KV capacity; the seven parts sum to 1. The categories
// are the paper's (Kwon et al. 2023, Fig. 2 and Sec. 3):
//  - token states: slots holding a computed token's K/V (a shared block counts once);
//  - reserved: slots set aside for tokens the request WILL generate (up to its real
//    final length), "reservation" in Fig. 2;
//  - internal fragmentation: slots held that will never hold a token (Max: 2048 minus
//    the real length; Pow2: the power-of-two output slack; paged: the unfillable
//    rest of a last block);
//  - external fragmentation "& others": buddy-block rounding past what the policy
//    asked for, plus free memory the next waiting request cannot be placed in;
//  - cached (prefix caching) and free; the null block (paged: block 0, reserved by
//    vLLM, never handed out) is reported apart, not as waste.
struct MemorySplit {
    double token_states = 0;
    double reserved = 0;
    double internal_fragmentation = 0;
    double external_fragmentation = 0;
    double cached = 0;  // free blocks still holding a reusable prefix (prefix caching)
    double free = 0;
    double null_block = 0;
};

struct TimePoint {
    double time_s = 0;  // start of the bucket
    double duration_s = 0;
    MemorySplit memory;        // time-weighted over the bucket
    double running = 0;        // requests, time-weighted mean
    double waiting = 0;        // requests waiting (incl. preempted), time-weighted mean
    double sharing_saved = 0;  // fraction of logical blocks saved by sharing
    int64_t preemptions = 0;   // in this bucket
    int64_t finished = 0;      // in this bucket
};

// A Summary figure with no sample to measure it (a latency when no request finished,
// a share of the memory in use when none was ever used, a mean over a run in which no
// time passed): NaN, which the JSON writes as null and the faces show as not measured.
// Never 0, which reads as the best a policy can do.
constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();
inline bool measured(double v) {
    return !std::isnan(v);
}

struct Summary {
    std::string policy;
    int64_t requests = 0, finished = 0, refused = 0, truncated = 0;
    // Of the refused, those that even alone needed more KV slots than the pool holds
    // under this policy (its reservation: Max the whole max-model-len per sequence);
    // the rest had prompts of max-model-len tokens or more, refused by every policy.
    int64_t refused_no_room = 0;
    int64_t preemptions = 0, swapped_out = 0, recomputed_tokens = 0;
    // Preemptions that should have swapped (vLLM v0: a group of several sequences)
    // but found the CPU swap space full and recomputed instead (v0 would abort).
    int64_t swap_fallbacks = 0;
    int64_t steps = 0;
    double makespan_s = 0;        // time of the last finish (kNotMeasured: none finished)
    int64_t capacity_tokens = 0;  // token slots in the KV pool (paged: blocks * block_size)
    int64_t num_blocks = 0;       // paged, including the null block
    MemorySplit memory;           // time-weighted over [0, makespan]; kNotMeasured when no time passed
    // The paper's Fig. 2 bar: the same split as shares of the memory in use
    // (capacity - free - cached - null block), time-weighted, every step. Its
    // token_states equals token_states_of_used; cached, free and null_block are 0.
    // Its four shares are kNotMeasured when no memory was ever in use.
    MemorySplit of_used;
    double token_states_of_used = 0;
    double mean_running = 0, mean_waiting = 0;  // kNotMeasured (and sharing_saved) when no time passed
    int64_t max_running = 0, max_waiting = 0;
    double sharing_saved = 0;  // time-weighted saved / logical blocks (paged)
    int64_t max_blocks_saved = 0;
    int64_t cow_copies = 0;
    int64_t prefix_hit_tokens = 0, prefix_query_tokens = 0;
    int64_t prompt_tokens = 0;           // of finished requests
    int64_t generated_tokens = 0;        // all sequences of finished requests
    double throughput_tokens_per_s = 0;  // generated tokens / makespan (kNotMeasured: none finished)
    double requests_per_s = 0;
    // Latencies: kNotMeasured without a sample (no request finished; TPOT: none with 2 tokens).
    double ttft_mean_s = 0, ttft_p50_s = 0, ttft_p90_s = 0, ttft_p99_s = 0;
    double tpot_mean_s = 0, tpot_p50_s = 0, tpot_p90_s = 0, tpot_p99_s = 0;  // requests with >= 2 output tokens
    double e2e_mean_s = 0, e2e_p50_s = 0, e2e_p90_s = 0, e2e_p99_s = 0;
    // The paper's serving metric (Kwon et al. 2023, Sec. 6.1): the mean over finished
    // requests of end-to-end latency divided by output length (the longest sample's).
    double normalized_latency_s = 0;
    // Whether a queue built up while requests arrived (sim/conclusions.cpp judges it):
    // the first and the last quarter of the requests by arrival (at least one each),
    // their finished requests' mean arrival time and mean time to first token, and the
    // requests waiting to start or resume when the last request arrived.
    int64_t early_finished = 0, late_finished = 0;
    double early_arrival_mean_s = 0, late_arrival_mean_s = 0;  // kNotMeasured when that quarter had none
    double early_ttft_mean_s = 0, late_ttft_mean_s = 0;
    int64_t waiting_at_last_arrival = 0;
};

// One contiguous reservation (Max/Pow2/Oracle).
struct Region {
    int32_t request = 0, seq = 0;
    int64_t offset = 0;     // slot offset in the arena
    int64_t allocated = 0;  // buddy block (power of two), held whole (Sec. 6.5)
    int64_t reserved = 0;   // what the policy asked for
    int64_t length = 0;     // the request's real final length
    int64_t stored = 0;     // tokens computed so far
};

// The block map at one moment.
struct BlockSnapshot {
    int64_t step = 0;
    double time_s = 0;
    int32_t block_size = 0;
    int64_t capacity_tokens = 0;
    // Paged: one entry per block. owner: request id of the first holder, or
    // -1 free, -2 free but cached, -3 the null block.
    std::vector<int32_t> owner, refcount, fill;
    std::vector<Region> regions;  // contiguous policies
    // A paged map taken cheaply during a run (the simulator's owner tracking): owner is
    // whole, refcount and fill are empty and follow from owner and last_fill, the
    // (block, fill) pairs of the running sequences' last blocks. The simulator
    // completes it before anyone reads it (Simulator::result, snapshots()).
    bool captured = false;
    std::vector<int32_t> last_fill;
};

struct SimResult {
    Summary summary;
    std::vector<TimePoint> series;
    std::vector<BlockSnapshot> snapshots;
};

class Simulator {
public:
    // Validates and prepares; check ok()/error() before running.
    Simulator(const SimConfig& config, const std::vector<Request>& requests);
    // Draws the requests as they arrive: memory follows the requests in flight.
    Simulator(const SimConfig& config, RequestStream requests);
    // The config checked as the others check it (ok(), error()), with no pool made
    // and nothing to run: what a face asks before it reads a trace.
    struct CheckOnly {};
    Simulator(const SimConfig& config, CheckOnly);
    ~Simulator();
    Simulator(Simulator&&) noexcept;
    Simulator& operator=(Simulator&&) noexcept;

    bool ok() const;
    const Error& error() const;         // also set if the run hits an internal inconsistency
    std::string error_message() const;  // "" when ok (convenient for bindings)

    // Runs at most max_steps scheduler iterations (idle jumps to the next arrival
    // count as one); returns how many ran. Cheap to call repeatedly.
    int64_t run(int64_t max_steps);
    bool done() const;
    double progress() const;  // finished or refused requests / all requests
    int64_t steps() const;
    double now_s() const;
    // The latest arrival drawn so far: once done(), the workload's arrival span.
    double last_arrival_s() const;
    // Requests held now (arrived and not yet done, plus done ones behind the oldest
    // unfinished), and the most held at once: what the simulator's memory follows.
    int64_t requests_held() const;
    int64_t max_requests_held() const;

    Summary summary() const;  // so far; final once done()
    std::vector<TimePoint> series() const;
    const std::vector<BlockSnapshot>& snapshots() const;  // kept so far (a reference: they are large)
    BlockSnapshot snapshot() const;                       // current block map
    SimResult result() const;

    // Empty when every invariant holds (O(pool) — for tests): blocks free,
    // cached or owned and never two at once, reference counts match the block
    // tables, token states within allocated slots, buddy bookkeeping consistent.
    std::string check_invariants() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Convenience: run to completion.
Result<SimResult> simulate(const SimConfig& config, const std::vector<Request>& requests);

}  // namespace kvb::sim
