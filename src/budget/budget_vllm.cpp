// vLLM's budget (gpu_worker.determine_available_memory): requested = total x
// gpu_memory_utilization, minus weights, the profile run's activation peak, non-torch
// memory and (newer releases) CUDA graphs, is the KV pool of each rank; the engine
// then cuts it into blocks (engines/vllm_capacity.cpp).
#include <algorithm>
#include <optional>

#include "base/arith.h"
#include "base/function_ref.h"
#include "base/text.h"
#include "base/units.h"
#include "budget/budget_steps.h"
#include "engines/remote_code.h"
#include "kv/kv.h"
#include "model/dtype.h"
#include "model/quant.h"
#include "model/rope.h"
#include "model/weights.h"

namespace kvb::budget_steps {

std::string checkpoint_dtype(const ModelSpec& m) {
    if (dtype_size(m.dtype) == 4) return "float32";
    return lower(m.dtype) == "float16" || lower(m.dtype) == "fp16" || lower(m.dtype) == "half" ? "float16" : "bfloat16";
}

std::string vllm_auto_dtype(const ModelSpec& m, const Gpu* gpu) {
    const bool no_bf16 = gpu && gpu->vendor == "nvidia" && gpu->compute_capability > 0 && gpu->compute_capability < 80;
    bool fp16_ok = true;
    for (const char* t : {"gemma2", "gemma3", "gemma3_text", "glm4", "plamo2"})
        if (m.model_type == t) fp16_ok = false;
    const char* preferred = !no_bf16 ? "bfloat16" : fp16_ok ? "float16" : "float32";
    const std::string d = checkpoint_dtype(m);
    if (d == "float32") return preferred;
    if (d == "bfloat16" && no_bf16) return preferred;
    if (d == "float16" && !fp16_ok) return preferred;
    return d;
}

namespace {

// The dtype the weights' float format is served in; "" for a quantized format.
std::string served_float(const WeightFormat& f) {
    if (f.kind != WeightKind::Float) return "";
    return f.name == "fp32" ? "float32" : f.name == "fp16" ? "float16" : "bfloat16";
}

// The dtype vLLM runs the model in (weights, activations, the RoPE cache): the weights' float
// format, or dtype auto's for a quantized checkpoint.
std::string served_dtype(const Ctx& c) {
    const std::string s = served_float(c.fmt);
    return s.empty() ? vllm_auto_dtype(c.m, c.gpu) : s;
}

// The defaults `vllm serve` picks for this GPU in this release, and what the request raises.
void resolve_scheduler(const Ctx& c, const VllmRelease& rel, BudgetResult& r) {
    const bool a100 = c.gpu && c.gpu->id.rfind("a100", 0) == 0;
    r.max_num_batched_tokens = c.in.max_num_batched_tokens > 0 ? c.in.max_num_batched_tokens
                                                               : vllm_default_max_num_batched_tokens(
                                                                     r.gpu_total_bytes, a100, rel.batch_defaults_160);
    r.max_num_seqs_default = vllm_default_max_num_seqs(r.gpu_total_bytes, a100, rel.batch_defaults_160);
    // Serving `seqs` requests at once needs --max-num-seqs of at least that many.
    r.max_num_seqs = c.in.max_num_seqs > 0 ? c.in.max_num_seqs : std::max(r.max_num_seqs_default, c.in.seqs);
    if (r.max_num_seqs < c.in.seqs)
        r.notes.push_back(note("max_num_seqs_below_seqs",
                               {{"max_num_seqs", with_commas(r.max_num_seqs)}, {"seqs", with_commas(c.in.seqs)}}));
}

// The profile of every pipeline stage's workers: the same batch, the sampler on the last stage only,
// CUDA graphs of its own layers. r's single figures are the last stage's activation (the largest)
// and the CUDA graphs of the stage with the most layers.
Result<bool> resolve_overheads(const Ctx& c, const VllmRelease& rel, BudgetResult& r) {
    const BudgetInputs& in = c.in;
    r.activation_estimated = in.activation_bytes < 0;
    r.overhead_estimated = in.overhead_bytes < 0;
    // Before 0.20.0 vLLM sized the cache first and captured its graphs from what was left: none are subtracted.
    // On ROCm the same until 0.26.0 (gpu_worker.py profiled them on CUDA only).
    const bool rocm = c.gpu && c.gpu->vendor == "amd";
    const bool profiled = rel.cudagraph_profiling && (!rocm || rel.cudagraph_profiling_rocm);
    const bool graphs_counted = in.cudagraph_bytes >= 0 || profiled;
    r.cudagraph_estimated = in.cudagraph_bytes < 0 && !in.enforce_eager && graphs_counted;
    auto parts = vllm_pp_parts(static_cast<int64_t>(c.m.layers.size()), r.pp, in.pp_layer_partition);
    if (!parts) return parts.error();
    const int64_t seqs = std::min(r.max_num_seqs, r.max_num_batched_tokens);
    const int dtype_bytes = dtype_size(served_dtype(c));
    // current_platform.is_device_capability_family(100): B200, B300 capture up to 1,024 (0.28.0 on).
    const bool sm100 = c.gpu && c.gpu->vendor == "nvidia" && c.gpu->compute_capability / 10 == 10;
    const int64_t ceiling = sm100 && rel.cudagraph_max_1024_sm100 ? 1024 : 512;
    r.overhead_bytes = in.overhead_bytes >= 0 ? in.overhead_bytes : estimate_vllm_overhead_bytes(r.tp, r.pp);
    r.stages.clear();
    int64_t uncounted = 0;  // graphs an old release captures outside the pool it sized
    for (size_t s = 0; s < parts->size(); ++s) {
        VllmStage st;
        st.layers = (*parts)[s];
        const bool last = s + 1 == parts->size();
        st.activation_bytes = in.activation_bytes >= 0
                                  ? in.activation_bytes
                                  : estimate_vllm_activation_bytes(c.m, dtype_bytes, r.max_num_batched_tokens, seqs,
                                                                   r.tp, last, r.ep > 1);
        const int64_t estimate = estimate_vllm_cudagraph_bytes_for_layers(
            st.layers, r.max_num_seqs, r.max_num_batched_tokens, ceiling, rel.cudagraph_captures_max_tokens);
        const int64_t graphs = in.enforce_eager || !graphs_counted ? 0
                               : in.cudagraph_bytes >= 0           ? in.cudagraph_bytes
                                                                   : estimate;
        r.cudagraph_bytes = std::max(r.cudagraph_bytes, graphs);
        uncounted = std::max(uncounted, graphs_counted || in.enforce_eager ? 0 : estimate);
        st.overhead_bytes = sat_add(r.overhead_bytes, graphs);
        r.stages.push_back(st);
    }
    // Said, since the bar's use then stops short of what the GPU holds once the graphs are captured.
    if (uncounted > 0)
        r.notes.push_back(note(rocm ? "vllm_cudagraphs_uncounted_rocm" : "vllm_cudagraphs_uncounted",
                               {{"bytes", format_bytes(uncounted)}}));
    r.activation_bytes = r.stages.back().activation_bytes;
    return true;
}

// Bytes per layer summed per pipeline stage, the first `split` layers split as vLLM splits them (vllm_pp_parts,
// VLLM_PP_LAYER_PARTITION); layers past them (a drafter's) go to the last stage.
std::vector<int64_t> sum_by_stage(const Ctx& c, const BudgetResult& r, size_t split,
                                  const std::vector<int64_t>& per_layer) {
    std::vector<int64_t> out(r.stages.size(), 0);
    auto parts = vllm_pp_parts(static_cast<int64_t>(split), r.pp, c.in.pp_layer_partition);
    if (!parts) return out;
    size_t stage = 0;
    int64_t left = parts->empty() ? 0 : (*parts)[0];
    for (int64_t bytes : per_layer) {
        while (left == 0 && stage + 1 < parts->size()) left = (*parts)[++stage];
        if (left > 0) --left;
        if (stage < out.size()) out[stage] = sat_add(out[stage], bytes);
    }
    return out;
}

// With an NVFP4 cache each FlashInferImpl keeps an fp8 output buffer of max_num_batched_tokens x its query heads x
// head size (flashinfer.py `_nvfp4_fp8_out`, PR #40177 on): made while the model is built, so vLLM counts it with
// the weights. Per pipeline stage: the buffers of its attention layers (the drafter's on the last).
std::vector<int64_t> nvfp4_out_buffers(const Ctx& c, const BudgetResult& r, const ModelSpec& layers) {
    std::vector<int64_t> per_layer(layers.layers.size(), 0);
    for (size_t i = 0; i < layers.layers.size(); ++i) {
        const Layer& l = layers.layers[i];
        if (!head_attention(l.kind)) continue;
        const int64_t heads = (l.q_heads > 0 ? l.q_heads : layers.dims.num_attention_heads) / r.tp;
        per_layer[i] = sat_mul(sat_mul(r.max_num_batched_tokens, heads), l.k_head_dim);
    }
    return sum_by_stage(c, r, layers.layers.size() - size_t(layers.drafter_layers), per_layer);
}

// Nemotron-H's gate from 0.17.0 (VllmRelease::gate_linear) where GateLinear has a kernel for its bf16 weights (CUDA
// compute capability 9.0 or 10.x): left at the checkpoint's width, only its score correction bias in float32. A GPU
// given only by its memory is taken to have no such kernel (GateLinear's fallback).
bool router_gate_kernel(const Ctx& c, const VllmRelease& rel) {
    return lower(c.m.model_type) == "nemotron_h" && rel.gate_linear && c.gpu && c.gpu->vendor == "nvidia" &&
           (c.gpu->compute_capability == 90 || c.gpu->compute_capability / 10 == 10);
}

// Which parts of a MoE router the model class creates in float32 whatever the checkpoint's dtype, and the note that
// says so: the gate (with its bias); the bias alone where a router kernel reads the gate as it is (Nemotron-H); the
// bias alone by the class's own choice.
struct Fp32Router {
    bool gate = false;  // the gate's weights (one row an expert)
    bool bias = false;  // the score correction bias (one entry an expert)
    const char* note = "vllm_fp32_score_bias";
};

Fp32Router fp32_router(const Ctx& c, const VllmRelease& rel) {
    const std::string t = lower(c.m.model_type);
    if (((t == "glm4_moe" || t == "glm4v_moe" || t == "glm4v_moe_text") && rel.fp32_router_glm4_moe) ||
        (t == "ernie4_5_moe" && rel.fp32_router_ernie45) || t == "step3p5" || t == "mimo_v2_flash" || t == "mimo_v2" ||
        t == "minimax_m2")
        return {true, true, "vllm_fp32_router"};
    if (t == "nemotron_h")
        return router_gate_kernel(c, rel) ? Fp32Router{false, true, "vllm_fp32_router_bias"}
                                          : Fp32Router{true, true, "vllm_fp32_router"};
    // deepseek_v2.py's classes (DeepseekV3ForCausalLM serves Kimi K2, GlmMoeDsaForCausalLM subclasses it) keep the
    // gate in the model dtype; so does Laguna, whose bias has been float32 since vLLM first served it (laguna.py).
    if ((t == "deepseek_v3" || t == "deepseek_v32" || t == "kimi_k2" || t == "glm_moe_dsa") &&
        rel.fp32_score_bias_deepseek)
        return {false, true};
    if (t == "laguna") return {false, true};
    return {};
}

// MoE router (gate) weights and score correction biases that the model class creates in float32 (fp32_router):
// vLLM counts them in "Model loading took" at 4 bytes a parameter, the checkpoint's share at the served float width.
// Every tensor-parallel rank holds a whole copy (replicated linears). Per pipeline stage: its MoE layers' (a
// drafter's own gate is not counted).
std::vector<int64_t> fp32_router_bytes(const Ctx& c, const Fp32Router& fp32, const BudgetResult& r) {
    const ModelSpec& m = c.m;
    const int64_t widen = 4 - static_cast<int64_t>(c.fmt.float_bytes);
    const std::vector<int64_t> none(r.stages.size(), 0);
    if (!(fp32.gate || fp32.bias) || c.fmt.gguf || widen <= 0 || m.dims.num_experts <= 0) return none;
    auto pc = count_params(m);
    if (!pc) return none;
    std::vector<int64_t> per_layer(m.layers.size(), 0);
    // The gate (one row an expert; a shared expert's gate has one) and the vectors params.cpp marks as its own.
    for (const TensorGroup& g : pc->tensors) {
        const bool gate = fp32.gate && g.role == TensorRole::Router && g.rows == m.dims.num_experts;
        const bool bias = fp32.bias && g.router_vector && g.cols == m.dims.num_experts;
        if ((gate || bias) && g.layer >= 0 && size_t(g.layer) < per_layer.size())
            per_layer[size_t(g.layer)] = sat_add(per_layer[size_t(g.layer)], sat_mul(g.params(), widen));
    }
    return sum_by_stage(c, r, m.layers.size(), per_layer);
}

// Every (tp, pp) rank computes its own pool from its own weights and profile
// (determine_available_memory); ranks of one stage are alike. Returns each stage's pool;
// r.kv_pool_bytes is the smallest. `buffers`: what each stage's model builds beside its weights.
std::vector<int64_t> kv_pools(const Ctx& c, const VllmRelease& rel, BudgetResult& r,
                              const std::vector<int64_t>& buffers) {
    const int64_t rotary = vllm_rotary_cache_bytes(c.m, dtype_size(served_dtype(c)));
    // The vision encoder's own cache sits with the tower, on the first stage.
    const int64_t vision_rotary =
        rel.vision_rope_cache ? vllm_vision_rotary_cache_bytes(c.m, dtype_size(served_dtype(c))) : 0;
    if (r.weights.stage_bytes.empty()) r.weights.stage_bytes = {r.weights.per_gpu_bytes};
    std::vector<int64_t> pools;
    int64_t heaviest = 0;
    for (size_t s = 0; s < r.stages.size(); ++s) {
        VllmStage& st = r.stages[s];
        st.weights_bytes = sat_add(r.weights.stage_bytes[std::min(s, r.weights.stage_bytes.size() - 1)],
                                   s == 0 ? sat_add(rotary, vision_rotary) : rotary);
        if (s < buffers.size()) st.weights_bytes = sat_add(st.weights_bytes, buffers[s]);
        heaviest = std::max(heaviest, st.weights_bytes);
        // Saturating: an activation estimate of INT64_MAX (see estimates.cpp) must leave no pool, not wrap into one.
        st.kv_available_bytes =
            sat_sub(sat_sub(r.requested_bytes, st.weights_bytes), sat_add(st.activation_bytes, st.overhead_bytes));
        pools.push_back(st.kv_available_bytes);
    }
    r.weights_per_gpu_bytes = heaviest;
    r.kv_pool_bytes = *std::min_element(pools.begin(), pools.end());
    // Said aloud because it makes "weights per GPU" exceed the checkpoint's bytes at TP 1.
    if (rotary + vision_rotary > 0)
        r.notes.push_back(note("vllm_rope_cache", {{"bytes", format_bytes(sat_add(rotary, vision_rotary))}}));
    return pools;
}

// Each stage's blocks and what it allocates once the engine keeps the fewest; the used memory of each.
void fill_stages(BudgetResult& r) {
    const VllmCapacity& cap = r.capacity;
    for (size_t s = 0; s < r.stages.size(); ++s) {
        VllmStage& st = r.stages[s];
        st.num_blocks = s < cap.stage_num_blocks.size() ? cap.stage_num_blocks[s] : 0;
        st.kv_bytes = s < cap.stage_kv_bytes.size() ? cap.stage_kv_bytes[s] : 0;
        st.limiting = r.fits && static_cast<int64_t>(s) == cap.limiting_stage;
        st.used_bytes =
            sat_add(sat_add(st.weights_bytes, st.activation_bytes), sat_add(st.overhead_bytes, st.kv_bytes));
    }
}

// Longest context for `seqs` requests at once and most requests of `context` tokens,
// counted in whole blocks the pool holds (one is the null block) whether or not vLLM starts.
// Returns the longest context one request alone can be given (0: none).
int64_t answers(const ModelSpec& m, BudgetResult& r, const std::vector<int64_t>& pools) {
    const VllmLayout& L = r.capacity.layout;
    const int64_t nb = L.groups.empty() ? 0 : vllm_num_blocks(L, pools);
    const int64_t usable = nb > 0 ? nb - 1 : 0;
    const int64_t limit = m.max_position_embeddings > 0 ? r.model_max_len : (int64_t(1) << 24);
    auto fits_ctx = [&](int64_t len) {
        const int64_t b = vllm_request_blocks(L, len);
        return b > 0 && b <= usable / r.seqs;
    };
    if (L.groups.empty()) {
        r.max_context = limit;
        r.max_context_capped = true;
    } else if (usable > 0 && fits_ctx(1)) {
        r.max_context_capped = fits_ctx(limit);
        r.max_context = r.max_context_capped ? limit : largest_true(1, limit, fits_ctx);
    }
    r.max_context_physical = r.max_context;
    if (r.max_context_capped && !L.groups.empty()) r.max_context_physical = physical_max(limit, 1, fits_ctx);
    const int64_t per_req = L.groups.empty() ? 0 : vllm_request_blocks(L, r.context);
    r.max_concurrency = per_req > 0 ? usable / per_req : 0;
    r.all_seqs_fit = r.fits && per_req > 0 && r.seqs <= r.max_concurrency && r.seqs <= r.max_num_seqs;
    if (L.groups.empty() || usable <= 0) return 0;
    // The longest single request the pool can hold. vLLM's own figures (the "GPU KV cache
    // size" line, estimate_max_model_len) count the null block BlockPool keeps back, so they
    // are one block above what a request can really be given.
    auto one = [&](int64_t len) {
        const int64_t b = vllm_request_blocks(L, len);
        return b > 0 && b <= usable;
    };
    if (!one(1)) return 0;
    return one(limit) ? limit : largest_true(1, limit, one);
}

// The parameters of the drafter's own weights, as vLLM loads them (vllm/v1/spec_decode/eagle.py
// load_model): an MTP module and an EAGLE head use the target's token embedding and lm_head
// ("Sharing target model embedding weights / lm_head weights with the draft model"; a head whose
// checkpoint carries identical ones is shared too), so they add their decoder layers and the fc that
// feeds the target's hidden states in: EAGLE fc 2h x h (llama_eagle.py), EAGLE-3 fc 3h x h
// (llama_eagle3.py's combine_hidden_states), an MTP module eh_proj 2h x h with its enorm, hnorm and
// final norm. A draft model (method draft_model) is a whole model of its own. Without a draft config
// an EAGLE head is one decoder layer of the target's geometry.
// Returns {params, how} ("" how: none); `bytes_per_param` the rate to store them at.
double dtype_or_bf16(const std::string& dtype) {
    const int b = dtype_size(dtype);
    return b > 0 ? b : 2;
}

struct DrafterWeights {
    int64_t params = 0;
    double bytes_per_param = 2;
    std::string how;
};
Result<DrafterWeights> drafter_weights(const VllmSpeculative& sc, const ModelSpec& target, const ModelSpec* draft,
                                       const WeightBytes& target_weights) {
    DrafterWeights d;
    const std::string m = lower(sc.method);
    const bool mtp = m == "mtp" || (m.size() > 4 && m.compare(m.size() - 4, 4, "_mtp") == 0);
    const bool eagle = m == "eagle" || m == "eagle3";
    if (!mtp && !eagle && m != "draft_model") return d;
    if (m == "draft_model") {
        if (!draft) return d;  // vllm_with_drafter already refused it
        auto pc = count_params(*draft);
        if (!pc) return pc.error();
        d.params = pc->total;
        d.bytes_per_param = dtype_or_bf16(draft->dtype);
        d.how = "draft_model";
        return d;
    }
    const int64_t h = target.dims.hidden_size;
    // One decoder layer's tensors of `spec`: the last attention layer (an MoE one in an MoE model,
    // as MTP modules are), its norms included.
    auto one_layer = [](const ModelSpec& spec, const ParamCount& pc) {
        int layer = -1;
        for (size_t i = 0; i < spec.layers.size(); ++i)
            if (spec.layers[i].kind == LayerKind::Full || spec.layers[i].kind == LayerKind::Mla)
                layer = static_cast<int>(i);
        int64_t n = 0;
        for (const TensorGroup& t : pc.tensors)
            if (t.layer == layer) n += t.params();
        return n;
    };
    if (mtp) {
        auto pc = count_params(target);
        if (!pc) return pc.error();
        const int64_t n = vllm_nextn_layers(target);
        d.params = n * (one_layer(target, *pc) + 2 * h * h + 3 * h);
        // Stored as the checkpoint stores the model's layers (an fp8 model's MTP layer is fp8 too).
        d.bytes_per_param =
            target_weights.params > 0 ? double(target_weights.bytes) / double(target_weights.params) : 2.0;
        d.how = "mtp";
        return d;
    }
    const int64_t fc =
        (m == "eagle3" ? 3 : 2) * h * (draft && draft->dims.hidden_size > 0 ? draft->dims.hidden_size : h);
    if (draft) {
        auto pc = count_params(*draft);
        if (!pc) return pc.error();
        d.params = pc->total - pc->embedding - pc->output + fc;
        d.bytes_per_param = dtype_or_bf16(draft->dtype);
        d.how = "draft_config";
    } else {
        auto pc = count_params(target);
        if (!pc) return pc.error();
        int64_t first = 0;  // the first attention layer: a dense one, as EAGLE heads are
        for (size_t i = 0; i < target.layers.size(); ++i)
            if (target.layers[i].kind == LayerKind::Full || target.layers[i].kind == LayerKind::Mla) {
                for (const TensorGroup& t : pc->tensors)
                    if (t.layer == static_cast<int>(i)) first += t.params();
                break;
            }
        d.params = first + fc;
        d.bytes_per_param = dtype_or_bf16(target.dtype);
        d.how = "target_layer";
    }
    return d;
}

// Only the flags the answer needs or the user chose: run as printed, vLLM serves what the page promises.
std::string command(const Ctx& c, const BudgetResult& r, const std::string& kv_cache_dtype, int64_t one_max) {
    const BudgetInputs& in = c.in;
    // A start-up refusal is not memory: the command stays as asked; so does one where no context fits at all.
    int64_t mml = r.fits || r.startup_refused || one_max <= 0 ? r.context : one_max;
    // Past the model's limit vLLM refuses whatever the memory: offer the longest it takes.
    if (r.over_model_max) mml = r.max_context;
    std::string cmd = "vllm serve " + c.m.name;
    if (mml > 0) cmd += " --max-model-len " + std::to_string(mml);
    if (c.m.rope_scaling && c.m.rope_scaling->source == "user") {
        const RopeScaling& rs = *c.m.rope_scaling;
        cmd += " --hf-overrides '{\"rope_scaling\":{\"rope_type\":\"" + rs.type +
               "\",\"factor\":" + py_float_text(rs.factor);
        if (rs.type == "yarn")
            cmd += ",\"original_max_position_embeddings\":" + std::to_string(rs.original_max_position_embeddings);
        cmd += "}}'";
    }
    // The release's own default goes unsaid (0.92 from 0.20.0, 0.9 before): run on that release, it is the same.
    if (r.gpu_memory_utilization != r.gpu_memory_utilization_default)
        cmd += " --gpu-memory-utilization " + fraction_text(r.gpu_memory_utilization);
    if (r.max_num_seqs != r.max_num_seqs_default) cmd += " --max-num-seqs " + std::to_string(r.max_num_seqs);
    // A float format other than the one dtype auto serves needs its --dtype, or vLLM serves that one.
    const std::string served = served_float(c.fmt);
    if (!served.empty() && c.m.quant.method.empty() && served != vllm_auto_dtype(c.m, c.gpu))
        cmd += " --dtype " + served;
    if (kv_cache_dtype != "auto") cmd += " --kv-cache-dtype " + kv_cache_dtype;
    if (r.tp > 1) cmd += " --tensor-parallel-size " + std::to_string(r.tp);
    // Only where it does something (budget.cpp resolve_parallelism says so otherwise).
    if (r.ep > 1) cmd += " --enable-expert-parallel";
    if (r.pp > 1) cmd += " --pipeline-parallel-size " + std::to_string(r.pp);
    if (!c.in.pp_layer_partition.empty()) {
        std::string parts;
        for (int64_t n : r.capacity.layout.stage_layers) parts += (parts.empty() ? "" : ",") + std::to_string(n);
        cmd = "VLLM_PP_LAYER_PARTITION=" + parts + " " + cmd;
    }
    if (in.max_num_batched_tokens > 0) cmd += " --max-num-batched-tokens " + std::to_string(in.max_num_batched_tokens);
    if (in.block_size > 0) cmd += " --block-size " + std::to_string(in.block_size);
    // MiniMax-M3 does not start at vLLM's default block size (engines/vllm.cpp plan_attention).
    else if (c.m.msa_block_size > 0)
        cmd += " --block-size " + std::to_string(c.m.msa_block_size);
    if (in.enforce_eager) cmd += " --enforce-eager";
    if (!in.speculative_config.empty()) {
        // Rebuilt from what was understood, so nothing the user typed reaches the shell line verbatim.
        auto sc = parse_vllm_speculative(in.speculative_config);
        if (sc) {
            std::string js = "{\"method\": \"" + sc->method + "\"";
            const bool plain =
                !sc->model.empty() &&
                sc->model.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-/") ==
                    std::string::npos;
            if (plain) js += ", \"model\": \"" + sc->model + "\"";
            js += ", \"num_speculative_tokens\": " + std::to_string(sc->num_speculative_tokens) + "}";
            if (sc->method.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos)
                cmd += " --speculative-config '" + js + "'";
        }
    }
    const std::string qm = lower(c.m.quant.method);
    if (c.fmt.kind == WeightKind::Fp8 && qm != "fp8" && qm != "fbgemm_fp8") cmd += " --quantization fp8";
    // AWQ / GPTQ cannot be made at load time: run on this float checkpoint, the line without the flag
    // would load it whole; with it vLLM stops at start-up, finding no quantization config, until it
    // is pointed at a pre-quantized checkpoint (note pre_quantized).
    if (c.fmt.kind == WeightKind::IntGroup && qm.empty())
        cmd += c.fmt.name == "awq" ? " --quantization awq" : " --quantization gptq";
    if (vllm_needs_remote_code(c.m)) cmd += " --trust-remote-code";
    return cmd;
}

// The words of vllm_arch_dropped and vllm_arch_dropped_backend.
MessageParams dropped_params(const VllmDroppedArch& d, const VllmRelease& rel) {
    return {{"arch", d.arch}, {"until", d.until}, {"release", rel.version.empty() ? kVllmNewestRelease : rel.version}};
}

// The largest of tp / 2, tp / 4, ..., 1 at which `loads`, or 0: the tensor-parallel size a refusal of layers split
// off their quantization grid names instead.
int64_t largest_smaller_tp(int64_t tp, FunctionRef<bool(int64_t)> loads) {
    for (int64_t t = tp / 2; t >= 1; t /= 2)
        if (loads(t)) return t;
    return 0;
}

}  // namespace

Result<bool> vllm(const Ctx& c, BudgetResult& r) {
    const ModelSpec& m = c.m;
    // The release gives the start-up lines, the error wordings, the --kv-cache-dtype spellings, whether CUDA graphs
    // are counted before the cache and (before 0.18) the MLA block sizes.
    auto rel = vllm_release(c.in.engine_version);
    if (!rel) return rel.error();
    if (rel->newer_than_known)
        r.notes.push_back(note("vllm_version_newer", {{"version", rel->version}, {"newest", kVllmNewestRelease}}));
    resolve_scheduler(c, *rel, r);
    if (auto ok = resolve_overheads(c, *rel, r); !ok) return ok.error();
    int64_t num_spec = 0;
    // A drafter's attention layers share the pool, and its weights sit on the last stage beside the target's.
    std::optional<ModelSpec> with_drafter;
    if (!c.in.speculative_config.empty()) {
        auto sc = parse_vllm_speculative(c.in.speculative_config);
        if (!sc) return sc.error();
        auto w = vllm_with_drafter(m, sc.value(), c.draft);
        if (!w) return w.error();
        with_drafter = std::move(w.value());
        num_spec = sc->num_speculative_tokens;
        for (const Message& n : with_drafter->notes)
            if (n.code == "vllm_drafter_layers") r.notes.push_back(n);
        // The drafter's weights live on the last pipeline stage, split by tensor parallelism.
        auto dw = drafter_weights(sc.value(), m, c.draft, r.weights);
        if (!dw) return dw.error();
        r.drafter_params = dw->params;
        r.drafter_weight_bytes = static_cast<int64_t>(double(dw->params) * dw->bytes_per_param);
        if (r.drafter_weight_bytes > 0) {
            r.weights.bytes = sat_add(r.weights.bytes, r.drafter_weight_bytes);
            if (r.weights.stage_bytes.empty()) r.weights.stage_bytes = {r.weights.per_gpu_bytes};
            r.weights.stage_bytes.back() = sat_add(r.weights.stage_bytes.back(), cdiv(r.drafter_weight_bytes, r.tp));
            r.weights.per_gpu_bytes = *std::max_element(r.weights.stage_bytes.begin(), r.weights.stage_bytes.end());
            r.notes.push_back(
                note("vllm_drafter_weights_" + dw->how, {{"method", sc->method},
                                                         {"params", with_commas(dw->params)},
                                                         {"bytes", format_bytes(r.drafter_weight_bytes)}}));
        }
    }
    // The declared cache is the config's, whatever weight format is asked, as `kvbudget kv` reads it.
    auto kvc = vllm_kv_choice(m, *rel, c.in.kv_cache_dtype.empty() ? "auto" : c.in.kv_cache_dtype, &r.notes);
    if (!kvc) return kvc.error();
    std::vector<int64_t> buffers;
    if (is_nvfp4_kv(kvc->dtype) && rel->nvfp4_kv_backend) {
        buffers = nvfp4_out_buffers(c, r, with_drafter ? *with_drafter : m);
        int64_t most = 0;
        for (int64_t b : buffers) most = std::max(most, b);
        if (most > 0)
            r.notes.push_back(note("vllm_nvfp4_out_buffer",
                                   {{"bytes", format_bytes(most)}, {"tokens", with_commas(r.max_num_batched_tokens)}}));
    }
    const Fp32Router fp32 = fp32_router(c, *rel);
    const std::vector<int64_t> router = fp32_router_bytes(c, fp32, r);
    if (buffers.size() < router.size()) buffers.resize(router.size(), 0);
    int64_t router_most = 0;
    for (size_t s = 0; s < router.size(); ++s) {
        buffers[s] = sat_add(buffers[s], router[s]);
        router_most = std::max(router_most, router[s]);
    }
    if (router_most > 0) r.notes.push_back(note(fp32.note, {{"bytes", format_bytes(router_most)}}));
    const std::vector<int64_t> pools = kv_pools(c, *rel, r, buffers);
    if (r.ep > 1)
        r.notes.push_back(note("vllm_ep", {{"total", std::to_string(m.dims.num_experts)},
                                           {"experts", std::to_string(r.ep_local_experts)},
                                           {"gpus", std::to_string(r.ep)}}));

    VllmOptions o;
    o.kv_cache_dtype = kvc->dtype;
    const std::string command_kv = kvc->command;
    // KV cache dtype auto is the dtype the model is served in.
    if (c.m.quant.method.empty()) o.model_dtype = served_float(c.fmt);
    o.tensor_parallel_size = r.tp;
    o.pipeline_parallel_size = r.pp;
    o.pp_layer_partition = c.in.pp_layer_partition;
    o.max_model_len = c.in.context;
    o.allow_long_max_model_len = r.over_model_max;
    o.max_num_batched_tokens = r.max_num_batched_tokens;
    o.block_size = c.in.block_size;
    o.gpu_compute_capability = c.gpu ? c.gpu->compute_capability : 0;
    o.num_speculative_tokens = num_spec;
    o.utilization_headroom_bytes = r.gpu_total_bytes - r.requested_bytes;
    apply_vllm_release(*rel, o);
    o.log_format = rel->log_format;
    auto cap = vllm_capacity(with_drafter ? *with_drafter : m, o, pools);
    if (!cap) {
        // The parallel sizes are checked after the architecture is resolved (VllmConfig's
        // verify_with_parallel_config, the layers as they are built): a dropped one stops vLLM first.
        const VllmDroppedArch* dropped = vllm_dropped_architecture(m, *rel);
        if (dropped && dropped->own_only && cap.error().detail.code.rfind("vllm_tp_", 0) == 0)
            return make_error("vllm_refused", note("vllm_arch_dropped", dropped_params(*dropped, *rel)));
        return cap.error();
    }
    r.capacity = std::move(cap.value());
    const VllmLayout& L = r.capacity.layout;
    for (const Message& n : L.notes)
        if (n.code == "vllm_mla_backend" || n.code == "vllm_mla_backend_hybrid") r.notes.push_back(n);
    r.context = L.max_model_len;
    r.kv_cache_dtype = L.kv_cache_dtype;
    r.fits = r.capacity.fits && r.kv_pool_bytes > 0;
    r.engine_error = r.capacity.error_text;
    if (L.over_max_model_len) {
        // vLLM stops at its config check, before any memory is counted or printed.
        r.fits = false;
        r.engine_error = render_english(*L.over_max_model_len);
        r.capacity.log_lines.clear();
    }
    // vLLM stops while it builds the model, after the config check above and before it measures memory, so it
    // prints no KV line; the numbers stay what the pool would be. A model dtype the GPU lacks stops it as the worker
    // starts; a GPU its wheels carry no kernels for fails at the first kernel; on one they do, a compressed-tensors
    // scheme below the GPU (a layer's projections are built before its attention), or an fp8 cache no attention
    // backend takes there:
    std::optional<VllmStartupRefusal> startup_refusal;
    // First the model's architecture, which vLLM resolves before anything else of its config (ModelConfig's
    // registry.inspect_model_cls, before the max-model-len check): one the release dropped and its Transformers
    // backend cannot take stops it there; one that backend may take gets a note.
    if (const VllmDroppedArch* dropped = vllm_dropped_architecture(m, *rel)) {
        const MessageParams p = dropped_params(*dropped, *rel);
        if (dropped->own_only)
            startup_refusal =
                VllmStartupRefusal{note("vllm_arch_dropped", p), vllm_dropped_architecture_error(*dropped)};
        else
            r.notes.push_back(note("vllm_arch_dropped_backend", p));
    }
    if (vllm_needs_remote_code(m)) r.notes.push_back(note("vllm_trust_remote_code", {{"type", m.config_type}}));
    const bool arch_refused = startup_refusal.has_value();
    // compressed-tensors fp8 blocks a release does not read, on any GPU: as the config is read (before 0.10.2), or as
    // the model is built (0.10.2).
    const auto ct_block = L.over_max_model_len || arch_refused ? std::nullopt : vllm_ct_block_refusal(m, c.fmt, *rel);
    if (ct_block && ct_block->at_config_read) startup_refusal = ct_block->refusal;
    if (c.gpu && c.gpu->vendor == "nvidia" && !L.over_max_model_len && !startup_refusal) {
        // The quantization method is checked as the config is read, before any worker starts:
        startup_refusal = vllm_quant_gpu_refusal(m, c.fmt, c.gpu->compute_capability, c.gpu->name, *rel);
        if (!startup_refusal)
            startup_refusal = vllm_dtype_refusal(served_dtype(c), c.gpu->compute_capability, c.gpu->name, *rel);
        if (!startup_refusal) startup_refusal = vllm_gpu_refusal(c.gpu->compute_capability, c.gpu->name, *rel);
        if (!startup_refusal && ct_block) startup_refusal = ct_block->refusal;
        if (!startup_refusal)
            startup_refusal = vllm_ct_scheme_refusal(m, c.fmt, c.gpu->compute_capability, c.gpu->name, *rel);
        if (!startup_refusal)
            startup_refusal = vllm_fp8_kv_refusal(m, L.kv_cache_dtype, c.gpu->compute_capability, c.gpu->name, *rel);
    }
    if (!startup_refusal && ct_block) startup_refusal = ct_block->refusal;
    // or for an NVFP4 cache, which only FlashInfer takes, on 10.x (B200, B300):
    if (c.gpu && (c.gpu->vendor == "nvidia" || c.gpu->vendor == "amd") && !L.over_max_model_len && !startup_refusal)
        startup_refusal = vllm_nvfp4_kv_refusal(m, L.kv_cache_dtype, c.gpu->vendor == "nvidia",
                                                c.gpu->compute_capability, c.gpu->name, *rel);
    // or layers stored in fp8 blocks that tensor parallelism splits off the block grid (dense linears or experts;
    // expert parallelism keeps experts whole, so only an expert's own width is checked then):
    // Only where the release reads them: compressed-tensors blocks before 0.11.0 stop vLLM earlier (ct_block above).
    const bool off_grid_ok = rel->fp8_merged_off_grid;
    auto block = vllm_ct_blocks_unread(c.fmt, *rel) || arch_refused
                     ? std::nullopt
                     : vllm_fp8_block_refusal(m, c.fmt, r.tp, off_grid_ok, r.ep > 1);
    if (block && !L.over_max_model_len) {
        // The largest smaller TP at which every layer loads (TP 1 splits nothing, but merged and expert parts are
        // still checked against the grid there), with expert parallelism as asked.
        const int64_t fits_tp = largest_smaller_tp(
            r.tp, [&](int64_t t) { return !vllm_fp8_block_refusal(m, c.fmt, t, off_grid_ok, r.ep > 1 && t > 1); });
        if (block->experts) {
            // What the same GPUs hold with expert parallelism (answer.cpp sizes it as the advice).
            const bool ep_loads = r.ep <= 1 && r.tp > 1 && rel->expert_parallel &&
                                  !vllm_fp8_block_refusal(m, c.fmt, r.tp, off_grid_ok, true);
            const MessageParams ep_params = {
                {"experts", std::to_string(ep_local_experts(m.dims.num_experts, {r.tp, rel->ep_remainder_last}))},
                {"total", std::to_string(m.dims.num_experts)},
                {"gpus", std::to_string(r.tp)}};
            if (fits_tp > 0 && ep_loads) {
                MessageParams p = ep_params;
                p.push_back({"tp", std::to_string(fits_tp)});
                r.notes.push_back(note("vllm_fp8_moe_block_fix", p));
            } else if (fits_tp > 0) {
                r.notes.push_back(note("vllm_fp8_moe_block_tp", {{"tp", std::to_string(fits_tp)}}));
            } else if (ep_loads) {
                r.notes.push_back(note("vllm_fp8_moe_block_ep", ep_params));
            }
        } else if (fits_tp > 0) {
            r.notes.push_back(note("vllm_fp8_block_fix", {{"tp", std::to_string(fits_tp)}}));
        }
        // Its ValueError, word for word.
        if (!startup_refusal) startup_refusal = VllmStartupRefusal{block->message, render_english(block->message)};
    }
    // or an AWQ or compressed-tensors WNA16 checkpoint split off its quantization groups (a layer's per-GPU input
    // cuts a group). Not said after an earlier refusal (the quantization method on a V100): its fix would not start
    // there either.
    if (!block && !startup_refusal && !L.over_max_model_len) {
        const bool zero_points = rel->ct_wna16_zero_points;
        auto split = [&](int64_t tp) {
            auto awq = rel->awq_layer_fallback ? vllm_awq_group_refusal(m, c.fmt, tp) : std::nullopt;
            return awq ? awq : vllm_wna16_group_refusal(m, c.fmt, tp, zero_points);
        };
        if (auto g = split(r.tp)) {
            // TP 1 splits nothing, so there is always one.
            const int64_t fits_tp = largest_smaller_tp(r.tp, [&](int64_t t) { return !split(t); });
            if (!g->detail.code.empty()) r.notes.push_back(g->detail);
            r.notes.push_back(note(g->fix, {{"tp", std::to_string(fits_tp)}}));
            startup_refusal = VllmStartupRefusal{g->message, g->vllm_words ? render_english(g->message) : ""};
        }
    }
    if (startup_refusal) {
        r.fits = false;
        r.startup_refused = true;
        r.engine_error = startup_refusal->prints;
        r.capacity.log_lines.clear();
    }
    r.vllm_concurrency = r.capacity.max_concurrency;
    r.log_lines = r.capacity.log_lines;
    const int64_t one_max = answers(m, r, pools);
    if (L.over_max_model_len)
        r.capacity.refusal = note("over_model_max_vllm", {{"context", with_commas(r.context)},
                                                          {"max", with_commas(r.model_max_len)},
                                                          {"physical", with_commas(r.max_context_physical)}});
    if (startup_refusal) r.capacity.refusal = startup_refusal->reason;
    r.command = command(c, r, command_kv, one_max);

    // vLLM's own readers refuse these forms at start-up (awq.py: 4-bit only; gptq.py: 2, 3, 4, 8 bits;
    // compressed_tensors_wNa16.py: 4 and 8; modelopt.py: QUANT_ALGOS; hqq_marlin.py: 4-bit).
    if (c.fmt.plan && !c.fmt.plan->not_in_vllm.empty())
        r.notes.push_back(note("vllm_quant_unsupported", {{"form", c.fmt.plan->not_in_vllm}}));
    if ((c.fmt.kind == WeightKind::IntGroup || c.fmt.kind == WeightKind::Int8) && m.quant.method.empty())
        r.notes.push_back(note("pre_quantized", {{"format", c.fmt.name}}));
    if (!r.fits) {
        r.verdict_reason = r.capacity.refusal;
        // The advice names the length that really serves a request (vLLM's estimate, quoted
        // verbatim in its own error, is one null block more).
        for (auto& p : r.verdict_reason.params)
            if (p.first == "estimated_max_model_len" && one_max > 0) p.second = with_commas(one_max);
        if (r.capacity.estimated_max_model_len <= 0 && !r.startup_refused) r.notes.push_back(note("nothing_fits"));
    } else if (r.seqs == 1 && one_max > 0 && one_max < m.max_position_embeddings && r.capacity.tokens > one_max &&
               r.capacity.layout.groups.size() == 1) {
        r.notes.push_back(note("vllm_null_block", {{"printed", with_commas(r.capacity.tokens)},
                                                   {"usable", with_commas(one_max)},
                                                   {"block", std::to_string(r.capacity.layout.min_block_size)}}));
    }

    fill_stages(r);
    // One request's KV as vLLM lays it out, even when no pool is left, so the bar shows what it would need:
    // on the stage whose GPU then holds the most.
    const std::vector<int64_t> per_request = vllm_stage_request_bytes(L, r.context);
    size_t bar = 0;
    int64_t bar_total = -1;
    for (size_t s = 0; s < r.stages.size(); ++s) {
        const VllmStage& st = r.stages[s];
        const int64_t kv = sat_mul(s < per_request.size() ? per_request[s] : 0, r.seqs);
        const int64_t total = sat_add(sat_add(st.weights_bytes, st.activation_bytes), sat_add(st.overhead_bytes, kv));
        if (total > bar_total) bar = s, bar_total = total;
    }
    for (int64_t b : per_request) r.kv_total_bytes = sat_add(r.kv_total_bytes, sat_mul(b, sat_mul(r.tp, r.seqs)));
    const VllmStage& st = r.stages[bar];
    fill_per_gpu(r, sat_mul(bar < per_request.size() ? per_request[bar] : 0, r.seqs), st.weights_bytes,
                 st.activation_bytes, st.overhead_bytes);

    // A step reads the cache as the pool stores it: auto in the served dtype (float32 for Gemma 3 on a T4).
    auto kt = vllm_kv_type(L.kv_cache_dtype, m.dtype);
    const KvType stored = kt ? kt.value() : vllm_auto_kv_type(L.kv_cache_dtype);
    if (auto kvb = kv_bytes_at(m, uniform_kv_dtypes(m, stored), std::max<int64_t>(1, r.context), 1))
        r.decode.kv_bytes_per_token = kvb.value() / r.tp;
    return true;
}

}  // namespace kvb::budget_steps
