// One paging simulation as both faces run it: `kvbudget simulate` and the page's
// Web Worker (through wasm/bindings.cpp) fill the same SimInputs, which check
// themselves once here; a SimSession then builds the workload and one Simulator per
// policy, runs them in chunks (the page reports progress between chunks), and gives
// the SimReport that src/report/sim_json.h writes as the one JSON of a simulation.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "budget/budget.h"
#include "model/model.h"
#include "sim/simulator.h"

namespace kvb {

// The settings of a simulation. JSON keys are these member names; the CLI flag of
// each is in sim_input_limits() or named in its comment. Empty optionals take the
// default the comment gives.
struct SimInputs {
    std::vector<std::string> policies = {"paged"};  // --policy: paged, max, pow2, oracle; "all" = the four
    // KV pool: kv_cache_memory, or what vLLM's budget leaves on the GPU.
    std::optional<int64_t> kv_cache_memory;  // --kv-cache-memory (the GPU then sets the time model only)
    std::string gpu = "a100-80gb";           // --gpu; "" = gpu_memory_bytes (time model: a100-80gb)
    int64_t gpu_memory_bytes = 0;
    double gpu_memory_utilization = 0;    // --gpu-memory-utilization; 0 = vLLM's default (the newest release's)
    std::string kv_cache_dtype = "auto";  // vLLM --kv-cache-dtype
    std::string weights = "auto";         // weight format
    int64_t params = 0;                   // exact parameter count (the hub's), 0 = count from the config
    // Scheduler and sampling.
    int64_t block_size = 16;
    std::optional<int64_t> max_model_len;           // default: the model's max_position_embeddings
    std::optional<int64_t> max_num_seqs;            // default: vLLM's for the GPU, 256 with kv_cache_memory
    std::optional<int64_t> max_num_batched_tokens;  // default: vLLM's for the GPU, 8192 with kv_cache_memory
    std::string preemption = "v0";                  // --preemption: v0 | recompute | swap
    int64_t swap_space_bytes = int64_t{4} << 30;    // --swap-space
    std::string sample_lengths = "independent";     // --sample-lengths: independent | same
    int64_t n = 1;
    int64_t beam = 1;
    bool prefix_caching = false;  // --prefix-caching (paged only)
    // Workload.
    std::string workload = "sharegpt";  // --workload: sharegpt | alpaca | azure-conv | azure-code | csv
    std::string trace;                  // the CSV text for azure-conv, azure-code and csv ...
    sim::TraceSource trace_source;      // ... or where to read it in pieces (not in the JSON form)
    std::string trace_name;             // for error messages; default the Azure file name or trace.csv
    std::optional<int64_t> requests;    // default 1000 for presets, the whole trace
    std::optional<double> rate;         // --rate: Poisson arrivals, requests/s; default batch / trace timestamps
    int64_t seed = 0;
    std::optional<int64_t> shared_prefix;   // tokens of a common system prompt ...
    std::optional<double> shared_fraction;  // ... on this fraction of the requests (default 1)
    // What is kept for the page.
    int64_t snapshots = 0;        // block-map snapshots kept per policy (0 = none)
    int64_t series_points = 200;  // time series length target
};

struct SimInputLimit {
    const char* name;  // JSON field of SimInputs
    const char* flag;  // the CLI flag that sets it
    int64_t min, max;
};
// Whole-number fields and their ranges (an absent optional is not checked); the
// page builds its number inputs from this table (catalog()'s sim_limits).
const std::vector<SimInputLimit>& sim_input_limits();
Result<bool> validate(const SimInputs& in);

// The block sizes vLLM's --block-size takes (session.cpp says which releases): the
// page's list (catalog()'s sim_block_sizes); validate() refuses the others.
const std::vector<int64_t>& sim_block_sizes();
const std::vector<std::string>& sim_workload_names();  // sharegpt, alpaca, azure-conv, azure-code, csv

// What a run is, resolved: echoed in the report.
struct SimRunInfo {
    std::string model;
    std::string workload;
    int64_t requests = 0;
    std::string arrivals;  // batch | poisson | trace
    double rate = 0;       // Poisson only
    int64_t seed = 0;
    int64_t shared_prefix = 0;
    double shared_fraction = 0;
    int64_t kv_cache_bytes = 0;
    int64_t kv_bytes_per_token = 0;
    std::string kv_cache_dtype;
    bool from_gpu = false;              // the pool is vLLM's budget on gpu_name
    std::string gpu_name;               // "" with kv_cache_memory
    double gpu_memory_utilization = 0;  // from_gpu
    int64_t weights_bytes = 0;
    int64_t runtime_bytes = 0;  // from_gpu: activations + non-torch + CUDA graphs
    std::string time_model_gpu;
    int64_t block_size = 0, max_model_len = 0, max_num_seqs = 0, max_num_batched_tokens = 0;
    int64_t n = 1, beam = 1;
    bool independent_sample_lengths = true;
    std::string preemption;
    int64_t swap_space_bytes = 0;
    bool prefix_caching = false;
    bool windowed_or_state_left_out = false;  // only the context-proportional KV is simulated
    std::vector<std::string> policy_names;
    std::vector<Message> notes;  // about the workload as read: sim_trace_unsorted
};

// `kvbudget simulate --json`: the run and one summary per policy (so far; final once done).
struct SimReport {
    SimRunInfo run;
    bool done = false;
    std::vector<sim::Summary> policies;
    std::vector<Message> conclusions;  // once done: sim/conclusions.h
};

struct SimProgress {
    bool done = false;
    double progress = 0;  // 0..1 over all policies
    int64_t policy_index = 0;
    std::string policy;  // "" once done
    double policy_progress = 0;
    int64_t steps = 0;  // of the current policy
    double time_s = 0;
};

class SimSession {
public:
    static Result<SimSession> create(const ModelSpec& m, const SimInputs& in);

    const SimRunInfo& run_info() const { return info_; }
    // Runs at most max_steps scheduler steps, moving on to the next policy when one finishes.
    Result<SimProgress> run(int64_t max_steps);
    Result<bool> run_to_end();
    bool done() const { return current_ >= sims_.size(); }
    SimProgress progress() const;
    SimReport report() const;
    const std::vector<sim::Simulator>& simulators() const { return sims_; }

private:
    SimRunInfo info_;
    std::vector<sim::Simulator> sims_;
    size_t current_ = 0;
};

}  // namespace kvb
