// The steps of vllm_layout, shared by the files that hold them: vllm.cpp (options,
// lengths, tensor parallelism, per-layer specs), vllm_hybrid.cpp (mamba cache mode and
// the hybrid attention + state block size) and vllm_groups.cpp (KV-cache groups and
// what one block id costs per pipeline stage). Not a public header.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engines/vllm.h"

namespace kvb::vllm_steps {

// A refusal vLLM itself raises at start-up (its words in the code's template).
inline Error refuse(Message m) {
    return make_error("vllm_refused", std::move(m));
}
// Pages past int64 bytes: vLLM's Python ints would not wrap, but no GPU holds one block.
inline Error overflow(const std::string& model) {
    return make_error("overflow", note("engine_kv_overflow", {{"model", model}}));
}

// What the steps decide once and the later steps read.
struct Plan {
    std::string model;  // for the overflow refusal
    int64_t tp = 1, pp = 1, n_layers = 0;
    KvType kv;                    // the cache's element type; a row of n values takes kv.bytes(n)
    int64_t dt = 0;               // the cache tensor's storage bytes per element (uint8 for NVFP4's packed rows)
    bool sliding_uint8 = false;   // NVFP4 before PR #42464: SlidingWindowSpec paged one uint8 per value
    int conv_b = 0, ssm_b = 0;    // recurrent state element bytes (conv, ssm)
    int64_t num_spec = 0;         // speculative tokens (extra conv taps / state blocks)
    bool has_state = false;       // any Linear / Mamba layer
    bool has_attn = false;        // any Full / Sliding / Chunked / Mla layer
    bool ds_sparse = false;       // DeepSeek-V3.2 sparse MLA (64-token pages, indexer cache)
    bool fp8_ds_mla = false;      // ... with the packed fp8_ds_mla latent (656 B/token)
    bool disable_hybrid = false;  // one spec type for all layers (flag, Llama 4 chunked, V0)
    bool dsv4 = false;            // DeepSeek-V4: window, compressed, state and indexer caches per layer
    bool diffkv = true;           // VllmOptions::diffkv: sliding pages head_size + head_size_v
    bool pad_v = false;           // MiMo-V2 before 0.20: V padded to K's width in every layer
    MambaCacheMode mode = MambaCacheMode::None;
    int64_t attn_block = 16;        // tokens per attention block (after the hybrid adjustment)
    int64_t mamba_block = 0;        // tokens a state block stands for
    int64_t mamba_page_padded = 0;  // state page padded to the attention page (0: unpadded)
    std::vector<int> rank;          // pipeline stage of each ModelSpec layer
};

// --- vllm_hybrid.cpp ---
// MambaModelConfig.verify_and_update_config: what "default" means for this model.
MambaCacheMode resolve_mamba_cache_mode(const ModelSpec& m, const VllmOptions& o, bool has_attn);
// Mamba / gated-delta-net state per GPU, as mamba_utils.*_state_shape build it.
void state_bytes_per_gpu(const Layer& l, int64_t tp, int64_t num_spec, int conv_b, int ssm_b, int64_t* conv,
                         int64_t* ssm);
// Hybrid attention + state: grow the attention block until its page holds one state, pad
// the state page to it, and log vLLM's two INFO lines. Sets p.attn_block, p.mamba_block,
// p.mamba_page_padded.
void unify_hybrid_block(const ModelSpec& m, const VllmOptions& o, Plan& p, VllmLayout& L);

// --- vllm_groups.cpp ---
// kv_cache_utils.get_kv_cache_groups on L.layers: one group for identical specs, one
// UniformTypeKVCacheSpecs group, or page sizes unified and layers grouped with padding.
Result<bool> group_layers(const Plan& p, VllmLayout& L);
// Per pipeline stage: what one block id costs there (L.stage_bytes_per_block, L.bytes_per_block).
void stage_costs(const Plan& p, VllmLayout& L);

}  // namespace kvb::vllm_steps
