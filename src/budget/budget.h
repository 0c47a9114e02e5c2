// Budget: GPU memory -> weights + activation peak + runtime overhead (+ CUDA graphs)
// -> KV-cache pool -> blocks / tokens (vLLM) or cells (llama.cpp); does the context fit,
// the longest context and the most concurrent requests that fit, the engine command
// to use, and a decode-speed upper bound from memory bandwidth. Every part is per GPU:
// vLLM shards by tensor and pipeline parallelism, llama.cpp (-sm layer) and
// transformers (device_map="auto") spread layers, so each GPU holds its share.
// The activation / overhead / CUDA-graph figures are models (docs/budget-model.md);
// every one of them can be overridden by the caller.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/message.h"
#include "base/result.h"
#include "budget/estimates.h"
#include "budget/gpus.h"
#include "engines/llamacpp.h"
#include "engines/vllm.h"
#include "model/model.h"
#include "model/weights.h"

namespace kvb {

enum class BudgetEngine { Vllm, LlamaCpp, Transformers };
Result<BudgetEngine> parse_budget_engine(const std::string& s);  // vllm | llamacpp (llama.cpp) | transformers
const char* to_string(BudgetEngine e);

// What a user asks, from CLI flags or the page's controls; 0 / "" = the engine's default.
// validate() is the one place these are checked: the faces only carry them.
struct BudgetInputs {
    BudgetEngine engine = BudgetEngine::Vllm;
    // Hardware: a catalog id, or an explicit per-GPU memory size (wins when both are set).
    std::string gpu;               // catalog id or alias ("rtx-4090", "h100")
    int64_t gpu_memory_bytes = 0;  // per GPU total as the engine sees it
    int64_t gpu_count = 1;
    // GPUs that differ: each one's total memory (gpu_count of them; empty: gpu_count alike).
    // llama.cpp's --fit and its default split use each; the rest of the budget, which assumes
    // alike GPUs, uses the smallest.
    std::vector<int64_t> gpu_memory_each;
    double gpu_memory_utilization = 0;  // 0 = engine default (vLLM: the release's, 0.92 from 0.20.0 and 0.9
                                        // before; llama.cpp and transformers 1.0)
    // Weights
    std::string weights = "auto";  // see weight_format()
    int64_t params = 0;            // exact parameter count (e.g. the Hub's safetensors total); 0 = count
    // params came from the Hub, not from the user: a count far from the config's is set aside
    // with a note instead of refused (the page sets this; the CLI's --params is the user's word).
    bool params_from_hub = false;
    // What is served
    int64_t context = 0;  // tokens per sequence (vLLM --max-model-len, llama.cpp -c / -np); 0 = the model's limit
    int64_t seqs = 1;     // requests served at once (llama.cpp -np, transformers batch size)
    // RoPE scaling the engine is told to apply ("yarn:4", "yarn:4:32768"; model/rope.h);
    // "" = as config.json says. vLLM gets --hf-overrides, llama.cpp --rope-scaling flags.
    std::string rope_scaling;
    // Engine knobs (0 / "" = engine default)
    int64_t max_num_seqs = 0;          // vLLM --max-num-seqs: default for the GPU, raised to `seqs` when below
    std::string kv_cache_dtype;        // vLLM: auto|fp8|...; llama.cpp: -ctk f16|q8_0|... (and -ctv unless set below)
    std::string kv_cache_dtype_v;      // llama.cpp -ctv when it differs from -ctk ("" = same)
    int64_t tensor_parallel_size = 0;  // 0 = gpu_count / pipeline_parallel_size (vLLM)
    int64_t pipeline_parallel_size = 1;
    // vLLM --enable-expert-parallel: each MoE layer's routed experts placed whole over the tensor-parallel ranks
    // instead of split within (weights.h ExpertParallel). vLLM only: llama.cpp and transformers refuse it.
    bool expert_parallel = false;
    std::string pp_layer_partition;  // vLLM's VLLM_PP_LAYER_PARTITION ("15,17"); "" = get_pp_indices' split
    // vLLM --speculative-config (its JSON, or the Python dict its logs print): the drafter's attention layers
    // take pages from the same KV pool (vllm_with_drafter); a draft_model method needs the draft's config.
    std::string speculative_config;
    // The engine's release ("0.20.1", "vllm=0.20.1"; llama.cpp "b6500"): every version-dependent format and
    // number follows it (engines/engine_version.h; vllm_release, llama_log_format_for_version); "" = the newest.
    std::string engine_version;
    // llama.cpp speculative decoding (llama-server's own flags): --spec-type (draft-simple and
    // draft-eagle3 need the draft model's config, compute_budget's `draft`; draft-mtp uses the
    // model's own MTP block; ngram-* caches nothing), --spec-draft-n-max (the target's recurrent
    // rollback snapshots for MTP / EAGLE-3) and -ctkd / -ctvd ("" = f16).
    std::string spec_type;
    int64_t spec_draft_n_max = 3;
    std::string spec_draft_type_k, spec_draft_type_v;
    int64_t max_num_batched_tokens = 0;
    int64_t block_size = 0;
    bool enforce_eager = false;  // no CUDA graphs
    // Model overrides (< 0 = estimate). Per GPU.
    int64_t activation_bytes = -1;
    int64_t overhead_bytes = -1;
    int64_t cudagraph_bytes = -1;
    int64_t n_ubatch = 512;  // llama.cpp -ub
    // llama.cpp partial offload: -ngl N, the output layer and the last N - 1 repeating layers
    // on the GPU (-1 = all, llama.cpp's default; n_layer + 1 = every layer), and the system
    // RAM that must hold the rest (0 = not checked). --no-kv-offload keeps every layer's KV in RAM.
    int64_t n_gpu_layers = -1;
    int64_t ram_bytes = 0;
    bool no_kv_offload = false;
    // Mac: sudo sysctl iogpu.wired_limit_mb=N (MiB) in force; 0 = macOS's default limit.
    int64_t wired_limit_mb = 0;
    // llama.cpp: the file's Hub reference "org/repo:QUANT": the command says -hf with it, not -m.
    std::string hf_ref;
    // llama.cpp's automatic fitting (--fit on, the default since late 2025): -fitt, the MiB
    // it keeps free per device, and -fitc, the smallest context it will shrink to.
    int64_t fit_target_mb = 1024;
    int64_t fit_ctx = 4096;
    // System RAM bandwidth (bytes/s) for the layers llama.cpp keeps on the CPU; 0 = the
    // assumption kDefaultRamBandwidth (dual-channel DDR5-5600), or the GPU's on unified memory.
    double ram_bandwidth_bytes_per_s = 0;
};

// What the decode-speed bound assumes system RAM reads at when layers stay on the CPU and
// the user gave no --ram-bandwidth: dual-channel DDR5-5600, 2 x 8 bytes x 5.6e9 transfers/s.
constexpr double kDefaultRamBandwidth = 89.6e9;

// Bounds of every count and size in BudgetInputs: the page builds its controls from
// this table (name is the JSON field), the CLI and the page are refused by the same check.
struct InputLimit {
    const char* name;  // JSON field of BudgetInputs
    const char* flag;  // the CLI flag that sets it
    int64_t min, max;
};
const std::vector<InputLimit>& budget_input_limits();
Result<bool> validate(const BudgetInputs& in);

struct DecodeBound {
    int64_t context = 0;                 // tokens already in the sequence
    int64_t weight_bytes_per_token = 0;  // active weights read per step, per GPU
    int64_t kv_bytes_per_token = 0;      // KV read per step for one sequence, per GPU
    double bandwidth_bytes_per_s = 0;    // of the GPU (0: unknown, no bound)
    double tokens_per_s_single = 0;      // one sequence
    int64_t batch = 0;                   // sequences decoded together (max concurrency, capped by max_num_seqs)
    double tokens_per_s_batch = 0;       // aggregate upper bound at that batch
    // llama.cpp with layers on the CPU (-ngl below all): those layers' bytes are read from
    // system RAM at ram_bandwidth_bytes_per_s; the GPU's share stays in the two fields above.
    int64_t cpu_weight_bytes_per_token = 0;
    int64_t cpu_kv_bytes_per_token = 0;
    double ram_bandwidth_bytes_per_s = 0;  // 0 when nothing is read from system RAM
    bool ram_bandwidth_assumed = false;    // kDefaultRamBandwidth, not the user's
};

// One GPU's memory as the bar shows it. vLLM: the rank that holds the most for the asked
// context (with pipeline parallelism, the stage with the largest total); llama.cpp and
// transformers: an even share of the layers (weights and KV) plus what every device
// holds whole (compute buffer, runtime).
struct PerGpu {
    int64_t capacity_bytes = 0;  // total as the engine sees it
    int64_t usable_bytes = 0;    // capacity x utilization
    int64_t weights_bytes = 0;
    int64_t kv_bytes = 0;  // what the asked context x seqs needs (not the pool)
    int64_t activation_bytes = 0;
    int64_t overhead_bytes = 0;  // runtime (+ CUDA graphs)
    int64_t total_bytes = 0;     // sum of the four (saturating)
    int64_t free_bytes = 0;      // capacity - total (negative: over capacity)
    // What the engine may not use: total - usable when positive (vLLM: past capacity x
    // gpu_memory_utilization), else 0. The bar says this, not "free", when it is above 0.
    int64_t over_usable_bytes = 0;
};

// vLLM: one pipeline stage's GPU as its own worker sees it (gpu_worker.determine_available_memory runs
// on every worker: the weights differ by stage, and only the last stage runs the sampler), and what it
// holds once the engine keeps the fewest blocks over workers (kv_cache_utils.get_kv_cache_configs).
struct VllmStage {
    int64_t layers = 0;              // decoder layers of the target (a drafter's join the last stage)
    int64_t weights_bytes = 0;       // one GPU of the stage: its layers' share, the rotary cache, a drafter's
    int64_t activation_bytes = 0;    // profile peak (the sampler's logits on the last stage only)
    int64_t overhead_bytes = 0;      // non-torch + CUDA graphs (its own layers' graphs)
    int64_t kv_available_bytes = 0;  // what its profile leaves for the KV cache (<= 0: none)
    int64_t num_blocks = 0;          // the blocks that memory alone would hold
    int64_t kv_bytes = 0;            // what it allocates: the engine's num_blocks x its bytes per block
    int64_t used_bytes = 0;          // weights + activation + overhead + kv_bytes (saturating)
    bool limiting = false;           // its blocks are the engine's num_blocks
};

// llama.cpp with -ngl / --no-kv-offload / a RAM budget: what sits on the GPU(s) and what in
// system RAM (weights of the CPU layers are mmapped from the file and resident once read).
struct LlamaOffload {
    bool active = false;       // partial offload asked for (-ngl, --ram, --no-kv-offload)
    int64_t n_layer = 0;       // repeating layers (block_count)
    int64_t n_gpu_layers = 0;  // resolved -ngl, at most n_layer + 1 (the output layer)
    // The slots -ngl counts: the repeating layers and the output layer (llama_model::load_tensors
    // offloads the output layer first), and of the repeating layers how many -ngl puts on the GPU.
    int64_t n_slots = 0;
    int64_t gpu_repeating_layers = 0;
    bool output_on_gpu = false;
    bool kv_offload = true;
    bool estimated = false;         // per-layer split by parameter shares (config, not a GGUF file)
    int64_t gpu_weights_bytes = 0;  // all GPUs
    int64_t cpu_weights_bytes = 0;
    // Of those, what a decode step reads: the CPU's layers and output layer, not the input
    // layer (token embeddings: one row per token).
    int64_t cpu_read_weights_bytes = 0;
    int64_t gpu_kv_bytes = 0;  // all GPUs
    int64_t cpu_kv_bytes = 0;
    int64_t ram_bytes = 0;       // given system RAM (0 = not checked)
    int64_t ram_need_bytes = 0;  // CPU weights + CPU KV
    bool ram_fits = true;
    int64_t max_gpu_layers = -1;  // largest -ngl whose GPU share fits at this context and seqs (-1: none)
};

// What llama.cpp's automatic fitting (common_params_fit_impl in common/fit.cpp; before
// 2026 llama_params_fit_impl in src/llama.cpp) chooses on its own: with no -c it shrinks the
// context (linearly between -fitc and the training context) until the device keeps -fitt MiB
// free; if even -fitc does not fit and no -ngl was given, it fills layers back to front (the
// output layer first; a MoE's experts in system RAM first; several GPUs from the last).
struct LlamaFit {
    // "unchanged" (fits as asked), "context" (a smaller -c), "layers" (-fitc and fewer
    // layers on the GPU), "failed" (-ngl was given: llama.cpp stops fitting and loads as
    // asked), "not_predicted" (kept for a model whose layer split cannot be measured; current
    // inputs always reach one of the others).
    std::string outcome;
    int64_t free_bytes = 0;                // free device memory at start: usable minus the runtime (summed
                                           // over several GPUs, as used_bytes and projected_bytes are)
    int64_t target_bytes = 0;              // -fitt
    int64_t projected_bytes = 0;           // device use with the asked (or default) -c and -ngl
    int64_t n_ctx = 0;                     // cells llama.cpp allocates after fitting (all sequences)
    int64_t context = 0;                   // per sequence: n_ctx / seqs
    int64_t n_gpu_layers = 0;              // -ngl after fitting (n_layer + 1: every layer)
    int64_t overflow_layers = 0;           // of those, MoE slots with FFN tensors in system RAM (-ot), as
                                           // llama.cpp counts them: the output slot (no experts) included
    int64_t used_bytes = 0;                // device use at the fitted -c and -ngl
    std::vector<int64_t> device_layers;    // several GPUs: slots per device after fitting (-ts)
    std::vector<int64_t> device_overflow;  // several GPUs: of device_layers, the MoE slots with FFN tensors
                                           // in system RAM or on the next GPU (output slot included)
    std::vector<int64_t> device_free;      // several GPUs: each one's free memory at start
    std::vector<int64_t> device_used;      // several GPUs: each one's use at the fitted -c and -ngl
    int64_t slots = 1;                     // server slots (-np) the cells serve
    bool kv_unified = false;               // one stream shared by the slots (llama-server's auto -np)
    std::string flags;                     // "-c N -ngl M": the same choice made explicit
    std::vector<std::string> log_lines;    // what llama-server prints while fitting
    // Not in the JSON: the split as chosen, so the budget can measure it at other contexts. Per
    // device, which fraction its first partial layer loses (budget_steps::FitFraction as an int)
    // and whether that fraction goes to the next device instead of system RAM.
    std::vector<int> device_fraction;
    // char, not bool: vector<bool>'s bit references were ~4.5 KB of the page's calculator
    // module (issue 13); the same goes for the fit's other per-device flags.
    std::vector<char> device_next;
};

// Where a llama.cpp decode step reads from when part of the model sits in system RAM, all GPUs together: the weights
// a step reads leave out the input layer's table (one row per token); of the routed experts (cpu_experts of
// cpu_read_weights, experts in all) it reads the routed share.
struct ReadSplit {
    int64_t gpu_weights = 0, cpu_read_weights = 0, gpu_kv = 0, cpu_kv = 0;
    int64_t cpu_experts = 0, experts = 0;
};

struct BudgetResult {
    BudgetEngine engine = BudgetEngine::Vllm;
    std::string model;             // ModelSpec::name
    std::string gpu_id, gpu_name;  // empty id when a memory size was given
    int64_t gpu_total_bytes = 0;   // per GPU, what the engine sees as total
    int64_t gpu_count = 1;
    int64_t mac_ram_bytes = 0;  // a Mac: its unified RAM (gpu_total_bytes is what Metal may wire)
    int64_t tp = 1, pp = 1;
    // vLLM's expert-parallel group (1: none, or asked where it does nothing: a dense model, one GPU) and the routed
    // experts of a MoE layer on its fullest rank (0 without expert parallelism).
    int64_t ep = 1, ep_local_experts = 0;
    double gpu_memory_utilization = 0.92;
    // The engine's own default: vLLM's for the release (VllmRelease; 0.92 from 0.20.0, 0.9 before), 1.0 for the
    // others. The vLLM command carries --gpu-memory-utilization exactly when the fraction used differs from it.
    double gpu_memory_utilization_default = 0.92;
    int64_t requested_bytes = 0;  // per GPU: total * utilization
    WeightBytes weights;
    int64_t weights_per_gpu_bytes = 0;  // heaviest rank (vLLM: incl. its rotary cache)
    int64_t activation_bytes = 0;       // per GPU (llama.cpp: the compute buffer; vLLM: the last stage's)
    int64_t overhead_bytes = 0;         // per GPU (non-torch: CUDA/NCCL buffers; llama.cpp: runtime)
    int64_t cudagraph_bytes = 0;        // per GPU (vLLM: the stage with the most layers)
    bool activation_estimated = true, overhead_estimated = true, cudagraph_estimated = true;
    int64_t kv_pool_bytes = 0;  // per GPU, may be <= 0 (then nothing fits); vLLM: the smallest stage's
    int64_t max_num_batched_tokens = 0;
    int64_t max_num_seqs = 0;          // vLLM: resolved --max-num-seqs
    int64_t max_num_seqs_default = 0;  // vLLM's own default for this GPU
    int64_t seqs = 1;                  // requests served at once
    int64_t context = 0;               // resolved tokens per sequence
    int64_t model_max_len = 0;         // the model's longest context: vLLM's derived length (RoPE-scaled)
    int64_t native_max_len = 0;        // max_position_embeddings as config.json states it
    int64_t n_ctx_train = 0;           // llama.cpp's training context (warns past it)
    // llama-server from b6925 caps each slot's context at its n_ctx_train (llamacpp_n_ctx_train: a
    // build with #28030 raises it under YaRN); 0 = no cap (an older build, another engine).
    int64_t slot_cap = 0;
    int64_t n_ctx_slot = 0;       // llama.cpp: the tokens one request gets, min(n_ctx_seq, slot_cap)
    bool slot_capped = false;     // the cache holds more per sequence (n_ctx_seq) than a slot may use
    bool over_model_max = false;  // the asked context is past model_max_len
    // The engine stops at start-up whatever the memory (vLLM: an fp8 cache no attention backend of the GPU takes,
    // fp8 expert blocks split off the grid): `fits` is false, `engine_error` says why, and the other numbers are
    // what the memory would hold.
    bool startup_refused = false;
    std::optional<RopeScaling> rope_scaling;  // the scaling in effect (config's or the user's)
    std::string kv_cache_dtype;               // resolved name (llama.cpp: the K type)
    std::string kv_cache_dtype_v;             // llama.cpp: the V type
    // vLLM
    int64_t drafter_params = 0;        // the speculative drafter's own weights (shared embedding and head left out)
    int64_t drafter_weight_bytes = 0;  // in weights.bytes and on the last stage's per-GPU weights
    VllmCapacity capacity;             // blocks, tokens, concurrency, start-up lines, vLLM's error
    std::vector<VllmStage> stages;     // one per pipeline stage (one without pipeline parallelism)
    // llama.cpp
    LlamaLayout llama;       // KV layout at the resolved context / sequences (all GPUs); total_bytes
                             // includes the speculative draft context's (llama_draft)
    LlamaDraft llama_draft;  // --spec-type's draft context(s), contexts 0 when none
    LlamaOffload offload;
    LlamaFit fit;  // what --fit (on by default) would choose by itself, with the asked -c / -ngl
    // llama.cpp with part of the model in system RAM, by -ngl / --no-kv-offload (offload) or by --fit's own placement:
    // where a decode step reads from. Not in the JSON; budget.decode says it.
    std::optional<ReadSplit> read_split;
    LlamaFit fit_default;  // what it chooses with neither -c nor -ngl (`llama-server -m X` alone)
    // transformers (generate() with the default DynamicCache, batch = seqs)
    int64_t cache_bytes = 0;            // DynamicCache at the context for the batch (all GPUs)
    int64_t cache_transient_bytes = 0;  // one layer's torch.cat copy while the cache grows
    // Answers
    PerGpu per_gpu;
    // The asked context x seqs as the engine lays them out, all GPUs: llama.cpp's KV buffers (the sum of
    // its llama_kv_cache lines: padded cells, SWA cells), vLLM's blocks per request (what its "Maximum
    // concurrency" divides the pool by), transformers' cache. The answer's "KV cache for N sequences".
    int64_t kv_total_bytes = 0;
    bool fits = false;          // one request of `context` fits (vLLM starts)
    bool all_seqs_fit = false;  // `seqs` requests of `context` fit at once
    // llama.cpp: not all on the GPU, but --fit (no -ngl given) starts it with layers or a MoE's
    // experts in system RAM (r.fit); fits, max_context and max_concurrency are that placement's.
    bool fits_offload = false;
    int64_t max_context = 0;           // longest context that fits for `seqs` sequences at once
    int64_t max_context_physical = 0;  // the same ignoring the model's limit (up to 2^24): what memory holds
    bool max_context_capped = false;   // stopped at the model's limit (llama.cpp, transformers: or at the
                                       // context asked past it), not at memory
    // Where max_context stops, the one place the CLI and the page read it from: "memory"; "model" (the
    // model's limit); "asked" (the context asked, past the model's limit: llama.cpp and transformers run it);
    // "slot" (llama-server's per-request cap, the training context, where it is not the model's limit).
    std::string max_context_stop = "memory";
    int64_t max_concurrency = 0;  // most sequences of `context` tokens held at once
    double vllm_concurrency = 0;  // vLLM's printed "Maximum concurrency" (num_blocks / blocks per request)
    DecodeBound decode;
    std::vector<std::string> log_lines;  // what the engine prints at start-up (none for transformers)
    std::string command;                 // vllm serve / llama-server line, or the transformers snippet
    std::string engine_error;            // the engine's own refusal text, verbatim (vLLM's ValueError)
    Message verdict_reason;              // when !fits: why, in kvbudget's words (code + params)
    std::vector<Message> notes;
};

// `draft`: the drafter's own config (an EAGLE head or a draft model) for in.speculative_config; nullptr = none.
Result<BudgetResult> compute_budget(const ModelSpec& m, const BudgetInputs& in, const ModelSpec* draft = nullptr);

}  // namespace kvb
