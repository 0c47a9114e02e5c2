// GGUF metadata -> ModelSpec, read the way llama.cpp's llama_model::load_hparams reads
// the same keys, so the llama.cpp lines computed from the spec are the ones llama.cpp
// prints for that file. Weights and parameters come from the tensor infos, exactly.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/gguf.h"
#include "model/model.h"

namespace kvb {

// One GGUF file. `name` is used in messages and as ModelSpec::name.
Result<ModelSpec> spec_from_gguf(const GgufHeader& h, const std::string& name);

// A split model (*-00001-of-0000N.gguf): the first shard's metadata, every shard's
// tensors. Shards must be given in order and all be present (split.count, split.no,
// split.tensors.count are checked).
Result<ModelSpec> spec_from_gguf_shards(const std::vector<GgufHeader>& shards, const std::string& name);

// llama.cpp's print_info lines for a file: "4.58 GiB (4.89 BPW)" (MiB below 1 GiB)
// and "8.03 B" (T / B / M / K), from the exact tensor bytes and elements.
std::string llamacpp_file_size(int64_t bytes, int64_t elements);
std::string llamacpp_model_params(int64_t elements);
// "llama_model_loader: - type q4_K:  193 tensors" lines (without the prefix: "type q4_K:  193 tensors").
std::vector<std::string> llamacpp_type_lines(const GgufWeights& w);

// Split shard names: "x-00001-of-00003.gguf" -> {"x-00001-of-00003.gguf", "x-00002-of-00003.gguf", ...};
// empty when the name is not a first shard.
std::vector<std::string> gguf_shard_names(const std::string& first);

}  // namespace kvb
