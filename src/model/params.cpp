// Parameter count of the text model, tensor by tensor, so that quantized formats can
// apply their per-tensor rules: the family's extra tensors (weights_family.h), the
// dimensions checked, the embeddings, then per layer its mixer (attention, MLA, linear
// attention, Mamba), its norms and its dense MLP or MoE, then the final norm and lm_head,
// and the breakdown by role. docs/budget-model.md explains every rule.
#include <algorithm>

#include "base/arith.h"
#include "model/weights_family.h"

namespace kvb {
namespace weights_detail {
namespace {

using i128 = __int128;
constexpr int64_t kDimLimit = int64_t(1) << 31;  // any single dimension above this is not a real model

bool is_one_of(const std::string& s, std::initializer_list<const char*> v) {
    for (const char* x : v)
        if (s == x) return true;
    return false;
}

}  // namespace

Family family_of(const ModelSpec& m) {
    Family f;
    const std::string& t = m.model_type;
    if (is_one_of(t, {"qwen2", "qwen2_vl", "qwen2_5_vl", "qwen2_moe", "qwen2_vl_text", "qwen2_5_vl_text"}))
        f.qkv_bias = true;
    if (t == "qwen2_moe") f.shared_gate = true;
    if (is_one_of(t, {"qwen3", "qwen3_moe", "qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe", "qwen3_vl_moe_text"}))
        f.qk_norm = 1;
    if (is_one_of(t, {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"})) {
        f.qk_norm = 1;
        f.gated_q = true;
        f.shared_gate = true;
    }
    if (is_one_of(t, {"gemma2", "gemma3", "gemma3_text"})) f.norms_per_layer = 4;
    if (is_one_of(t, {"gemma3", "gemma3_text"})) f.qk_norm = 1;
    if (is_one_of(t, {"olmo2", "olmo3"})) f.qk_norm = 2;
    if (is_one_of(t, {"glm4", "glm4v", "glm4v_text"})) {
        f.qkv_bias = true;
        f.norms_per_layer = 4;
    }
    // Glm4MoeAttention gives q, k and v (not o) bias=config.attention_bias; GLM-4.5, 4.5-Air and 4.6 set it. GLM-4.5V's
    // text model (glm4v_moe_text) is the same Glm4MoeForCausalLM in vLLM (glm4_1v.py).
    if ((t == "glm4_moe" || t == "glm4v_moe_text") && m.dims.attention_bias) f.qkv_bias = true;
    if (t == "internlm") f.qkv_bias = f.o_bias = true;
    if (t == "gpt_oss") {
        f.qkv_bias = f.o_bias = f.mlp_bias = true;
        f.sinks = f.router_bias = true;
    }
    if (t == "gpt2") {
        f.qkv_bias = f.o_bias = f.mlp_bias = f.ln_bias = f.fused_qkv = true;
        f.pos_rows = m.max_position_embeddings;
    }
    if (t == "opt") {
        f.qkv_bias = f.o_bias = f.mlp_bias = f.ln_bias = true;
        f.pos_rows = m.max_position_embeddings + 2;  // OPTLearnedPositionalEmbedding offset
    }
    if (t == "bloom") f.qkv_bias = f.o_bias = f.mlp_bias = f.ln_bias = f.fused_qkv = true;
    if (is_one_of(t, {"falcon", "RefinedWebModel", "RefinedWeb"})) {
        f.ln_bias = f.fused_qkv = f.falcon = true;
        // falcon-7b (multi_query, parallel attention) has one input_layernorm per block;
        // the new decoder architecture (40B/180B) has ln_attn and ln_mlp.
        bool mq = !m.layers.empty() && m.layers[0].kv_heads == 1;
        f.norms_per_layer = mq ? 1 : 2;
    }
    if (t == "mpt") f.fused_qkv = true;
    if (t == "phi3" || t == "phi3_v") f.fused_qkv = true;  // qkv_proj / gate_up_proj fused in the checkpoint
    if (is_one_of(t, {"deepseek_v3", "deepseek_v32", "deepseek_v4", "deepseek_ref", "kimi_k2", "glm4_moe",
                      "glm4v_moe_text", "glm_moe_dsa", "kimi_linear", "mimo_v2_flash", "mimo_v2", "laguna"}))
        f.score_bias = true;  // noaux_tc routing: the gate's e_score_correction_bias (MiMoV2MoE, LagunaMoE too)
    if (t == "laguna") f.qk_norm = 1;  // LagunaAttention's q_norm and k_norm over head_dim
    if (t == "kimi_linear") f.kda = true;
    if (is_one_of(t, {"gemma4", "gemma4_text"})) {
        f.gemma4 = true;
        f.norms_per_layer = 4;
        f.qk_norm = 1;  // q_norm and k_norm at the layer's head_dim; v_norm has no weight
    }
    if (t == "lfm2") f.qk_norm = 1;  // q_layernorm and k_layernorm over head_dim
    // MiniMax-M3: per-head q_norm / k_norm (qk_norm_type per_head) and the router's e_score_correction_bias
    // (use_routing_bias), as vLLM's MiniMaxM3Attention and MiniMaxM3MoE hold them; Step3p5Attention: q_norm and
    // k_norm over head_dim on every layer, and FusedMoEBlock's router_bias.
    if (m.family == "minimax_m3" || t == "step3p5") {
        f.qk_norm = 1;
        f.score_bias = true;
    }
    // MiniMax-M2 (minimax_m2.py, v0.11.1 .. v0.27.1): q_norm and k_norm over the whole q and k projections, split
    // over the TP ranks; the MoE block's e_score_correction_bias with use_routing_bias.
    if (t == "minimax_m2") {
        f.qk_norm = 3;
        f.score_bias = m.dims.routing_bias && m.dims.num_experts > 0;
    }
    if (t == "nemotron_h") {
        f.block_kinds = true;
        f.norms_per_layer = 1;
        f.score_bias = m.dims.num_experts > 0;
    }
    return f;
}

namespace {

struct Builder {
    std::vector<TensorGroup> t;
    void add(TensorRole r, int layer, int64_t rows, int64_t cols, int64_t count = 1, int64_t active = -1,
             bool replicated = false) {
        if (rows <= 0 || cols <= 0 || count <= 0) return;
        TensorGroup g;
        g.role = r;
        g.layer = layer;
        g.rows = rows;
        g.cols = cols;
        g.count = count;
        g.active = active < 0 ? count : active;
        g.tp_replicated = replicated;
        t.push_back(g);
    }
    void vec(int layer, int64_t n, int64_t count = 1, int64_t active = -1) {
        add(TensorRole::Vector, layer, 1, n, count, active, true);
    }
};

// "cannot count parameters of <model>: ..." with the model first and the code's own parameters.
Error cannot_count(const char* code, const ModelSpec& m, MessageParams extra = {}) {
    MessageParams p = {{"model", m.name}};
    for (auto& e : extra) p.push_back(std::move(e));
    return make_error("bad_value", note(code, std::move(p)));
}

// Every dimension the count multiplies must be present and plausible.
Result<bool> check_dims(const ModelSpec& m, const Family& f) {
    const WeightDims& d = m.dims;
    if (d.hidden_size <= 0) return cannot_count("weights_field_missing", m, {{"field", "hidden_size"}});
    if (d.vocab_size <= 0) return cannot_count("weights_field_missing", m, {{"field", "vocab_size"}});
    if (m.layers.empty()) return cannot_count("weights_no_layers", m);
    for (int64_t v : {d.hidden_size, d.vocab_size, d.num_attention_heads, d.q_head_dim, d.intermediate_size,
                      d.num_experts, d.moe_intermediate_size, d.shared_intermediate_size, d.q_lora_rank,
                      d.qk_nope_head_dim, d.v_head_dim, f.pos_rows, int64_t(m.layers.size())}) {
        if (v < 0 || v > kDimLimit) return cannot_count("weights_dim_range", m, {{"value", std::to_string(v)}});
    }
    for (int64_t v : d.layer_intermediate)
        if (v < 0 || v > kDimLimit) return cannot_count("weights_layer_width_range", m, {{"value", std::to_string(v)}});
    return true;
}

// The tensors of the text model, layer by layer.
struct Counter {
    const ModelSpec& m;
    const Family& f;
    const WeightDims& d;
    const int64_t h;
    const int64_t heads;
    const int64_t ln;  // vectors per norm
    Builder b;
    bool saw_unknown_state = false;

    Counter(const ModelSpec& m_, const Family& f_)
        : m(m_), f(f_), d(m_.dims), h(m_.dims.hidden_size), heads(m_.dims.num_attention_heads), ln(f_.ln_bias ? 2 : 1) {
        b.t.reserve(m.layers.size() * 16 + 8);
    }

    void embeddings() {
        b.add(TensorRole::TokenEmbedding, -1, d.vocab_size + d.embedding_extra_rows, h);
        if (f.pos_rows > 0) b.add(TensorRole::PositionEmbedding, -1, f.pos_rows, h);
        // Gemma 4 PLE (Gemma4Model in vLLM): one table for all layers, its projection from the hidden state
        // and that projection's norm.
        const int64_t ple_all = d.per_layer_input_size * int64_t(m.layers.size());
        if (d.per_layer_input_size > 0 && d.per_layer_input_vocab > 0) {
            b.add(TensorRole::PerLayerEmbedding, -1, d.per_layer_input_vocab, ple_all);
            b.add(TensorRole::StateIn, -1, ple_all, h);
            b.vec(-1, d.per_layer_input_size);
        }
    }

    // Full / sliding / chunked attention: q, k, v (or one fused qkv), o, and the family's extras.
    Result<bool> attention(int li, const Layer& L) {
        // Gemma 4's full layers query at global_head_dim, its sliding ones at head_dim.
        const int64_t qd = f.gemma4 ? L.k_head_dim : d.q_head_dim > 0 ? d.q_head_dim : L.k_head_dim;
        const int64_t qh = L.q_heads > 0 ? L.q_heads : heads;
        const int64_t q_rows = qh * qd;
        const int64_t k_rows = L.kv_heads * L.k_head_dim;
        // attention_k_eq_v: a full layer's keys are its values, the checkpoint has no v_proj.
        const bool no_v = f.gemma4 && d.full_k_eq_v && L.kind == LayerKind::Full;
        const int64_t v_rows = no_v ? 0 : L.kv_heads * L.v_head_dim;
        const int64_t o_cols = qh * (L.v_head_dim > 0 ? L.v_head_dim : qd);
        if (qh <= 0 || qd <= 0) return cannot_count("weights_no_heads", m);
        if (f.fused_qkv) {
            b.add(TensorRole::AttnQkv, li, q_rows + k_rows + v_rows, h);
        } else {
            b.add(TensorRole::AttnQ, li, f.gated_q ? 2 * q_rows : q_rows, h);
            b.add(TensorRole::AttnK, li, k_rows, h);
            b.add(TensorRole::AttnV, li, v_rows, h);
        }
        b.add(TensorRole::AttnOut, li, h, o_cols);
        if (f.qkv_bias) b.vec(li, q_rows + k_rows + v_rows);
        if (f.o_bias) b.vec(li, h);
        if (f.qk_norm == 1) b.vec(li, qd + L.k_head_dim);
        if (f.qk_norm == 2) b.vec(li, q_rows + k_rows);
        // Split like the projections: one rank holds 1 / TP of each (when TP exceeds the KV heads vLLM splits k_norm
        // by the heads instead; not modelled).
        if (f.qk_norm == 3) {
            b.add(TensorRole::Vector, li, 1, q_rows);
            b.add(TensorRole::Vector, li, 1, k_rows);
        }
        if (f.sinks || (d.sliding_sinks && L.kind == LayerKind::Sliding)) b.vec(li, qh);
        if (d.attn_gate > 0) b.add(TensorRole::AttnQ, li, d.attn_gate == 1 ? qh : q_rows, h);  // g_proj
        // MiniMax-M3's MSA indexer (vLLM folds index_q_proj / index_k_proj into the layer's qkv_proj): index_heads
        // query heads and one key head of index_head_dim, and their per-head norms.
        if (L.index_head_dim > 0 && L.kind == LayerKind::Full) {
            b.add(TensorRole::AttnQ, li, d.index_heads * L.index_head_dim, h);
            b.t.back().indexer = true;
            b.add(TensorRole::AttnK, li, L.index_head_dim, h);
            b.t.back().indexer = true;
            b.vec(li, 2 * L.index_head_dim);
        }
        return true;
    }

    // Multi-head latent attention: low-rank q (or a plain q), kv_a with the rope key, kv_b, o.
    Result<bool> mla(int li, const Layer& L) {
        const int64_t rope = L.qk_rope_head_dim;
        const int64_t nope = d.qk_nope_head_dim;
        const int64_t qd = d.q_head_dim > 0 ? d.q_head_dim : nope + rope;
        const int64_t vd = d.v_head_dim > 0 ? d.v_head_dim : L.v_head_dim;
        if (heads <= 0 || qd <= 0 || L.kv_lora_rank <= 0 || vd <= 0) return cannot_count("weights_mla_incomplete", m);
        if (d.q_lora_rank > 0) {
            b.add(TensorRole::MlaQa, li, d.q_lora_rank, h, 1, -1, true);
            b.vec(li, d.q_lora_rank);
            b.add(TensorRole::MlaQb, li, heads * qd, d.q_lora_rank);
        } else {
            b.add(TensorRole::AttnQ, li, heads * qd, h);
        }
        b.add(TensorRole::MlaKva, li, L.kv_lora_rank + rope, h, 1, -1, true);
        b.vec(li, L.kv_lora_rank);
        b.add(TensorRole::MlaKvb, li, heads * (qd - rope + vd), L.kv_lora_rank);
        b.add(TensorRole::AttnOut, li, h, heads * vd);
        if (m.sparse_mla) dsa_indexer(li, L);
        return true;
    }

    // DeepSeek sparse attention's lightning indexer (DeepSeek-V3.2, GLM-5) on a layer that runs its own: wq_b
    // (q_lora_rank -> heads x dim), wk (hidden -> dim), k_norm (a LayerNorm with bias), weights_proj (hidden ->
    // heads), as transformers' GlmMoeDsaIndexer names them. vLLM (deepseek_v2.py Indexer) keeps wq_b a quantized
    // ReplicatedLinear and fuses wk + weights_proj into one unquantized, unsplit linear (an FP8 wk is upcast at
    // load): a router's treatment. A layer IndexShare skips has none: vLLM builds no indexer there, and GLM-5.2's
    // checkpoint holds none (its published total is GLM-5's less 57 indexers).
    void dsa_indexer(int li, const Layer& L) {
        const int64_t dim = L.index_head_dim, n = d.index_heads;
        if (dim <= 0 || n <= 0 || d.q_lora_rank <= 0) return;
        b.add(TensorRole::MlaQb, li, n * dim, d.q_lora_rank, 1, -1, true);
        b.add(TensorRole::Router, li, dim + n, h, 1, -1, true);
        b.vec(li, 2 * dim);
    }

    // DeepSeek-V4's attention (vLLM models/deepseek_v4/nvidia/model.py DeepseekV4Attention): fused q_a + kv
    // (replicated), q_norm, wq_b, kv_norm, wo_a (o_groups blocks of heads x head_dim / o_groups -> o_lora_rank)
    // and wo_b, the sinks; a compressing layer's compressor (fused wkv + wgate, unquantized, ape, norm); a ratio-4
    // layer's indexer (wq_b, the unquantized weights_proj, its own compressor); the hyper-connection mixers.
    void dsv4_attention(int li, const Layer& L) {
        const int64_t hd = L.kv_lora_rank + L.qk_rope_head_dim;
        b.add(TensorRole::MlaQa, li, d.q_lora_rank, h, 1, -1, true);
        b.add(TensorRole::MlaKva, li, hd, h, 1, -1, true);
        b.vec(li, d.q_lora_rank + hd);
        b.add(TensorRole::MlaQb, li, heads * hd, d.q_lora_rank);
        const int64_t groups = d.o_groups > 0 ? d.o_groups : 1;
        b.add(TensorRole::AttnOut, li, groups * d.o_lora_rank, heads * hd / groups);
        b.add(TensorRole::AttnOut, li, h, groups * d.o_lora_rank);
        b.vec(li, heads);
        // quant_config=None: the same never-quantized, replicated treatment as a router.
        auto compressor = [&](int64_t ratio, int64_t dim) {
            const int64_t coff = ratio == 4 ? 2 : 1;
            b.add(TensorRole::Router, li, 2 * coff * dim, h, 1, -1, true);
            b.vec(li, ratio * coff * dim + dim);
        };
        if (L.compress_ratio > 1) compressor(L.compress_ratio, hd);
        if (L.indexer_head_dim > 0) {
            b.add(TensorRole::MlaQb, li, d.index_heads * L.indexer_head_dim, d.q_lora_rank, 1, -1, true);
            b.add(TensorRole::Router, li, d.index_heads, h, 1, -1, true);
            compressor(4, L.indexer_head_dim);
        }
        if (d.hc_mult > 0) {
            const int64_t mix = (2 + d.hc_mult) * d.hc_mult;
            b.vec(li, 2 * (mix * d.hc_mult * h + mix + 3));
        }
    }

    // Linear attention: MiniMax's lightning attention, or a gated delta net.
    void linear(int li, const Layer& L) {
        const StateGeometry& s = L.state;
        if (s.conv_kernel <= 0 && heads > 0 && d.q_head_dim > 0) {
            // Lightning attention (MiniMax): qkv, output gate, out projection and a norm, no conv.
            const int64_t w = heads * d.q_head_dim;
            b.add(TensorRole::StateIn, li, 3 * w, h);
            b.add(TensorRole::StateIn, li, w, h);
            b.add(TensorRole::StateOut, li, h, w);
            b.vec(li, w);
            return;
        }
        if (s.d_inner <= 0 || s.heads <= 0 || s.conv_kernel <= 0) {
            saw_unknown_state = true;
            return;
        }
        if (f.kda) {
            // KimiDeltaAttention (Kimi-Linear-48B's safetensors): q/k/v projections and their depthwise
            // convs, the low-rank decay (f_a, f_b) and output-gate (g_a, g_b) projections, beta (b_proj),
            // A_log, dt_bias, the head-wide output norm and o_proj.
            const int64_t w = s.d_inner, rank = s.d_state;
            b.add(TensorRole::AttnQ, li, w, h);
            b.add(TensorRole::AttnK, li, w, h);
            b.add(TensorRole::AttnV, li, w, h);
            b.add(TensorRole::StateConv, li, 3 * w, s.conv_kernel, 1, -1, false);
            b.add(TensorRole::StateIn, li, 2 * rank + s.heads, h);  // f_a, g_a, b_proj
            b.add(TensorRole::StateIn, li, 2 * w, rank);            // f_b, g_b
            b.vec(li, s.heads + w + s.d_state);                     // A_log, dt_bias, o_norm
            b.add(TensorRole::StateOut, li, h, w);
            return;
        }
        const int64_t conv_dim = s.conv_dim();
        // llama.cpp names the q/k/v part of the in-projection attn_qkv, which its
        // quantizer treats like attn_v; the z gate and beta/alpha stay plain inputs.
        b.add(TensorRole::AttnQkv, li, conv_dim, h);
        b.add(TensorRole::StateIn, li, s.d_inner + 2 * s.heads, h);  // z + ba
        b.add(TensorRole::StateConv, li, conv_dim, s.conv_kernel, 1, -1, false);
        b.vec(li, 2 * s.heads + s.d_inner / s.heads);  // dt_bias, A_log, gated norm (head_v_dim)
        b.add(TensorRole::StateOut, li, h, s.d_inner);
    }

    // Mamba-2 (n_groups > 0), Mamba-1 mixer, or LFM2's short convolution (no SSM state).
    void mamba(int li, const Layer& L) {
        const StateGeometry& s = L.state;
        if (s.d_state == 0 && s.n_groups == 0 && s.d_inner > 0 && s.conv_kernel > 0) {
            // Lfm2ShortConv: in_proj to B, C and x (3 x conv_dim), a depthwise conv of conv_L_cache taps, out_proj.
            b.add(TensorRole::StateIn, li, 3 * s.d_inner, h);
            b.add(TensorRole::StateConv, li, s.d_inner, s.conv_kernel);
            b.add(TensorRole::StateOut, li, h, s.d_inner);
            return;
        }
        if (s.d_inner <= 0 || s.d_state <= 0 || s.conv_kernel <= 0) {
            saw_unknown_state = true;
            return;
        }
        if (s.n_groups > 0) {  // Mamba-2
            const int64_t nh = s.heads > 0 ? s.heads : 1;
            b.add(TensorRole::StateIn, li, 2 * s.d_inner + 2 * s.n_groups * s.d_state + nh, h);
            b.add(TensorRole::StateConv, li, s.conv_dim(), s.conv_kernel);
            b.vec(li, s.conv_dim() + 3 * nh + s.d_inner);  // conv bias, dt_bias, A_log, D, norm
        } else {                                           // Mamba-1
            const int64_t dt_rank = cdiv(h, 16);
            b.add(TensorRole::StateIn, li, 2 * s.d_inner, h);
            b.add(TensorRole::StateConv, li, s.d_inner, s.conv_kernel);
            b.add(TensorRole::StateIn, li, dt_rank + 2 * s.d_state, s.d_inner);  // x_proj
            b.add(TensorRole::StateIn, li, s.d_inner, dt_rank);                  // dt_proj
            b.vec(li, s.d_inner * (s.d_state + 3));                              // conv bias, dt bias, A_log, D
        }
        b.add(TensorRole::StateOut, li, h, s.d_inner);
    }

    // Norms: one per sub-block; Nemotron-H blocks have exactly one.
    void norms(int li, bool has_attention_norm) {
        if (f.block_kinds) {
            b.vec(li, ln * h);
            return;
        }
        int64_t n = f.norms_per_layer;
        if (!has_attention_norm && n >= 2) n -= 1;  // no-op attention (Nemotron-NAS) has no input norm
        b.add(TensorRole::Vector, li, 1, ln * h * n, 1, -1, true);
    }

    // Gate (when gated), up and down projections of one MLP of `width` over a model width `io` (the hidden
    // size unless given), `count` copies.
    void ffn(int li, int64_t width, TensorRole g, TensorRole u, TensorRole dn, int64_t count, int64_t active,
             int64_t io = 0) {
        if (width <= 0) return;
        if (io <= 0) io = h;
        const bool gated = d.gated_mlp;
        if (gated) b.add(g, li, width, io, count, active);
        b.add(u, li, width, io, count, active);
        b.add(dn, li, io, width, count, active);
        if (f.mlp_bias) b.vec(li, (gated ? 2 : 1) * width + io, count, active);
    }

    // The layer's MLP: routed experts with router and shared experts, or one dense MLP.
    void mlp(int li, size_t i) {
        const int64_t freq = d.moe_layer_freq > 0 ? d.moe_layer_freq : 1;
        bool moe_layer = d.num_experts > 0 && static_cast<int64_t>(i) >= d.first_dense_layers &&
                         (static_cast<int64_t>(i) % freq == 0);
        // A per-layer list (moe_layer_freq as a list, mlp_only_layers, Step-3.5's moe_layers_enum) says it layer by
        // layer; 0 = no MLP is the Nemotron-H mixer blocks', which never reach here.
        if (d.num_experts > 0 && i < d.layer_mlp.size() && d.layer_mlp[i] > 0) moe_layer = d.layer_mlp[i] == 2;
        if (!moe_layer) {
            int64_t w =
                d.num_experts > 0 && d.dense_intermediate_size > 0 ? d.dense_intermediate_size : d.intermediate_size;
            if (!d.layer_intermediate.empty() && i < d.layer_intermediate.size()) w = d.layer_intermediate[i];
            ffn(li, w, TensorRole::FfnGate, TensorRole::FfnUp, TensorRole::FfnDown, 1, 1);
            return;
        }
        const int64_t moe_i = d.moe_intermediate_size > 0 ? d.moe_intermediate_size : d.intermediate_size;
        const int64_t k_active = d.experts_per_token > 0 ? std::min(d.experts_per_token, d.num_experts) : d.num_experts;
        b.add(TensorRole::Router, li, d.num_experts, h, 1, -1, true);
        const size_t router_vectors = b.t.size();
        if (f.router_bias) b.vec(li, d.num_experts);
        // DeepSeek-V4's hash layers route by a vocab x top-k table instead (counted as its entries).
        if (d.hash_layers > 0 && static_cast<int64_t>(i) < d.hash_layers)
            b.vec(li, d.vocab_size * d.experts_per_token);
        else if (f.score_bias)
            b.vec(li, d.num_experts);
        for (size_t k = router_vectors; k < b.t.size(); ++k) b.t[k].router_vector = true;
        // Latent MoE (Nemotron-3-Super / Ultra, vLLM's NemotronHMoE with moe_latent_size): the routed experts run in
        // the latent width, between fc1_latent_proj (hidden -> latent) and fc2_latent_proj (latent -> hidden),
        // both ReplicatedLinear; the router and the shared expert stay at the hidden size.
        const int64_t latent = d.moe_latent_size;
        if (latent > 0) {
            b.add(TensorRole::FfnUp, li, latent, h, 1, -1, true);
            b.add(TensorRole::FfnDown, li, h, latent, 1, -1, true);
        }
        ffn(li, moe_i, TensorRole::ExpertGate, TensorRole::ExpertUp, TensorRole::ExpertDown, d.num_experts, k_active,
            latent);
        const int64_t shared_w = d.shared_intermediate_size > 0 ? d.shared_intermediate_size : d.shared_experts * moe_i;
        if (shared_w > 0) {
            const size_t first = b.t.size();
            ffn(li, shared_w, TensorRole::FfnGate, TensorRole::FfnUp, TensorRole::FfnDown, 1, 1);
            for (size_t k = first; k < b.t.size(); ++k) b.t[k].shared = true;
            if (f.shared_gate) b.add(TensorRole::Router, li, 1, h, 1, -1, true);
        }
    }

    Result<bool> layer(size_t i) {
        const Layer& L = m.layers[i];
        const int li = static_cast<int>(i);
        bool has_attention_norm = true;
        switch (L.kind) {
            case LayerKind::Full:
            case LayerKind::Sliding:
            case LayerKind::Chunked:
                if (auto ok = attention(li, L); !ok) return ok;
                break;
            case LayerKind::Mla:
                if (dsv4_layer(L)) {
                    dsv4_attention(li, L);
                    break;
                }
                if (auto ok = mla(li, L); !ok) return ok;
                break;
            case LayerKind::Linear: linear(li, L); break;
            case LayerKind::Mamba: mamba(li, L); break;
            case LayerKind::None:
                if (L.kv_shared) {
                    if (auto ok = attention(li, L); !ok) return ok;
                } else if (L.cross_attention) {
                    if (auto ok = attention(li, L); !ok) return ok;
                    b.vec(li, 2 * L.k_head_dim + 2);
                } else if (L.nextn) {
                    auto ok = L.kv_lora_rank > 0 ? mla(li, L) : attention(li, L);
                    if (!ok) return ok;
                    // eh_proj folds the token's embedding and the hidden state (2h) into h; enorm,
                    // hnorm and shared_head_norm are one h-vector each.
                    b.add(TensorRole::NextnProj, li, h, 2 * h);
                    b.vec(li, 3 * h);
                } else {
                    has_attention_norm = false;
                }
                break;
        }
        norms(li, has_attention_norm);
        if (f.gemma4) gemma4_extras(li, i);
        // Nemotron-H: a block with a mixer has no MLP.
        if (f.block_kinds && L.kind != LayerKind::None) return true;
        mlp(li, i);
        return true;
    }

    // Gemma 4's layer_scalar; with experts the router's scale, per_expert_scale and three more norms; with
    // PLE the layer's gate (hidden -> width), projection back and its norm.
    void gemma4_extras(int li, size_t i) {
        int64_t v = 1;
        if (d.num_experts > 0) v += h + d.num_experts + 3 * h;
        if (d.per_layer_input_size > 0) {
            b.add(TensorRole::StateIn, li, d.per_layer_input_size, h, 1, -1, true);
            b.add(TensorRole::StateOut, li, h, d.per_layer_input_size, 1, -1, true);
            v += h;
        }
        (void)i;
        b.vec(li, v);
    }

    // Final norm (layer -2: after the blocks) and lm_head unless tied.
    void head() {
        b.add(TensorRole::Vector, -2, 1, ln * h, 1, -1, true);
        // DeepSeek-V4's hc_head mixer folds the hc_mult streams back into one.
        if (d.hc_mult > 0) b.add(TensorRole::Vector, -2, 1, d.hc_mult * d.hc_mult * h + d.hc_mult + 1, 1, -1, true);
        if (!d.tie_word_embeddings) b.add(TensorRole::Output, -2, d.vocab_size, h);
    }
};

// Where a tensor's parameters go in the breakdown.
int breakdown_slot(const ModelSpec& m, const TensorGroup& g) {
    int slot = 0;
    switch (g.role) {
        case TensorRole::TokenEmbedding:
        case TensorRole::PositionEmbedding:
        case TensorRole::PerLayerEmbedding: slot = 0; break;
        case TensorRole::Output: slot = 1; break;
        case TensorRole::AttnQ:
        case TensorRole::AttnK:
        case TensorRole::AttnV:
        case TensorRole::AttnQkv:
        case TensorRole::AttnOut:
        case TensorRole::MlaQa:
        case TensorRole::MlaQb:
        case TensorRole::MlaKva:
        case TensorRole::MlaKvb:
        case TensorRole::NextnProj: slot = 2; break;
        case TensorRole::FfnGate:
        case TensorRole::FfnUp:
        case TensorRole::FfnDown: slot = 3; break;
        case TensorRole::ExpertGate:
        case TensorRole::ExpertUp:
        case TensorRole::ExpertDown: slot = 4; break;
        case TensorRole::Router: slot = 5; break;
        case TensorRole::StateIn:
        case TensorRole::StateOut:
        case TensorRole::StateConv: slot = 6; break;
        case TensorRole::Vector: slot = 7; break;
    }
    // The in-projection of a linear-attention layer is a mixer weight, whatever llama.cpp calls it.
    const bool state_layer = g.layer >= 0 && (m.layers[size_t(g.layer)].kind == LayerKind::Linear ||
                                              m.layers[size_t(g.layer)].kind == LayerKind::Mamba);
    if (slot == 2 && state_layer) slot = 6;
    // Gemma 4's PLE gate and projections feed the residual stream like an MLP; they hold no state.
    if (slot == 6 && !state_layer && m.dims.per_layer_input_size > 0) slot = 3;
    return slot;
}

// Totals and the breakdown by role.
Result<ParamCount> tally(const ModelSpec& m, std::vector<TensorGroup> tensors) {
    ParamCount pc;
    i128 total = 0, active = 0;
    i128 parts[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (const TensorGroup& g : tensors) {
        const i128 p = i128(g.rows) * g.cols * g.count;
        total += p;
        active += i128(g.rows) * g.cols * g.active;
        parts[breakdown_slot(m, g)] += p;
    }
    // 2^55 parameters is far beyond any model; below it every per-tensor byte count
    // (at most 32 bits per weight plus scales) fits int64 without checks.
    if (total > (i128(1) << 55)) return cannot_count("weights_too_large", m);
    pc.total = int64_t(total);
    pc.active = int64_t(active);
    pc.embedding = int64_t(parts[0]);
    pc.output = int64_t(parts[1]);
    pc.attention = int64_t(parts[2]);
    pc.mlp = int64_t(parts[3]);
    pc.experts = int64_t(parts[4]);
    pc.router = int64_t(parts[5]);
    pc.state = int64_t(parts[6]);
    pc.norms = int64_t(parts[7]);  // norms, biases and other 1-D vectors
    pc.vision = m.dims.vision_params;
    pc.tensors = std::move(tensors);
    return pc;
}

}  // namespace

Result<ParamCount> count_params(const ModelSpec& m, const Family& f) {
    if (auto ok = check_dims(m, f); !ok) return ok.error();
    Counter c(m, f);
    c.embeddings();
    for (size_t i = 0; i < m.layers.size(); ++i)
        if (auto ok = c.layer(i); !ok) return ok.error();
    c.head();
    auto pc = tally(m, std::move(c.b.t));
    if (pc && c.saw_unknown_state) pc.value().notes.push_back(note("state_uncounted"));
    return pc;
}

}  // namespace weights_detail

Result<ParamCount> count_params(const ModelSpec& m) {
    return weights_detail::count_params(m, weights_detail::family_of(m));
}

}  // namespace kvb
