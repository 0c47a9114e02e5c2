// Hybrid attention + mamba / linear-attention models in vLLM: which mamba cache mode
// "default" means, the recurrent state bytes per GPU, and the block-size adjustment of
// platforms/interface.py (formerly models/config.py HybridAttentionMambaModelConfig)
// that makes one attention page hold one state.
#include <algorithm>
#include <cstdio>
#include <iterator>

#include "base/arith.h"
#include "engines/vllm_steps.h"

namespace kvb::vllm_steps {

namespace {

// Whether the vLLM class serving `m` keeps a state per block under prefix caching in this release
// (MambaModelConfig.verify_and_update_config): in 0.11.1rc1 to rc3 its architecture is in MAMBA2_MODELS, from
// 0.11.1rc4 its class declares SupportsMambaPrefixCaching (interfaces.py; read at every tag to v0.27.1 and on main
// of 2026-08-21: bamba, falcon_h1, granitemoehybrid, jamba, mamba, mamba2, nemotron_h, zamba2). The class is
// found from the architecture the registry resolves, or, without one (a GGUF header), from the model_type, which
// names the module of each of these classes.
bool declares_mamba_prefix_caching(const ModelSpec& m, VllmMambaPrefix stage) {
    if (stage == VllmMambaPrefix::Off) return false;
    const bool list = stage == VllmMambaPrefix::Mamba2List;
    if (!m.architecture.empty()) {
        // Multimodal wrappers (NemotronH_Nano_VL_V2, ...) are classes of their own that declare nothing.
        static const char* const mamba2_list[] = {
            "BambaForCausalLM",  "FalconH1ForCausalLM",  "GraniteMoeHybridForCausalLM",
            "Mamba2ForCausalLM", "NemotronHForCausalLM", "Zamba2ForCausalLM"};
        static const char* const declared[] = {"BambaForCausalLM",
                                               "FalconH1ForCausalLM",
                                               "GraniteMoeHybridForCausalLM",
                                               "JambaForCausalLM",
                                               "JambaForSequenceClassification",
                                               "MambaForCausalLM",
                                               "FalconMambaForCausalLM",
                                               "Mamba2ForCausalLM",
                                               "NemotronHForCausalLM",
                                               "NemotronHPuzzleForCausalLM",
                                               "Zamba2ForCausalLM"};
        if (list)
            return std::find(std::begin(mamba2_list), std::end(mamba2_list), m.architecture) != std::end(mamba2_list);
        return std::find(std::begin(declared), std::end(declared), m.architecture) != std::end(declared);
    }
    static const char* const mamba2_types[] = {"bamba",  "falcon_h1",  "granitemoehybrid",
                                               "mamba2", "nemotron_h", "zamba2"};
    static const char* const declared_types[] = {"bamba", "falcon_h1", "granitemoehybrid", "jamba",
                                                 "mamba", "mamba2",    "nemotron_h",       "zamba2"};
    if (list)
        return std::find(std::begin(mamba2_types), std::end(mamba2_types), m.model_type) != std::end(mamba2_types);
    return std::find(std::begin(declared_types), std::end(declared_types), m.model_type) != std::end(declared_types);
}

}  // namespace

MambaCacheMode resolve_mamba_cache_mode(const ModelSpec& m, const VllmOptions& o, bool has_attn) {
    if (o.mamba_cache_mode != MambaCacheMode::Default) return o.mamba_cache_mode;
    // MambaModelConfig.verify_and_update_config: without prefix caching every mode is "none". Hybrids
    // have it on by default from 0.28.0 (VllmRelease::hybrid_prefix_caching), else only when asked.
    const bool prefix_caching = o.enable_prefix_caching >= 0 ? o.enable_prefix_caching == 1 : o.hybrid_prefix_caching;
    if (!prefix_caching || !has_attn) return MambaCacheMode::None;
    const bool declared = declares_mamba_prefix_caching(m, o.mamba_prefix);
    // From 0.28.0 prefix caching turns "none" into "align" whatever the class (Qwen3.5 / Qwen3-Next logs of 0.29
    // show it); before, "all" for a declaring class (0.20 and 0.21: "align" with speculative decoding) and "align"
    // for the rest (Qwen3.5 logs of 0.24 and 0.27 with --enable-prefix-caching), whose prefix caching was switched
    // off before 0.15 ("...without support for prefix caching: disabling"), and before 0.11.1 every hybrid's.
    if (declared && !o.mamba_align_default)
        return o.mamba_spec_align && o.num_speculative_tokens > 0 ? MambaCacheMode::Align : MambaCacheMode::All;
    if (o.mamba_prefix == VllmMambaPrefix::Off || (!declared && !o.mamba_align_mode)) return MambaCacheMode::None;
    return MambaCacheMode::Align;
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
        if (l.kind == LayerKind::Mla) return p.kv.bytes(l.kv_lora_rank + l.qk_rope_head_dim);
        // FullAttentionSpec of block 1 with kv_quant_mode (platforms/interface.py): K and V rows of head_size.
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
            const int64_t h = std::max<int64_t>(1, l.kv_heads / p.tp);
            return 2 * h * p.kv.bytes(l.k_head_dim);
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
    // Align to the kernel chunk, get_mamba_chunk_size: the config's, else its transformers class's default
    // (NemotronHConfig 128; Mamba2, Bamba, Falcon-H1, GraniteMoeHybrid, Zamba2 256) or 2048 for Mamba-1, which
    // has no chunk (Jamba, Mamba); 64 assumed for gated delta net, which refuses "all" anyway.
    int64_t chunk = 64;
    if (m.has(LayerKind::Mamba))
        chunk = m.mamba_chunk_size > 0                               ? m.mamba_chunk_size
                : m.model_type == "nemotron_h"                       ? 128
                : m.model_type == "jamba" || m.model_type == "mamba" ? 2048
                                                                     : 256;
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
