// The fitted estimates of the budget: activation peaks, runtime overhead, CUDA graphs,
// compute buffers, and vLLM's defaults that depend on the GPU. Formulas, calibration
// and sources: docs/budget-model.md.
#pragma once
#include <cstdint>

#include "model/model.h"

namespace kvb {

// Activation peak of vLLM's profile_run for one GPU: the dummy forward over
// max_num_batched_tokens tokens plus the dummy sampler over min(max_num_seqs, tokens)
// rows of logits, in the dtype the model is served in (`dtype_bytes`: a float32 checkpoint
// runs in bfloat16 under dtype auto). Only the last pipeline stage runs the sampler
// (profile_run: "if get_pp_group().is_last_rank"): `sampler` false for the stages before it.
// `expert_parallel`: the routed experts' caches are as wide as a whole expert (FusedMoE's TP is 1).
int64_t estimate_vllm_activation_bytes(const ModelSpec& m, int dtype_bytes, int64_t max_num_batched_tokens,
                                       int64_t max_num_seqs, int64_t tp, bool sampler = true,
                                       bool expert_parallel = false);
// Non-torch memory vLLM measures during profiling (cuBLAS/NCCL buffers, custom all-reduce).
int64_t estimate_vllm_overhead_bytes(int64_t tp, int64_t pp);
// CUDA graph memory newer vLLM subtracts (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS): 0.5 MiB
// per captured batch size per decoder layer of a stage of `stage_layers` layers (each pipeline
// stage captures its own).
int64_t estimate_vllm_cudagraph_bytes_for_layers(int64_t stage_layers, int64_t max_num_seqs,
                                                 int64_t max_num_batched_tokens, int64_t ceiling = 512,
                                                 bool captures_max_tokens = true);
// How many batch sizes vLLM captures by default (VllmConfig._set_cudagraph_sizes): `ceiling` is the platform's
// default largest size (1,024 on compute capability 10.x from 0.28.0, else 512); `captures_max_tokens` adds
// max_num_batched_tokens when it caps the sizes off their grid (0.20.1 on).
int64_t vllm_cudagraph_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t ceiling = 512,
                                     bool captures_max_tokens = true);
// vLLM's rotary cos/sin cache (counted in "Model loading took"): max_position x rotary_dim in
// the dtype the model is served in (`dtype_bytes`); 0 for a model with learned or ALiBi positions.
int64_t vllm_rotary_cache_bytes(const ModelSpec& m, int dtype_bytes);
// The vision encoder's own cos/sin cache (Qwen2-VL, Qwen2.5-VL, Qwen3-VL / Qwen3.5, GLM-4.1V / 4.5V from vLLM 0.12.0):
// 8,192 positions x dims.vision_rope_dim in the served dtype, on the first pipeline stage; 0 for other towers.
int64_t vllm_vision_rotary_cache_bytes(const ModelSpec& m, int dtype_bytes);
// transformers prefill of `batch` sequences of `tokens` tokens (SDPA attention, last-token logits).
int64_t estimate_transformers_activation_bytes(const ModelSpec& m, int64_t batch, int64_t tokens);
// llama.cpp compute buffer (flash attention on): the largest live set of one ubatch.
int64_t estimate_llamacpp_compute_bytes(const ModelSpec& m, int64_t n_ubatch);
// Runtime memory every GPU holds outside the model's tensors (CUDA context, allocator slack).
constexpr int64_t kRuntimeOverheadBytes = int64_t{512} << 20;

// vLLM's defaults for `vllm serve` (OpenAI server usage context), from the GPU memory:
// >= 160 GiB (`tier_160`: 0.28.0 on): 16384 batched tokens and 1024 sequences; >= 70 GiB (not A100): 8192 and 1024;
// else 2048 and 256.
int64_t vllm_default_max_num_batched_tokens(int64_t gpu_total_bytes, bool is_a100, bool tier_160 = true);
int64_t vllm_default_max_num_seqs(int64_t gpu_total_bytes, bool is_a100, bool tier_160 = true);

// Bytes per element of the checkpoint's dtype (16-bit unless the model is fp32): transformers'
// activations, since it runs the dtype it loads.
int model_dtype_bytes(const ModelSpec& m);

}  // namespace kvb
