// Hybrid attention + mamba / linear-attention models in vLLM: which mamba cache mode
// "default" means, the recurrent state bytes per GPU, and the block-size adjustment of
// platforms/interface.py (formerly models/config.py HybridAttentionMambaModelConfig)
// that makes one attention page hold one state.
#include <algorithm>
#include <cstdio>

#include "base/arith.h"
#include "engines/vllm_steps.h"

namespace kvb::vllm_steps {

MambaCacheMode resolve_mamba_cache_mode(const ModelSpec& m, const VllmOptions& o, bool has_attn) {
    if (o.mamba_cache_mode != MambaCacheMode::Default) return o.mamba_cache_mode;
    // MambaModelConfig.verify_and_update_config: without prefix caching every mode is "none". Hybrids
    // have it on by default from 0.28.0 (VllmRelease::hybrid_prefix_caching), else only when asked.
    const bool prefix_caching = o.enable_prefix_caching >= 0 ? o.enable_prefix_caching == 1 : o.hybrid_prefix_caching;
    if (!prefix_caching || !has_attn) return MambaCacheMode::None;
    bool has_gdn = false;  // gated delta net (conv + recurrent state), not MiniMax's conv-less lightning attention
    // LFM2's short convolution (a conv state and no SSM state): Lfm2ForCausalLM does not declare
    // SupportsMambaPrefixCaching, so prefix caching gives it "align" (lfm2.py refuses "all").
    bool short_conv = false;
    for (const Layer& l : m.layers) {
        if (l.kind == LayerKind::Linear && l.state.conv_kernel > 0) has_gdn = true;
        if (l.kind == LayerKind::Mamba && l.state.conv_kernel > 0 && l.state.d_state == 0) short_conv = true;
    }
    // With prefix caching on, "none" becomes "all" for models declaring SupportsMambaPrefixCaching
    // (Mamba-2 hybrids such as Nemotron-H) and "align" for the rest (Qwen3.5 / Qwen3-Next logs of 0.24,
    // 0.27 with --enable-prefix-caching, and 0.29 by default show "align").
    if (has_gdn || short_conv) return o.mamba_align_mode ? MambaCacheMode::Align : MambaCacheMode::None;
    if (m.model_type == "nemotron_h") return MambaCacheMode::All;
    return MambaCacheMode::None;
}

void state_bytes_per_gpu(const Layer& l, int64_t tp, int64_t num_spec, int conv_b, int ssm_b, int64_t* conv,
                         int64_t* ssm) {
    const StateGeometry& g = l.state;
    int64_t groups = g.n_groups;
    // Mamba-2 replicates a group that cannot be split (extra_groups_for_head_shards).
    if (l.kind == LayerKind::Mamba && groups > 0 && groups % tp != 0) groups = tp;
    const int64_t conv_dim = g.d_inner + 2 * groups * g.d_state;
    const int64_t taps = g.conv_kernel > 0 ? g.conv_kernel - 1 + (g.conv_spec_taps ? num_spec : 0) : 0;
    *conv = taps * (conv_dim / tp) * conv_b;
    *ssm = (g.d_inner / tp) * g.d_state * ssm_b;
}

namespace {

// Bytes one token of the first attention layer takes on one GPU.
int64_t attention_token_bytes(const ModelSpec& m, const Plan& p) {
    for (const Layer& l : m.layers) {
        if (l.kind == LayerKind::Mla) return (l.kv_lora_rank + l.qk_rope_head_dim) * p.dt;
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
            const int64_t h = std::max<int64_t>(1, l.kv_heads / p.tp);
            return 2 * h * l.k_head_dim * p.dt;
        }
    }
    return 0;
}

// The largest state of one layer on one GPU.
int64_t largest_state_page(const ModelSpec& m, const Plan& p) {
    int64_t page = 0;
    for (const Layer& l : m.layers) {
        if (l.kind != LayerKind::Linear && l.kind != LayerKind::Mamba) continue;
        int64_t c = 0, s = 0;
        state_bytes_per_gpu(l, p.tp, p.num_spec, p.conv_b, p.ssm_b, &c, &s);
        page = std::max(page, c + s);
    }
    return page;
}

// Tokens of attention block whose page holds one state page.
int64_t block_for_state(const ModelSpec& m, const VllmOptions& o, const Plan& p, int64_t attn_1tok,
                        int64_t mamba_page) {
    int64_t align = std::max<int64_t>(o.kernel_block_alignment > 0 ? o.kernel_block_alignment : 16, p.attn_block);
    // Before 0.18 (HybridAttentionMambaModelConfig) an MLA hybrid aligned to 64 whatever the GPU, 128 when
    // CUTLASS MLA was the backend; the platform then forced the MLA backend's size only onto a block that
    // was not a multiple of it (FlashMLA 64, FlashInfer MLA 64, CUTLASS MLA 128), which a multiple of the
    // alignment already is.
    if (o.mla_forced_block_sizes && m.has(LayerKind::Mla) && o.kernel_block_alignment == 0)
        align = p.attn_block == 128 ? 128 : 64;
    if (p.mode != MambaCacheMode::All) return align * cdiv(mamba_page, align * attn_1tok);
    // Align to the SSD kernel chunk: config chunk_size (Nemotron-H 128, Mamba-2's default 256;
    // 64 assumed for gated delta net, whose configs carry none).
    const int64_t chunk = m.has(LayerKind::Mamba) ? (m.model_type == "nemotron_h" ? 128 : 256) : 64;
    int64_t a = chunk, b = align;
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    const int64_t lcm = chunk / a * align;
    return lcm * cdiv(cdiv(mamba_page, attn_1tok), lcm);
}

}  // namespace

void unify_hybrid_block(const ModelSpec& m, const VllmOptions& o, Plan& p, VllmLayout& L) {
    const int64_t mml = L.max_model_len;
    p.mamba_block = mml;
    p.mamba_page_padded = 0;
    if (!p.has_state) return;
    if (p.has_attn) {
        const int64_t attn_1tok = attention_token_bytes(m, p);
        const int64_t mamba_page = largest_state_page(m, p);
        if (attn_1tok > 0 && mamba_page > 0) {
            const int64_t need = block_for_state(m, o, p, attn_1tok, mamba_page);
            if (p.attn_block < need) {
                p.attn_block = need;
                L.vllm_lines.push_back("Setting attention block size to " + std::to_string(need) +
                                       " tokens to ensure that attention page size is >= mamba page size.");
            }
            // Saturated here, refused by layer_specs (the first attention page is at least this).
            const int64_t attn_page = sat_mul(p.attn_block, attn_1tok);
            if (attn_page > mamba_page) {
                p.mamba_page_padded = attn_page;
                char buf[200];
                std::snprintf(buf, sizeof buf,
                              "Padding mamba page size by %.2f%% to ensure that mamba page size and attention "
                              "page size are exactly equal.",
                              100.0 * double(attn_page - mamba_page) / double(mamba_page));
                L.vllm_lines.push_back(buf);
            }
        }
    }
    p.mamba_block = (p.mode == MambaCacheMode::None) ? mml : p.attn_block;
}

}  // namespace kvb::vllm_steps
