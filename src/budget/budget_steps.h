// Internal to src/budget: the steps compute_budget runs, one per engine, and the
// helpers they share. Not part of the core's API.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/function_ref.h"
#include "budget/budget.h"
#include "engines/llamacpp.h"

namespace kvb::budget_steps {

// What every engine step reads: the model, the request, and what the shared steps resolved.
struct Ctx {
    const ModelSpec& m;
    const BudgetInputs& in;
    const Gpu* gpu;  // nullptr for a custom memory size
    const WeightFormat& fmt;
    const ModelSpec* draft = nullptr;  // the drafter's config for in.speculative_config (vLLM)
    // in.spec_type, parsed once by compute_budget (llama.cpp; None for the other engines).
    LlamaSpecType llama_spec = LlamaSpecType::None;
};

Result<bool> vllm(const Ctx& c, BudgetResult& r);
Result<bool> llamacpp(const Ctx& c, BudgetResult& r);
Result<bool> transformers(const Ctx& c, BudgetResult& r);

// Largest x in [lo, hi] with pred(x) true, given pred(lo) is true and pred is monotone
// (true then false): every "longest context" / "most sequences" search.
template <class Pred>
int64_t largest_true(int64_t lo, int64_t hi, Pred pred) {
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (pred(mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// Doubling then bisection: the most sequences in [1, cap] for which fits(n) holds, given fits(1).
template <class Pred>
int64_t most_that_fit(int64_t cap, Pred fits) {
    int64_t hi = 1;
    while (hi < cap && fits(hi * 2)) hi *= 2;
    return largest_true(1, std::min(hi * 2, cap), fits);
}

// Past the model's limit (a context that fits at `limit`), how far memory alone would go:
// doubling then bisection up to 2^24 tokens, in steps of `step` tokens.
template <class Pred>
int64_t physical_max(int64_t limit, int64_t step, Pred fits) {
    constexpr int64_t kCap = int64_t(1) << 24;
    if (limit >= kCap) return limit;
    int64_t lo = std::max<int64_t>(1, limit / step), hi = lo;
    while (hi * step < kCap && fits(std::min(kCap, hi * 2 * step))) hi *= 2;
    if (hi * step >= kCap) return kCap;
    const int64_t top = std::min(hi * 2, kCap / step);
    return std::max(limit, largest_true(lo, top, [&](int64_t x) { return x == lo || fits(x * step); }) * step);
}
// llama.cpp -ngl: each repeating layer's weight bytes, the input layer (always on the CPU)
// and the output layer (the first on the GPU). budget_offload.cpp.
struct LayerWeights {
    std::vector<int64_t> layers;  // by layer index, m.layers.size() entries
    int64_t input = 0, output = 0;
    bool estimated = false;                  // split by parameter shares (a config, not a GGUF's tensors)
    std::vector<GgufWeights::BlockFfn> ffn;  // a GGUF's FFN tensors by layer (empty for a config)
};
// Which FFN tensors of a layer --fit moves to system RAM (common_layer_fraction_t in
// common/fit.cpp): Attn = every FFN matrix, Up = all but the up projections, Gate = only
// the down projections, Moe = the routed experts.
enum class FitFraction { Attn = 1, Up = 2, Gate = 3, Moe = 4 };
// One device's share as common_params_fit_impl counts it (its ngl_t): `n_layer` slots of the
// n_layer + 1 (the output layer is slot n_layer), the last `n_part` of them "partial": the
// first partial one loses the `overflow` fraction, the others their routed experts.
struct MoeSplit {
    int64_t n_layer = 0, n_part = 0;
    FitFraction overflow = FitFraction::Moe;
};
// llama.cpp creates a GGUF's nextn (MTP) layers' tensors with TENSOR_SKIP unless it runs them as an MTP
// draft: the loader prints "model has unused tensor ... -- ignoring", takes their bytes off size_data and
// allocates nothing for them. `mtp_draft`: --spec-type draft-mtp, which loads them.
int64_t llamacpp_unloaded_nextn_bytes(const ModelSpec& m, bool mtp_draft);
Result<LayerWeights> llamacpp_layer_weights(const ModelSpec& m, const WeightBytes& w, bool mtp_draft = false);
struct Placement {
    int64_t n_gpu_layers = 0;  // clamped to [0, n_layer + 1]
    bool output_on_gpu = false;
    int64_t gpu_weights = 0, cpu_weights = 0, gpu_kv = 0, cpu_kv = 0;  // all GPUs together
    // Routed experts' bytes in system RAM (the CPU layers' and what --fit moved) and in all: a decode step reads
    // only the routed share of them.
    int64_t cpu_expert_weights = 0, expert_weights = 0;
};
// The KV bytes another context keeps for the model's layers i.. (an MTP draft context caches the
// target's own nextn layers, on their devices); 0 past them.
using KvFrom = std::function<Result<int64_t>(int64_t)>;
// `kv_total`: the whole cache at `o` (every layer, a draft context's too).
// `moe`: FFN tensors of GPU layers kept in system RAM by --fit's overrides (ngl = moe->n_layer).
// `draft_kv_from`: an MTP draft context's cache of layers i.. (empty: none).
Result<Placement> llamacpp_place(const ModelSpec& m, const LayerWeights& lw, const LlamaOptions& o, int64_t ngl,
                                 bool kv_offload, int64_t kv_total, const MoeSplit* moe = nullptr,
                                 const KvFrom& draft_kv_from = {});

// llama.cpp's automatic fitting for one GPU (budget_fit.cpp). `used(n_ctx, ngl)`: the bytes
// that GPU holds (weights, KV and compute buffer of the placement) at n_ctx cells.
struct FitArgs {
    int64_t free_bytes = 0, target_bytes = 0;
    int64_t n_ctx_user = 0;   // -c as given (all sequences); 0 = none
    int64_t n_ctx_train = 0;  // the most fitting starts from (all sequences)
    int64_t n_ctx_min = 0;    // -fitc x streams (all sequences)
    int64_t ngl_user = -1;    // -ngl as given; -1 = none
    int64_t n_layer = 0;
    int64_t seqs = 1;
    int64_t n_devices = 1;
    bool moe = false;
    int64_t total_bytes = 0;  // per device, as the backend reports it (several devices' lines)
    // Several devices with their own memory: free and total bytes of each (empty: every
    // device has free_bytes and total_bytes).
    std::vector<int64_t> device_free, device_total;
};
// The fit's callbacks are FunctionRefs (src/base/function_ref.h): called only during
// llamacpp_fit, so the caller's lambdas must live until it returns.
// `used(n_ctx, n_gpu_layers)`: the GPU's bytes.
using FitUse = FunctionRef<int64_t(int64_t, int64_t)>;
// `used_moe(n_ctx, split)`: the GPU's bytes with a MoE split (empty: a MoE's layer split is
// not predicted).
using MoeUse = FunctionRef<int64_t(int64_t, const MoeSplit&)>;
// One device's bytes as get_memory_for_layers reports them.
struct DeviceMem {
    int64_t model = 0, total = 0;  // weights; weights + KV + compute buffer
};
// Several devices as common_params_fit_impl's get_memory_for_layers measures them: each
// device's share (its ngl_t, device 0 holding the lowest slots), and for each device whether
// the first partial layer's fraction goes to the next device instead of system RAM
// (overflow_bufts); returns every device's weights and total.
using DevicesUse = FunctionRef<std::vector<DeviceMem>(int64_t, const std::vector<MoeSplit>&, const std::vector<char>&)>;
LlamaFit llamacpp_fit(const FitArgs& a, FitUse used, MoeUse used_moe = {}, DevicesUse devices_use = {});
// llama_model::load_tensors' default split over `n` devices with equal free memory: slots
// per device (the last one holds the output layer).
std::vector<int64_t> llamacpp_even_split(int64_t n_devices, int64_t ngl);
// The same split with each device's share its free memory ("default split, by free memory").
std::vector<int64_t> llamacpp_free_split(const std::vector<int64_t>& free_bytes, int64_t ngl);
// One device's slots [first, first + s.n_layer) of the n_layer + 1 (slot n_layer: the output
// layer), the last s.n_part partial: its weights, the KV of its layers, and the bytes of the
// first partial layer's fraction (`spill`, moved off the device; the caller says where).
struct RangeUse {
    int64_t weights = 0, kv = 0, spill = 0;
};
// `kv_suffix(i)`: the KV bytes of layers i.. (i = n_layer: none).
RangeUse llamacpp_range(const ModelSpec& m, const LayerWeights& lw, int64_t first, const MoeSplit& s,
                        FunctionRef<int64_t(int64_t)> kv_suffix);

std::string fraction_text(double v);  // 0.9 -> "0.9", as a flag value

// The checkpoint's float dtype as vLLM reads it: float32 for a config that names none (vLLM then
// reads the Hub's safetensors dtype, float32 its fallback), else bfloat16 or float16.
std::string checkpoint_dtype(const ModelSpec& m);
// The dtype vLLM's --dtype auto serves an unquantized checkpoint in on `gpu` (nullptr: a custom
// size, taken as a current GPU): config/model.py _resolve_auto_dtype over the platform's
// supported_dtypes (platforms/cuda.py: bfloat16, float16, float32 from compute capability 8.0;
// float16, float32 on 6.x-7.x; Apple's mps.py all three; ROCm's taken as bfloat16 first, not
// read from its source), less float16 for the model types
// vLLM refuses in it (_FLOAT16_NOT_SUPPORTED_MODELS). float32 is cast to the first supported
// dtype, and so is a dtype the GPU lacks (bfloat16 on a T4).
std::string vllm_auto_dtype(const ModelSpec& m, const Gpu* gpu);
// One GPU's parts from what the engine step resolved, with `kv_bytes` the KV that GPU holds
// for the asked context and requests; total and free summed.
void fill_per_gpu(BudgetResult& r, int64_t kv_bytes);
// The same with the GPU's own weights, activation and overhead (+ CUDA graphs): a vLLM pipeline stage's.
void fill_per_gpu(BudgetResult& r, int64_t kv_bytes, int64_t weights, int64_t activation, int64_t overhead);

}  // namespace kvb::budget_steps
