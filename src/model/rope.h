// RoPE scaling and the context limits each engine derives from it. vLLM multiplies the
// config's length by the scaling factor (YaRN: original_max_position_embeddings x factor)
// except for llama3 / longrope / su and Gemma 3 (already scaled); llama.cpp keeps
// n_ctx_train = the GGUF context_length (= max_position_embeddings) and only warns past it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "model/model.h"

namespace kvb {

// "yarn:4", "yarn:4:32768", "linear:2", "dynamic:2" (the CLI's --rope-scaling and the
// page's `rope` parameter); "" = as the config says. Original length 0 = the default:
// the config's own, the model card's, or max_position_embeddings.
Result<RopeScaling> parse_rope_scaling(const std::string& text);
std::string rope_scaling_text(const RopeScaling& r);  // the same spelling back: "yarn:4:32768"

// The scaling a model card documents for this model when its config.json leaves it out
// (Qwen3: YaRN x4 from 32,768 -> 131,072); empty when none is known.
std::optional<RopeScaling> documented_rope_scaling(const ModelSpec& m);

// `m` with the user's scaling in place of the config's (original length filled in).
ModelSpec with_rope_scaling(const ModelSpec& m, const RopeScaling& r);

struct ContextLimits {
    int64_t native = 0;        // max_position_embeddings (0 = the config has none)
    double vllm_derived = 0;   // vLLM's derived_max_model_len (after RoPE scaling)
    bool vllm_scaled = false;  // a RoPE factor multiplied it (vLLM then holds a float)
    std::string vllm_key;      // the key vLLM names in its refusal
    int64_t vllm_default = 0;  // vLLM's max_model_len without --max-model-len (LongRoPE: the original)
    int64_t n_ctx_train = 0;   // llama.cpp's training context
    int64_t max_len = 0;       // the model's longest context for this answer: int(vllm_derived)
};
ContextLimits context_limits(const ModelSpec& m);

// Python's str() of a float, as vLLM prints derived_max_model_len: "131072.0", "81920.5".
std::string py_float_text(double v);

}  // namespace kvb
