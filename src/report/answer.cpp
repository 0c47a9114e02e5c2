#include "report/answer.h"

#include <optional>

#include "base/arith.h"
#include "base/units.h"
#include "engines/vllm.h"
#include "model/dtype.h"
#include "model/rope.h"

namespace kvb {

namespace {

// All `seqs` requests of the context on the GPU(s), nothing in system RAM.
bool all_on_gpu(const BudgetResult& b) {
    return b.fits && b.all_seqs_fit && !b.fits_offload;
}

// An advice and the inputs it was computed with.
struct Advice {
    Message note;
    BudgetInputs inputs;
};

// The same question with an 8-bit KV cache, when the asked one is 16 or 32 bits: vLLM's fp8, or
// llama.cpp's q8_0 for K and V. Only a change of verdict is worth saying on the first screen.
std::optional<Advice> kv_advice(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft,
                                const BudgetResult& b) {
    if (all_on_gpu(b) || in.engine == BudgetEngine::Transformers) return std::nullopt;
    const bool vllm = in.engine == BudgetEngine::Vllm;
    const std::string v = b.kv_cache_dtype_v.empty() ? b.kv_cache_dtype : b.kv_cache_dtype_v;
    const bool wide =
        vllm ? dtype_size(b.kv_cache_dtype) >= 2 : dtype_size(b.kv_cache_dtype) >= 2 && dtype_size(v) >= 2;
    if (!wide) return std::nullopt;
    BudgetInputs alt = in;
    alt.kv_cache_dtype = vllm ? "fp8" : "q8_0";
    alt.kv_cache_dtype_v = vllm ? "" : "q8_0";
    auto r = compute_budget(m, alt, draft);
    if (!r || !all_on_gpu(r.value())) return std::nullopt;
    return Advice{note(vllm ? "advice_vllm_fp8_kv" : "advice_llamacpp_q8_kv", {{"max", with_commas(r->max_context)}}),
                  alt};
}

// vLLM refused at start-up for fp8 blocks that tensor parallelism splits off the grid: in an expert, or (experts_only
// false) in any layer.
bool fp8_block_refused(const BudgetResult& b, bool experts_only) {
    const std::string& why = b.verdict_reason.code;
    return b.startup_refused && (why == "vllm_fp8_moe_block_n" || why == "vllm_fp8_moe_block_k" ||
                                 (!experts_only && (why == "vllm_fp8_block_n" || why == "vllm_fp8_block_k")));
}

// The TP x PP advice's code when vLLM refused at start-up for layers that tensor parallelism splits off their
// quantization grid (AWQ groups, compressed-tensors WNA16 groups, fp8 blocks), or nullptr.
const char* tp_pp_advice_code(const BudgetResult& b) {
    if (!b.startup_refused) return nullptr;
    const std::string& why = b.verdict_reason.code;
    if (why == "vllm_awq_group") return "advice_vllm_tp_pp_awq";
    if (why == "vllm_ct_wna16_group") return "advice_vllm_tp_pp_wna16";
    return fp8_block_refused(b, false) ? "advice_vllm_tp_pp" : nullptr;
}

// vLLM stopped by fp8 expert blocks that tensor parallelism splits: the same GPUs with --enable-expert-parallel,
// which keeps each expert whole, when that starts and fits.
std::optional<Advice> ep_advice(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft,
                                const BudgetResult& b) {
    if (in.engine != BudgetEngine::Vllm || in.expert_parallel || !fp8_block_refused(b, true)) return std::nullopt;
    BudgetInputs alt = in;
    alt.expert_parallel = true;
    auto r = compute_budget(m, alt, draft);
    if (!r || r->ep <= 1 || !all_on_gpu(r.value())) return std::nullopt;
    return Advice{note("advice_vllm_ep", {{"max", with_commas(r->max_context)}}), alt};
}

// vLLM stopped by layers that tensor parallelism splits off their quantization grid (fp8 blocks, AWQ or WNA16 groups):
// the same GPUs as fewer tensor-parallel ranks times pipeline stages (vLLM's world size is their product), the largest
// TP that starts and fits. Pipeline stages split by layers, so every rank's share of a linear stays whole blocks or
// groups at the smaller TP.
std::optional<Advice> tp_pp_advice(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft,
                                   const BudgetResult& b) {
    const char* code = tp_pp_advice_code(b);
    if (in.engine != BudgetEngine::Vllm || !code) return std::nullopt;
    const int64_t world = b.tp * b.pp;
    for (int64_t tp = b.tp / 2; tp >= 1; tp /= 2) {
        if (world % tp != 0) continue;
        BudgetInputs alt = in;
        alt.tensor_parallel_size = tp;
        alt.pipeline_parallel_size = world / tp;
        auto r = compute_budget(m, alt, draft);
        if (!r || r->startup_refused) continue;  // more stages than layers, or blocks still off the grid
        if (!all_on_gpu(r.value())) return std::nullopt;
        return Advice{note(code, {{"tp", std::to_string(tp)},
                                  {"pp", std::to_string(world / tp)},
                                  {"max", with_commas(r->max_context)}}),
                      alt};
    }
    return std::nullopt;
}

// vLLM stopped at an architecture the release dropped: the release its registry names as the last to serve it.
std::optional<Advice> release_advice(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft,
                                     const BudgetResult& b) {
    if (in.engine != BudgetEngine::Vllm || b.verdict_reason.code != "vllm_arch_dropped") return std::nullopt;
    BudgetInputs alt = in;
    alt.engine_version = b.verdict_reason.param("until");
    auto r = compute_budget(m, alt, draft);
    if (!r || r->startup_refused || !all_on_gpu(r.value())) return std::nullopt;
    return Advice{note("advice_vllm_release", {{"version", alt.engine_version}, {"max", with_commas(r->max_context)}}),
                  alt};
}

}  // namespace

Result<Answer> compute_answer(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft) {
    if (auto v = validate(in); !v) return v.error();
    Answer a;
    a.inputs = in;
    a.rope_offer = documented_rope_scaling(m);
    auto budget = compute_budget(m, in, draft);
    if (budget) {
        a.budget = std::move(budget.value());
        std::optional<Advice> advice = release_advice(m, in, draft, *a.budget);
        if (!advice) advice = ep_advice(m, in, draft, *a.budget);
        if (!advice) advice = tp_pp_advice(m, in, draft, *a.budget);
        if (!advice) advice = kv_advice(m, in, draft, *a.budget);
        if (advice) {
            a.advice = std::move(advice->note);
            a.advice_inputs = std::move(advice->inputs);
        }
    } else {
        a.refusal = budget.error();
    }

    KvReportInputs k;
    k.engine = to_string(in.engine);
    k.context = a.budget ? a.budget->context : in.context;
    k.seqs = in.seqs;
    if (in.engine == BudgetEngine::LlamaCpp) {
        k.cache_type_k = in.kv_cache_dtype.empty() ? "f16" : in.kv_cache_dtype;
        k.cache_type_v = in.kv_cache_dtype_v.empty() ? k.cache_type_k : in.kv_cache_dtype_v;
    } else {
        k.kv_dtype = in.kv_cache_dtype.empty() ? "auto" : in.kv_cache_dtype;
        if (in.engine == BudgetEngine::Vllm) k.engine_version = in.engine_version;
        // vLLM's auto is the dtype it serves the model in on this GPU, which the budget resolved
        // (float32 for Gemma 3 on a T4): the report's bytes per token are the pool's.
        if (in.engine == BudgetEngine::Vllm && k.kv_dtype == "auto" && a.budget)
            k.served_dtype = a.budget->kv_cache_dtype;
    }
    k.weights_bytes = a.budget ? a.budget->weights.all_bytes() : 0;
    k.model_max = a.budget ? a.budget->model_max_len : context_limits(m).max_len;
    // vLLM's pool holds the drafter's layers too: "KV per token" is what one more token takes of it.
    std::optional<ModelSpec> with_drafter;
    if (in.engine == BudgetEngine::Vllm && !in.speculative_config.empty())
        if (auto sc = parse_vllm_speculative(in.speculative_config))
            if (auto w = vllm_with_drafter(m, sc.value(), draft)) with_drafter = std::move(w.value());
    auto kv = compute_kv_report(with_drafter ? *with_drafter : m, k);
    if (!kv) return kv.error();
    a.kv = std::move(kv.value());

    a.metrics.kv_bytes_per_token = a.kv.ideal.bytes_per_token;
    // What the engine lays out for the asked sequences, as the bar and its start-up lines say; the
    // formula's (kv.bytes_total, the chart's curve) when there is no budget.
    a.metrics.kv_bytes_total = a.budget ? a.budget->kv_total_bytes : a.kv.bytes_total;
    if (a.budget) {
        const BudgetResult& b = *a.budget;
        a.chart_capacity_bytes = sat_mul(b.gpu_total_bytes, b.gpu_count);
        a.metrics.weights_bytes = b.weights.all_bytes();
        a.metrics.total_bytes = b.per_gpu.total_bytes;
        a.metrics.max_context = b.max_context;
        a.metrics.max_context_physical = b.max_context_physical;
        a.metrics.max_concurrency = b.max_concurrency;
    }
    return a;
}

}  // namespace kvb
