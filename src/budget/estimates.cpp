#include "budget/estimates.h"

#include <algorithm>
#include <cmath>

#include "base/arith.h"
#include "base/text.h"
#include "base/units.h"
#include "model/dtype.h"

namespace kvb {

int model_dtype_bytes(const ModelSpec& m) {
    int b = dtype_size(m.dtype);
    return b == 2 || b == 4 ? b : 2;
}

namespace {

int64_t max_kv_heads(const ModelSpec& m) {
    int64_t k = 0;
    for (const Layer& l : m.layers) k = std::max(k, l.kv_heads);
    return k;
}

}  // namespace

// EngineArgs.get_batch_defaults, OPENAI_API_SERVER row (vllm/engine/arg_utils.py; the >= 160 GiB row from v0.28.0,
// PR #51726). SchedulerConfig's DEFAULT_MAX_NUM_SEQS (128) is only the fallback for a usage context the table lacks;
// `vllm serve` always finds its own row.
int64_t vllm_default_max_num_batched_tokens(int64_t gpu_total_bytes, bool is_a100, bool tier_160) {
    if (tier_160 && gpu_total_bytes >= 160 * GiB) return 16384;
    return gpu_total_bytes >= 70 * GiB && !is_a100 ? 8192 : 2048;
}

int64_t vllm_default_max_num_seqs(int64_t gpu_total_bytes, bool is_a100, bool tier_160) {
    if (tier_160 && gpu_total_bytes >= 160 * GiB) return 1024;
    return gpu_total_bytes >= 70 * GiB && !is_a100 ? 1024 : 256;
}

namespace {

using i128 = __int128;

// One forward pass over `tokens` tokens on one tensor-parallel rank: the residual and
// hidden streams plus the widest per-token intermediate of any layer. In 128 bits: the
// parser's limits allow 2^20 experts per token of 2^24 wide MLPs, and the inputs 2^31
// batched tokens, so the exact product can pass 2^63; callers get INT64_MAX then, which
// reads as "does not fit" (and compute_budget refuses an answer built on it).
i128 forward_bytes(const ModelSpec& m, i128 tokens, int64_t tp, int64_t dt, bool expert_parallel = false) {
    const WeightDims& d = m.dims;
    if (tp < 1) tp = 1;
    // Under expert parallelism FusedMoE runs whole experts (its own TP is 1) over every token of the batch.
    const int64_t moe_tp = expert_parallel ? 1 : tp;
    const int64_t h = d.hidden_size;
    int64_t dense_i = d.intermediate_size;
    for (int64_t w : d.layer_intermediate) dense_i = std::max(dense_i, w);
    const i128 moe_i = d.moe_intermediate_size > 0 ? d.moe_intermediate_size : d.intermediate_size;
    const i128 k = d.experts_per_token > 0 ? d.experts_per_token : 1;
    const i128 heads = d.num_attention_heads;
    const i128 kvh = max_kv_heads(m);
    const i128 hd = d.q_head_dim;
    i128 widest = 0;
    if (dense_i > 0) widest = std::max(widest, i128(3) * dense_i / tp);  // gate_up output (2I) + activation output (I)
    if (d.num_experts > 0) {
        // fused_moe keeps three caches per token: [topk, 2N], [topk, N], [topk, hidden]
        const i128 shared =
            d.shared_intermediate_size > 0 ? i128(d.shared_intermediate_size) : d.shared_experts * moe_i;
        widest = std::max(widest, k * (3 * moe_i / moe_tp + h) + 3 * shared / tp);
    }
    if (m.has(LayerKind::Mla)) {
        widest = std::max(widest, heads * (hd + d.qk_nope_head_dim + 2 * d.v_head_dim) / tp);
    } else if (heads > 0) {
        widest = std::max(widest, ((heads + 2 * kvh) * hd + heads * hd) / tp);  // qkv output + attention output
    }
    return tokens * dt * (2 * i128(h) + widest);
}

}  // namespace

int64_t estimate_vllm_activation_bytes(const ModelSpec& m, int dtype_bytes, int64_t tokens, int64_t seqs, int64_t tp,
                                       bool sampler, bool expert_parallel) {
    // Sampler of the dummy run: logits of every request row over the full vocabulary
    // (gathered on every rank), then about four fp32 copies (logits, probabilities,
    // the exponential noise of random sampling, logprobs).
    const i128 logits = sampler ? i128(seqs) * m.dims.vocab_size * (dtype_bytes + 16) : 0;
    return clamp_i64(forward_bytes(m, tokens, tp, dtype_bytes, expert_parallel) + logits);
}

int64_t estimate_transformers_activation_bytes(const ModelSpec& m, int64_t batch, int64_t tokens) {
    // generate() keeps only the last position's logits, upcast to fp32, then softmax.
    return clamp_i64(forward_bytes(m, i128(batch) * tokens, 1, model_dtype_bytes(m)) +
                     i128(batch) * m.dims.vocab_size * (model_dtype_bytes(m) + 8));
}

int64_t estimate_vllm_overhead_bytes(int64_t tp, int64_t pp) {
    return tp * pp > 1 ? 1 * GiB : 512 * MiB;
}

int64_t vllm_cudagraph_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t ceiling,
                                     bool captures_max_tokens) {
    // VllmConfig._set_cudagraph_sizes: max = min(max_num_seqs * 2, ceiling), at most max_num_batched_tokens;
    // sizes [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16).
    int64_t max = std::min<int64_t>(sat_mul(max_num_seqs, 2), ceiling);
    if (max_num_batched_tokens > 0) max = std::min(max, max_num_batched_tokens);
    int64_t n = 0;
    for (int64_t s : {1, 2, 4})
        if (s <= max) ++n;
    if (max >= 8) n += (std::min<int64_t>(max, 255) - 8) / 8 + 1;
    if (max >= 256) n += (max - 256) / 16 + 1;
    // "ensure max_num_tokens is captured if within max capture size": only when it is the cap itself.
    const int64_t t = max_num_batched_tokens;
    const bool on_grid = t == 1 || t == 2 || t == 4 || (t >= 8 && t < 256 && t % 8 == 0) || (t >= 256 && t % 16 == 0);
    if (captures_max_tokens && t > 0 && t <= max && !on_grid) ++n;
    return n;
}

int64_t estimate_vllm_cudagraph_bytes_for_layers(int64_t stage_layers, int64_t max_num_seqs,
                                                 int64_t max_num_batched_tokens, int64_t ceiling,
                                                 bool captures_max_tokens) {
    // Half a MiB per captured size per decoder layer: fits vLLM's own numbers for a
    // 64-layer model with 51 sizes (1.59 GiB) and with 3 sizes (0.09 GiB actual, 0.13 estimated).
    const int64_t sizes =
        vllm_cudagraph_capture_sizes(max_num_seqs, max_num_batched_tokens, ceiling, captures_max_tokens);
    return clamp_i64(i128(sizes) * stage_layers * 512 * KiB);
}

// vLLM's implementations of these build no RotaryEmbedding: GPT-2, GPTBigCode and OPT learn their
// positions, BLOOM and MPT use ALiBi, and so does Baichuan's BaichuanForCausalLM except for
// Baichuan2-7B (models/baichuan.py: hidden_size 4096 is RoPE), and Falcon when its config says
// alibi (models/falcon.py: rotary = not alibi).
bool vllm_builds_rope(const ModelSpec& m) {
    if (m.alibi) return false;
    for (const char* t : {"gpt2", "gpt_bigcode", "opt", "bloom", "mpt"})
        if (m.model_type == t) return false;
    if (m.architecture == "BaichuanForCausalLM" && m.dims.hidden_size != 4096) return false;
    return true;
}

namespace {

// The rows of one cos/sin cache, as each RotaryEmbedding class sizes it at v0.27.1 (layers/rotary_embedding/):
// YaRN (yarn_scaling_rope.py, and DeepSeek's deepseek_scaling_rope.py) gets the original length from get_rope and
// caches arange(original x factor); linear (linear_scaling_rope.py) caches arange(max_position x factor);
// LongRoPE (phi3_long_rope_scaled_rope.py) a short cache of the original length above a long one of max_position;
// MRotaryEmbedding (mrope.py) 4 x its length ("the maximum index value is related to the duration of the input
// video"), before YaRN's factor when it has one; default, llama3 and dynamic cache max_position rows.
int64_t rope_rows(const ModelSpec& m, int64_t positions, const RopeCache& c) {
    const RopeScaling* s =
        c.follows_model ? (m.rope_scaling ? &*m.rope_scaling : nullptr) : (c.scaling ? &*c.scaling : nullptr);
    const std::string type = s ? s->type : "default";
    const double factor = s && s->factor > 0 ? s->factor : 1.0;
    // torch.arange over a float end holds ceil(end) values.
    auto arange = [](double end) { return clamp_i64(static_cast<i128>(std::ceil(end))); };
    if (type == "yarn" || type == "deepseek_yarn") {
        int64_t base = s->original_max_position_embeddings > 0 ? s->original_max_position_embeddings : positions;
        if (c.mrope) base = sat_mul(base, 4);
        return arange(double(base) * factor);
    }
    if (c.mrope) return sat_mul(positions, 4);
    if (type == "linear") return arange(double(positions) * factor);
    if (type == "longrope") {
        const int64_t orig = s->original_max_position_embeddings > 0  ? s->original_max_position_embeddings
                             : m.original_max_position_embeddings > 0 ? m.original_max_position_embeddings
                                                                      : positions;
        return sat_add(orig, positions);
    }
    return positions;
}

}  // namespace

int64_t vllm_rotary_cache_bytes(const ModelSpec& m, int dtype_bytes) {
    if (!vllm_builds_rope(m)) return 0;
    std::vector<RopeCache> caches = m.rope_caches;
    if (caches.empty()) {
        // A GGUF header: one cache of the first attention layer's width.
        for (const Layer& l : m.layers) {
            const int64_t rot = l.kind == LayerKind::Mla ? l.qk_rope_head_dim
                                : head_attention(l.kind) ? l.k_head_dim
                                                         : 0;
            if (rot <= 0) continue;
            RopeCache c;
            c.rotary_dim = rot;
            caches.push_back(c);
            break;
        }
    }
    int64_t positions = m.max_position_embeddings;
    // models/falcon.py: getattr(config, "max_position_embeddings", 8192), and vLLM's RWConfig (the
    // RefinedWeb model types) has no such field.
    const std::string t = lower(m.model_type);
    if (positions <= 0 && (t == "refinedweb" || t == "refinedwebmodel")) positions = 8192;
    if (positions <= 0) return 0;
    int64_t total = 0;
    for (const RopeCache& c : caches) {
        const int bytes = c.dtype_bytes > 0 ? c.dtype_bytes : dtype_bytes;
        total = sat_add(total, clamp_i64(i128(rope_rows(m, positions, c)) * c.rotary_dim * bytes));
    }
    return total;
}

// PR #28798 "Use cos and sin cache in QwenVL" (b9489f51e, first in 0.12.0) gave qwen2_vl.py, qwen2_5_vl.py,
// qwen3_vl.py and glm4_1v.py get_rope(head_size=head_dim, rotary_dim=head_dim // 2, max_position=8192) (at v0.27.1
// partial_rotary_factor 0.5, the same columns), a key no text layer shares; before, a few inv_freq floats.
int64_t vllm_vision_rotary_cache_bytes(const ModelSpec& m, int dtype_bytes) {
    if (m.dims.vision_params <= 0 || m.dims.vision_rope_dim <= 0) return 0;
    return clamp_i64(i128(8192) * m.dims.vision_rope_dim * dtype_bytes);
}

int64_t estimate_llamacpp_compute_bytes(const ModelSpec& m, int64_t n_ubatch) {
    const WeightDims& d = m.dims;
    int64_t dense_i = d.intermediate_size;
    for (int64_t w : d.layer_intermediate) dense_i = std::max(dense_i, w);
    const int64_t moe_i = d.moe_intermediate_size > 0 ? d.moe_intermediate_size : dense_i;
    const i128 k = d.experts_per_token > 0 ? d.experts_per_token : 1;
    i128 widest = std::max(i128(d.vocab_size), i128(2) * dense_i);
    if (d.num_experts > 0) widest = std::max(widest, 2 * k * moe_i);
    // ggml's graph allocator reuses buffers: the peak is the widest f32 tensor of one
    // ubatch (logits or the MLP intermediate) plus a few hidden-size tensors.
    return clamp_i64(i128(n_ubatch) * 4 * (widest + 2 * i128(d.hidden_size)));
}

}  // namespace kvb
