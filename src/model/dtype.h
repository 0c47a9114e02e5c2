// KV-cache element types with exact storage sizes. Block-quantized llama.cpp
// types store `block_values` values in `block_bytes` bytes, so bytes are always
// computed per whole row of values, never by a fractional bytes-per-element.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace kvb {

struct KvType {
    std::string name;  // the engine's own spelling: "fp8", "q8_0", "bfloat16", "f16"
    int64_t block_values = 1;
    int64_t block_bytes = 2;
    // Bytes to store a row of `n` values. Engines only allow rows that are whole
    // blocks; a partial block is rounded up rather than silently dropped.
    int64_t bytes(int64_t n) const { return (n + block_values - 1) / block_values * block_bytes; }
    bool is_block_quantized() const { return block_values > 1; }
};

// Bytes per element of a model dtype name ("bfloat16", "float16", "float32", ...); 0 if unknown.
int dtype_size(const std::string& dtype);

// The element type of a vLLM --kv-cache-dtype whose cache kvbudget sizes: auto (the checkpoint's dtype, float32
// served in 16-bit), bfloat16, float16, fp8, fp8_e4m3, fp8_e5m2, fp8_ds_mla, and nvfp4 / nvfp4_4over6 (16 values in
// 9 bytes: 8 of packed 4-bit values and one fp8 block scale). Which spellings a release takes, and for which models
// and GPUs, is engines/vllm.h's vllm_kv_cache_dtype and vllm_nvfp4_kv_refusal.
Result<KvType> vllm_kv_type(const std::string& name, const std::string& model_dtype);
// The ones the page offers (the newest vLLM's, any model and GPU): auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2.
const std::vector<std::string>& vllm_kv_type_names();
// KV cache dtype "auto" of a model served in `served_dtype` (--dtype, or what dtype auto picked for the GPU):
// that dtype, float32 included (Gemma 3 on a T4).
KvType vllm_auto_kv_type(const std::string& served_dtype);
// Choices as Python's argparse lists them in "invalid choice" errors: 'auto', 'fp8'.
std::string argparse_choices(const std::vector<std::string>& choices);
// transformers' DynamicCache holds the loaded dtype: auto (the checkpoint's), bfloat16, float16, float32.
const std::vector<std::string>& transformers_kv_type_names();

// llama.cpp -ctk / -ctv: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl.
Result<KvType> llamacpp_kv_type(const std::string& name);
const std::vector<std::string>& llamacpp_kv_type_names();

}  // namespace kvb
