// transformers' default DynamicCache: what generate() keeps per sequence.
// MLA models (DeepSeek-V2/V3, Kimi K2) are cached decompressed, per query head;
// sliding / chunked layers (DynamicSlidingWindowLayer) keep the last window-1 tokens;
// gated-delta-net and Mamba layers keep their conv and recurrent states.
#pragma once
#include <cstdint>
#include <string>

#include "base/result.h"
#include "model/model.h"

namespace kvb {

struct TransformersCache {
    int64_t dtype_bytes = 2;               // the model's loaded dtype
    int64_t bytes_per_token = 0;           // Full + MLA (decompressed) layers, per token
    int64_t windowed_bytes_per_token = 0;  // Sliding / Chunked layers while the context is inside the window
    int64_t state_bytes = 0;               // per sequence, linear-attention and Mamba layers
    int64_t full_layers = 0, windowed_layers = 0, state_layers = 0;
};

// dtype: "" = the config's dtype (float32 checkpoints stay float32, as transformers loads them).
Result<TransformersCache> transformers_cache(const ModelSpec& m, const std::string& dtype = "");

// Bytes the DynamicCache holds after `tokens` tokens for `batch` sequences.
Result<int64_t> transformers_cache_bytes(const ModelSpec& m, int64_t tokens, int64_t batch,
                                         const std::string& dtype = "");

}  // namespace kvb
