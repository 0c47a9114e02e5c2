// Budget: GPU memory -> weights + activation peak + non-torch overhead (+ CUDA graphs)
// -> KV-cache pool -> blocks / tokens (vLLM) or cells (llama.cpp); does --max-model-len
// fit, the longest context and the most concurrent sequences that fit, the engine
// command line to use, and a decode-speed upper bound from memory bandwidth.
// The activation / overhead / CUDA-graph figures are models (docs/budget-model.md);
// every one of them can be overridden by the caller.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "budget/gpus.h"
#include "engines/llamacpp.h"
#include "model/model.h"
#include "base/result.h"
#include "engines/vllm.h"
#include "model/weights.h"

namespace kvb {

enum class BudgetEngine { Vllm, LlamaCpp, Transformers };
Result<BudgetEngine> parse_budget_engine(const std::string& s);  // vllm | llamacpp (llama.cpp) | transformers
const char* to_string(BudgetEngine e);

struct BudgetInputs {
    BudgetEngine engine = BudgetEngine::Vllm;
    // Hardware: a catalog id, or an explicit per-GPU memory size (wins when both are set).
    std::string gpu;                 // catalog id or alias ("rtx-4090", "h100")
    int64_t gpu_memory_bytes = 0;    // per GPU total as the engine sees it
    int64_t gpu_count = 1;
    double gpu_memory_utilization = 0;  // 0 = engine default (vLLM 0.9; llama.cpp 1.0)
    // Weights
    std::string weights = "auto";    // see weight_format()
    int64_t params = 0;              // exact parameter count (e.g. the Hub's safetensors total); 0 = count
    // Serving knobs (0 / "" = engine default)
    int64_t max_model_len = 0;       // vLLM --max-model-len; llama.cpp: context per sequence
    int64_t max_num_seqs = 0;        // vLLM --max-num-seqs; llama.cpp -np
    std::string kv_cache_dtype;      // vLLM: auto|fp8|...; llama.cpp: -ctk f16|q8_0|... (and -ctv unless set below)
    std::string kv_cache_dtype_v;    // llama.cpp -ctv when it differs from -ctk ("" = same)
    int64_t tensor_parallel_size = 0;    // 0 = gpu_count / pipeline_parallel_size
    int64_t pipeline_parallel_size = 1;
    int64_t max_num_batched_tokens = 0;
    int64_t block_size = 0;
    bool enforce_eager = false;      // no CUDA graphs
    // Model overrides (< 0 = estimate). Per GPU.
    int64_t activation_bytes = -1;
    int64_t overhead_bytes = -1;
    int64_t cudagraph_bytes = -1;
    // llama.cpp
    int64_t n_ubatch = 512;
};

struct DecodeBound {
    int64_t context = 0;               // tokens already in the sequence
    int64_t weight_bytes_per_token = 0;  // active weights read per step, per GPU
    int64_t kv_bytes_per_token = 0;      // KV read per step for one sequence, per GPU
    double tokens_per_s_single = 0;    // one sequence
    int64_t batch = 0;                 // sequences decoded together (max concurrency, capped by max_num_seqs)
    double tokens_per_s_batch = 0;     // aggregate upper bound at that batch
};

struct BudgetResult {
    BudgetEngine engine = BudgetEngine::Vllm;
    std::string model;                 // ModelSpec::name
    std::string gpu_id, gpu_name;      // empty id when --gpu-memory was given
    int64_t gpu_total_bytes = 0;       // per GPU, what the engine sees as total
    int64_t gpu_count = 1;
    int64_t tp = 1, pp = 1;
    double gpu_memory_utilization = 0.9;
    int64_t requested_bytes = 0;       // per GPU: total * utilization
    WeightBytes weights;
    int64_t weights_per_gpu_bytes = 0; // heaviest (tp, pp) rank, incl. vLLM's rotary cache
    int64_t activation_bytes = 0;      // per GPU
    int64_t overhead_bytes = 0;        // per GPU (non-torch: CUDA/NCCL buffers; llama.cpp: runtime)
    int64_t cudagraph_bytes = 0;       // per GPU
    bool activation_estimated = true, overhead_estimated = true, cudagraph_estimated = true;
    int64_t kv_pool_bytes = 0;         // per GPU, may be <= 0 (then nothing fits)
    int64_t max_num_batched_tokens = 0;
    int64_t max_num_seqs = 0;          // resolved (user's or the engine default)
    int64_t max_model_len = 0;         // resolved (user's or the model's limit)
    int64_t model_max_len = 0;         // max_position_embeddings
    std::string kv_cache_dtype;        // resolved name (llama.cpp: the K type)
    std::string kv_cache_dtype_v;      // llama.cpp: the V type
    // vLLM
    VllmCapacity capacity;             // blocks, tokens, concurrency, start-up lines, vLLM's error
    // llama.cpp
    LlamaLayout llama;                 // KV layout at the resolved context / sequences
    int64_t compute_buffer_bytes = 0;  // llama.cpp compute buffer estimate
    int64_t llama_total_bytes = 0;     // weights + KV + compute + overhead (llama.cpp and transformers)
    // transformers (generate() with the default DynamicCache, batch = max_num_seqs)
    int64_t cache_bytes = 0;           // DynamicCache at max_model_len for the batch
    int64_t cache_transient_bytes = 0; // one layer's torch.cat copy while the cache grows
    std::string transformers_snippet;  // Python that loads the model as sized
    // Answers
    bool fits = false;                 // one request of max_model_len fits (vLLM starts)
    bool all_seqs_fit = false;         // max_num_seqs requests of max_model_len fit at once
    int64_t max_context = 0;           // longest context that fits for `context_seqs` sequences
    int64_t context_seqs = 1;
    bool max_context_capped = false;   // stopped at the model's limit, not at memory
    int64_t max_concurrency = 0;       // most sequences of max_model_len tokens held at once
    double vllm_concurrency = 0;       // vLLM's printed "Maximum concurrency" (num_blocks / blocks per request)
    DecodeBound decode;
    std::string vllm_command;
    std::string llama_command;
    std::string error_text;            // the engine's own refusal when !fits
    std::vector<std::string> notes;
};

// Activation peak of vLLM's profile_run for one GPU: the dummy forward over
// max_num_batched_tokens tokens plus the dummy sampler over min(max_num_seqs, tokens)
// rows of logits. See docs/budget-model.md for the formula and its calibration.
int64_t estimate_vllm_activation_bytes(const ModelSpec& m, int64_t max_num_batched_tokens, int64_t max_num_seqs,
                                       int64_t tp);
// Non-torch memory vLLM measures during profiling (cuBLAS/NCCL buffers, custom all-reduce).
int64_t estimate_vllm_overhead_bytes(int64_t tp, int64_t pp);
// CUDA graph memory newer vLLM subtracts (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS):
// 0.5 MiB per captured batch size per decoder layer of the heaviest stage.
int64_t estimate_vllm_cudagraph_bytes(const ModelSpec& m, int64_t pp, int64_t max_num_seqs, int64_t max_num_batched_tokens);
// How many batch sizes vLLM captures by default (CompilationConfig capture sizes).
int64_t vllm_cudagraph_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens);
// vLLM's rotary cos/sin cache (counted in "Model loading took"): max_position x rotary_dim in the model dtype.
int64_t vllm_rotary_cache_bytes(const ModelSpec& m);
// transformers prefill of `batch` sequences of `tokens` tokens (SDPA attention, last-token logits).
int64_t estimate_transformers_activation_bytes(const ModelSpec& m, int64_t batch, int64_t tokens);
// llama.cpp compute buffer (flash attention on): the largest live set of one ubatch.
int64_t estimate_llamacpp_compute_bytes(const ModelSpec& m, int64_t n_ubatch);

// vLLM's defaults for `vllm serve` (OpenAI server usage context), from the GPU memory:
// >= 70 GiB (not A100): 8192 batched tokens and 1024 sequences; else 2048 and 256.
int64_t vllm_default_max_num_batched_tokens(int64_t gpu_total_bytes, bool is_a100);
int64_t vllm_default_max_num_seqs(int64_t gpu_total_bytes, bool is_a100);

Result<BudgetResult> compute_budget(const ModelSpec& m, const BudgetInputs& in);

// Whichever engine the budget is for: the start-up lines it will print (none for
// transformers) and the command (or Python snippet) to run it as sized.
const std::vector<std::string>& budget_log_lines(const BudgetResult& r);
const std::string& budget_command(const BudgetResult& r);

}  // namespace kvb
