// Ideal KV cache: what the model needs, before any engine's rounding or grouping.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "model/model.h"

namespace kvb {

struct KvDtypes {
    KvType k;
    KvType v;
    // Recurrent state is not the KV cache: conv and ssm states keep their own dtypes
    // (vLLM: mamba_cache_dtype / mamba_ssm_cache_dtype; llama.cpp: always f32).
    int conv_state_bytes = 2;
    int ssm_state_bytes = 2;
};

// Same K/V type for both, state in the model's dtype (ssm in f32 when the config says so).
KvDtypes uniform_kv_dtypes(const ModelSpec& m, const KvType& t);

// Bytes one token adds to one attention layer (Full/Sliding/Chunked: K and V rows;
// Mla: the single latent row, K type). 0 for state and None layers.
int64_t layer_bytes_per_token(const Layer& l, const KvDtypes& d);
// Bytes one token adds while it is inside a layer's window: a Sliding / Chunked layer's K and V, a
// DeepSeek-V4 layer's uncompressed latent (kept for its last `window` tokens, besides the compressed part
// layer_bytes_per_token gives). 0 otherwise.
int64_t layer_window_bytes_per_token(const Layer& l, const KvDtypes& d);
// Fixed per-sequence state bytes of a Linear/Mamba layer (conv + ssm). 0 otherwise.
int64_t layer_state_bytes(const Layer& l, const KvDtypes& d);

struct KindSummary {
    LayerKind kind;
    int64_t layers = 0;
    int64_t bytes_per_token = 0;         // summed over the layers of this kind
    int64_t window_bytes_per_token = 0;  // DeepSeek-V4 Mla layers: their windowed latents, summed
    int64_t window = 0;                  // Sliding/Chunked: the (largest) window
    int64_t state_bytes = 0;             // Linear/Mamba: per sequence, summed
};

struct IdealKv {
    int64_t bytes_per_token = 0;  // context-proportional part (Full + Mla layers), one sequence
    // Sliding + Chunked layers (and DeepSeek-V4's windowed latents) while the context is inside the window
    int64_t windowed_bytes_per_token = 0;
    int64_t state_bytes_per_seq = 0;  // Linear + Mamba layers, fixed
    std::vector<KindSummary> kinds;
};

IdealKv ideal_kv(const ModelSpec& m, const KvDtypes& d);

// Bytes for `seqs` sequences of `context` tokens each (windows capped, state added).
// Error when the result does not fit in int64.
Result<int64_t> kv_bytes_at(const ModelSpec& m, const KvDtypes& d, int64_t context, int64_t seqs);

// The same model with every attention layer as MHA (kv_heads = attention heads)
// or MQA (kv_heads = 1). MLA layers become their decompressed MHA/MQA equivalent.
ModelSpec with_kv_heads(const ModelSpec& m, int64_t kv_heads_or_0_for_mha);

// Smallest context at which KV for `seqs` sequences exceeds `weights_bytes`; 0 if never
// (within 2^40 tokens: state-only or window-only models).
int64_t crossover_context(const ModelSpec& m, const KvDtypes& d, int64_t weights_bytes, int64_t seqs);

}  // namespace kvb
