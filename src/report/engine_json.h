// The JSON of the engine lines: `kvbudget vllm --json` (what vLLM logs for a KV cache
// size) and `kvbudget llamacpp --json` (llama.cpp's KV cache layout). Field names are
// the C++ member names; notes are Messages {code, params, text} as in every answer
// (src/report/json.h), the model's own notes first.
#pragma once
#include <string>

#include "engines/llamacpp.h"
#include "engines/vllm.h"
#include "model/model.h"

namespace kvb {

std::string to_json_text(const ModelSpec& m, const VllmCapacity& c);  // kvbudget vllm --json
// kvbudget llamacpp --json: the target's layout and its speculative draft context(s) (`draft`:
// spec_type "none" and no contexts without one).
std::string to_json_text(const ModelSpec& m, const LlamaLayout& l, const LlamaDraft& draft);

}  // namespace kvb
