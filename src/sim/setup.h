// From a model and serving settings to the simulator's inputs: the one way both the
// `simulate` command and the page do it, so the same settings give the same run.
// (src/sim/ itself knows nothing of models, GPUs or budgets; this file bridges them.)
#pragma once
#include <cstdint>
#include <string>

#include "budget/budget.h"
#include "budget/gpus.h"
#include "kv/kv.h"
#include "model/model.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace kvb {

struct SimSetupInputs {
    // KV pool: an explicit size, or what the vLLM budget leaves on the GPU.
    int64_t kv_cache_memory = 0;        // > 0: use this, no budget
    std::string gpu = "a100-80gb";      // catalog id: the budget's GPU and the time model's
    int64_t gpu_memory_bytes = 0;       // custom size when gpu is "" (time model: A100-80GB)
    double gpu_memory_utilization = 0;  // 0 = vLLM's default (the newest release's, VllmRelease)
    std::string kv_dtype = "auto";      // vLLM --kv-cache-dtype
    std::string weights = "auto";       // weight format (see weight_format)
    int64_t params = 0;                 // exact parameter count, 0 = count from the config
    // Scheduler and sampling.
    int64_t block_size = 16;
    int64_t max_model_len = 0;           // 0 = the model's max_position_embeddings
    int64_t max_num_seqs = 0;            // 0 = 256, or the budget's default for the GPU
    int64_t max_num_batched_tokens = 0;  // 0 = 8192, or the budget's default for the GPU
    int64_t n = 1;
    int64_t beam = 1;
    sim::Preemption preemption = sim::Preemption::V0;   // v0 | recompute (v1) | swap
    int64_t swap_space_bytes = 4 * (int64_t{1} << 30);  // vLLM v0 --swap-space (4 GiB)
    bool independent_sample_lengths = true;             // n > 1: samples draw their own lengths
    uint64_t seed = 0;
};

struct SimSetup {
    sim::SimConfig config;  // policy and prefix caching are set per run by the caller
    IdealKv ideal;          // only the context-proportional part is simulated
    std::string kv_dtype;   // resolved name
    const Gpu* time_gpu = nullptr;
    bool from_budget = false;
    BudgetResult budget;  // when from_budget
    int64_t weights_bytes = 0;
};

Result<SimSetup> sim_setup(const ModelSpec& m, const SimSetupInputs& in);

// The workload by name: "sharegpt" / "alpaca" presets (requests: 0 = 1000), or a trace
// in Azure CSV format given as text (requests: 0 = all). rate > 0 makes arrivals Poisson.
struct WorkloadInputs {
    std::string preset = "sharegpt";  // sharegpt | alpaca | trace
    std::string trace_text;
    sim::TraceSource trace_source;  // instead of trace_text: read in pieces, never held whole
    std::string trace_name;         // for error messages
    int64_t requests = 0;
    double rate = 0;
    int64_t shared_prefix = 0;
    double shared_fraction = 1.0;
    uint64_t seed = 0;
};
Result<sim::WorkloadSpec> workload_spec(const WorkloadInputs& in);

}  // namespace kvb
