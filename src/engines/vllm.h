// vLLM v1 KV-cache semantics: per-layer KV cache specs and page sizes, the
// KV-cache groups of kv_cache_utils.get_kv_cache_groups, blocks from a KV
// memory size, the start-up lines vLLM logs, and vLLM's own refusals.
// Mirrors vllm/v1/kv_cache_interface.py and vllm/v1/core/kv_cache_utils.py.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/dtype.h"
#include "model/model.h"

namespace kvb {

// The MLA attention backend vLLM picks on a CUDA GPU and the KV block size that follows from it,
// when the user gives neither --block-size nor --attention-backend.
//  forced (releases before 0.18, CudaPlatform.check_and_update_config): Blackwell (10.x) forces
//    FlashInfer MLA's 64 when qk_nope_head_dim is 128, else CUTLASS MLA's 128; Hopper (9.x, FlashMLA
//    dense built) FlashMLA's 64; every other GPU keeps 16 (Triton MLA).
//  preferred (0.18 on, update_block_size_for_backend after the selector): the first valid backend of
//    _get_backend_priorities gives its preferred size, 16 when its kernels take 16, else its smallest:
//    10.x FLASHINFER_MLA [32, 64] -> 32 (qk_nope_head_dim 64/128/192), else CUTLASS_MLA [128] -> 128;
//    9.x FLASH_ATTN_MLA (16 x n, no fp8 cache) -> 16, with an fp8 cache FLASHMLA [64] -> 64;
//    12.x and older GPUs TRITON_MLA -> 16.
// Sparse MLA (DeepSeek-V3.2) is not chosen here: its pages are always 64 tokens.
struct VllmMlaBackend {
    std::string backend;
    int64_t block_size = 16;
};
VllmMlaBackend vllm_mla_backend(int compute_capability, bool fp8_kv_cache, int64_t qk_nope_head_dim, bool forced);
// True for a vLLM release before 0.18 (MLA block sizes forced by the platform); an unreadable version: false.
bool vllm_mla_forced_for_version(const std::string& version);

// Which start-up line format to print (the releases are pinned in engines/vllm.cpp from vLLM's history).
//  Current: vLLM 0.26 on: N = int(X * M) and sliding / chunked layers reserve max_in_flight_tokens
//    (async scheduling's batches in flight); printed on one line
//    "GPU KV cache size: N tokens, Maximum concurrency for M tokens per request: X.XXx" from the release after
//    0.27 (PR #50462; main builds past v0.26.1rc0+316), on the two lines of Split before that
//    (VllmRelease::one_line_capacity).
//  Split:   vLLM 0.20.1 .. 0.25: the same two lines as Legacy but N = int(X * M) (PR #41069).
//  Legacy:  vLLM V1 engine up to 0.20.0 (2025 .. April 2026): two lines
//    "GPU KV cache size: N tokens" (N = num_blocks // groups * min block size) and
//    "Maximum concurrency for M tokens per request: X.XXx".
//  V0:      the V0 engine (up to ~v0.9): "# GPU blocks: N, # CPU blocks: C" and
//    "Maximum concurrency for M tokens per request: X.XXx" with X = N * block / M; every layer
//    caches the full context (no groups); error "The model's max seq len (M) is larger than ...".
enum class VllmLogFormat { Current, Split, Legacy, V0 };
Result<VllmLogFormat> parse_vllm_log_format(const std::string& s);  // current|split|legacy|v0
// The log format of a vLLM release ("0.20.1", "v0.24.0rc1", "0.9.1.dev705+g01220ce89"): up to 0.20.0
// Legacy, 0.20.1..0.25 Split, 0.26 on Current. The V0 engine is not a version (it ran beside V1 until
// ~0.10): give --log-format v0.
Result<VllmLogFormat> vllm_log_format_for_version(const std::string& version);

// The wording of vLLM's "not enough KV cache memory" refusals (_check_enough_kv_cache_memory and its
// "No available memory for the cache blocks" sibling), which changed within one log format (releases
// read from vLLM's tags, engines/vllm.cpp):
//  FromFormat: follow log_format (Legacy: SeeDocsGib, Split and Current: Current); what --log-format gives.
//  NoEstimate2f: up to 0.8.3: "models's", "%.2f", no estimated maximum model length, no "See ..." sentence.
//  NoDocs2f:   0.8.4 to 0.12: "models's", GiB as "%.2f" ("16.00"), the estimate, no "See ..." sentence.
//  SeeDocs2f:  0.13: "models's", "%.2f", then " See https://docs.vllm.ai/.../conserving_memory/ for more details."
//  SeeDocsGib: 0.14 .. 0.21: "models's", GiB as format_gib prints it (round(x, 2) through str(): "24.0",
//              "3.18"), "See ...".
//  Current:    0.22 on: "model's", format_gib, "`gpu_memory_utilization` (which also controls CPU memory on the
//              CPU backend)", "See ..."; the no-memory text adds "(this flag also controls CPU memory
//              reservation ...)".
enum class VllmErrorWording { FromFormat, NoEstimate2f, NoDocs2f, SeeDocs2f, SeeDocsGib, Current };

// See VllmRelease::mamba_prefix.
enum class VllmMambaPrefix { Off, Mamba2List, Declared };

struct VllmDroppedArch;

// Everything kvbudget derives from a vLLM release (engines/engine_version.h reads the text).
struct VllmRelease {
    VllmLogFormat log_format = VllmLogFormat::Current;
    bool mla_forced_block_sizes = false;  // before 0.18
    VllmErrorWording error_wording = VllmErrorWording::Current;
    // The capacity on one line (after 0.27); two lines before, whatever the log format.
    bool one_line_capacity = true;
    // 0.14 to 0.16: the not-enough-memory check (get_kv_cache_configs' unified spec, PR #29431) counts
    // every layer of the model on each pipeline stage (vllm#32105, vllm#34076; fixed by PR #33698 in 0.17).
    bool pp_check_all_layers = false;
    // Prefix caching on by default for hybrid attention + mamba models: from 0.28.0 (PR #50991); before,
    // is_prefix_caching_supported or arg_utils left it off for them unless --enable-prefix-caching.
    bool hybrid_prefix_caching = true;
    // Mamba cache mode "align" (PR #30877, first in 0.15.0): before it, prefix caching asked for a model without
    // SupportsMambaPrefixCaching (gated delta net, KDA) was switched off ("...without support for prefix caching:
    // disabling").
    bool mamba_align_mode = true;
    // Which model classes keep a state per block ("all") under prefix caching (MambaModelConfig):
    // Off before 0.11.1 (prefix caching switched off for every hybrid, PR #25752 first in 0.11.1rc1);
    // Mamba2List in 0.11.1rc1 to rc3 (its MAMBA2_MODELS list); Declared from 0.11.1rc4 (PR #27339: the classes
    // declaring SupportsMambaPrefixCaching).
    VllmMambaPrefix mamba_prefix = VllmMambaPrefix::Declared;
    // 0.20.0 to 0.21.x (PR #40454, undone by PR #41233 in 0.22.0): a declaring class with speculative decoding gets
    // "align", not "all".
    bool mamba_spec_align = false;
    // From 0.28.0 (PR #50991, with hybrid_prefix_caching) prefix caching makes mode "none" "align" for every model,
    // declaring or not; before, "all" for the declaring classes.
    bool mamba_align_default = true;
    // `vllm serve`'s --gpu-memory-utilization default (CacheConfig.gpu_memory_utilization): 0.92 from 0.20.0, 0.9
    // before (PR #38284, with the CUDA graph profiling below).
    double gpu_memory_utilization = 0.92;
    // CUDA graph memory profiled and kept out of the KV cache by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1):
    // the same PR, 0.20.0 on. Before it the graphs were captured after the cache was sized, from the memory left.
    bool cudagraph_profiling = true;
    // DeepSeek-V4 (models/deepseek_v4, first in 0.20.0): 0 = not supported by the release; else which wording its
    // fp8-only assertion has: 1 = 0.20 to 0.22, 2 = 0.23, 3 = 0.24 on (VllmDsv4Assert).
    int dsv4 = 3;
    // MiniMax-M3 (vllm/models/minimax_m3): first in 0.24.0.
    bool msa = true;
    // get_max_concurrency_for_kv_cache_config sums each group's blocks per request (PR #48317, 0.27.0 on); before,
    // it divided the summed group bytes by the first group's page, which differs only when groups' pages differ
    // (DeepSeek-V4).
    bool concurrency_group_blocks = true;
    // Different K and V head sizes in a sliding-window layer (PR #40045, 0.20.0 on): SlidingWindowSpec takes
    // head_size_v and pages head_size + head_size_v per head, and MiMo-V2's attention hands V at its own width to the
    // DiffKV backends. Before, SlidingWindowSpec paged 2 x head_size and MiMo-V2 padded V to K's width (every layer).
    bool diffkv = true;
    // The same on ROCm (AMD GPUs): from 0.26.0 (PR #48526). 0.18 to 0.20 profiled "not is_rocm()", 0.21 to 0.25
    // "is_cuda()", so on ROCm the graphs were captured from the memory left after the cache was sized.
    bool cudagraph_profiling_rocm = true;
    // A block-fp8 merged linear (qkv_proj, gate_up_proj) with a per-rank part off the block grid loads unchecked
    // (ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch, PR #30836, 0.14.0 on); before, vLLM refused it.
    bool fp8_merged_off_grid = true;
    // Quantization methods' minimum compute capability (QuantizationConfig.get_min_capability), checked against the GPU
    // when vLLM reads the checkpoint's quantization config (vllm_quant_gpu_refusal): Marlin kernels for Turing (PR
    // #29901, 0.14.0 on) took fp8 from 8.0 and ModelOpt NVFP4 from 8.0 down to 7.5; ModelOpt FP8 went from 8.9 to 8.0
    // (PR #50019, 0.27.0 on); ModelOpt NVFP4 from 10.0 to 8.0 with its name modelopt_fp4 (PRs #17687 and #18356,
    // 0.9.0 on); gpt-oss's MXFP4 became gpt_oss_mxfp4 (PR #39604, 0.20.0 on) and AWQ auto_awq (PR #42727, 0.24.0 on).
    bool marlin_sm75 = true;
    bool modelopt_fp8_sm80 = true;
    bool modelopt_fp4_sm80 = true;
    bool gpt_oss_mxfp4_name = true;
    bool auto_awq_name = true;
    // AWQ-Marlin hands a layer it cannot take to the AWQ kernel (PR #13119, 0.7.3 on), whose ValueError is then what
    // an AWQ checkpoint split off its quantization groups stops with (model/weights.h vllm_awq_group_refusal).
    bool awq_layer_fallback = true;
    // compressed-tensors' per-scheme minimum compute capability (vllm_ct_scheme_refusal), by release: fp8 block weights
    // read from 0.11.0 (PR #21404); NVFP4 below 10.0 run as W4A16 from 0.9.2 (PR #19563); MXFP4 dense weights from
    // 0.14.0 (PR #31926); asymmetric integer weights from 0.8.5 (PR #14211); integer weights on 7.5 from 0.12.0 (PR
    // #29732); fp8 and NVFP4 weights on 7.5 from 0.16.0 (PR #33076).
    bool ct_fp8_block = true;
    // The compressed-tensors release vLLM requires reads a weight block_structure given as a list ([128, 128]): 0.11.0,
    // required from vLLM 0.10.2 (PR #23202); before, it took a string, and a checkpoint's list failed its validation.
    bool ct_block_list = true;
    // The Qwen-VL and GLM-4.1V vision encoders build a RoPE cos/sin cache (PR #28798, 0.12.0 on).
    bool vision_rope_cache = true;
    // The architectures this release has dropped (vllm_dropped_architecture).
    std::vector<const VllmDroppedArch*> dropped;
    bool ct_nvfp4_as_w4a16 = true;
    bool ct_mxfp4 = true;
    bool ct_wna16_zero_points = true;
    bool ct_wna16_sm75 = true;
    bool ct_fp8_nvfp4_sm75 = true;
    // CompressedTensorsW8A16Fp8 takes fp8 blocks from 0.16.0 (PR #33280); from 0.11 to 0.15 block weights it was given
    // (below 8.9, or without fp8 activations) stopped vLLM in create_weights.
    bool ct_w8a16_block = true;
    // MoE router (gate) weights the model class creates in float32, whatever the checkpoint's dtype, with their score
    // correction bias: glm4_moe from 0.10.1 (PR #22203), ernie4_5_moe from 0.11.1 (PR #25936). Step-3.5
    // (FP32ReplicatedLinear), MiMo-V2 (moe_router_dtype, float32 by default) and MiniMax-M2 (ReplicatedLinear with
    // params_dtype float32, GateLinear from 0.23.0, PR #38445) have had it since vLLM first served them.
    bool fp32_router_glm4_moe = true;
    bool fp32_router_ernie45 = true;
    // Nemotron-H's gate as GateLinear (0.17.0 on, PR #35121): float32 weights except on CUDA compute capability 9.0
    // or 10.x, where a bias-free gate has a specialized kernel; before, float32 on every GPU. Its score correction
    // bias is float32 throughout.
    bool gate_linear = true;
    // DeepSeek-V3's score correction bias in float32 (deepseek_v2.py, PR #23640, 0.10.2 on), its gate in the model
    // dtype: DeepSeek-V3 / V3.2, Kimi K2, GLM-5.
    bool fp32_score_bias_deepseek = true;
    // The spellings `vllm serve --kv-cache-dtype` takes (CacheConfig's CacheDType), in the order argparse lists them.
    std::vector<std::string> kv_cache_dtypes;
    // `vllm serve`'s batch defaults (EngineArgs.get_batch_defaults) on a GPU of 160 GiB or more: 16,384 batched
    // tokens from 0.28.0 (PR #51726); before, such a GPU took the >= 70 GiB row's 8,192.
    bool batch_defaults_160 = true;
    // The default CUDA graph capture ceiling on compute capability 10.x (B200, B300): 1,024 from 0.28.0 (PR #49390),
    // 512 before and on every other GPU.
    bool cudagraph_max_1024_sm100 = true;
    // max_num_batched_tokens captured when it lies under the ceiling and off the size grid: from 0.20.1 (PR #40734).
    bool cudagraph_captures_max_tokens = true;
    // --kv-cache-dtype auto takes the KV cache a ModelOpt checkpoint declares (kv_cache_quant_algo or
    // kv_cache_scheme: resolve_kv_cache_dtype_string in create_engine_config): PR #30785, first in 0.14.0; its
    // nvfp4 from 0.20.0 (PR #37332; before, vLLM warns and keeps auto).
    bool kv_from_modelopt = true;
    bool kv_modelopt_nvfp4 = true;
    // An NVFP4 cache (--kv-cache-dtype nvfp4, nvfp4_4over6, or declared): 0.20.x lists the spelling but no attention
    // backend takes it (PR #37332); FlashInfer takes it from 0.21.0 (PR #40177), which also refuses it for MLA models;
    // sliding-window pages pack it from 0.21.0rc2 (PR #42464; a uint8 per value before). vllm_nvfp4_kv_refusal.
    bool nvfp4_kv_backend = true;
    bool nvfp4_kv_sliding_page = true;
    // FlashInfer's head sizes 64, 128, 256, and 512 from 0.22.0 (PR #38822).
    bool flashinfer_head_512 = true;
    // A compressed-tensors kv_cache_scheme makes the Attention layers cache fp8: PR #30141, first in 0.15.0, over
    // any --kv-cache-dtype until PR #42782 (0.22.0) left an explicit one alone.
    bool kv_from_ct_scheme = true;
    bool kv_ct_explicit_wins = true;
    // An fp8 KV cache on a CUDA GPU below compute capability 8.9, where Triton has no native fp8 (fp8e4nv): the Triton
    // attention backend refuses it at start-up from 0.24.0 (PR #43914), Triton MLA from 0.26.0 (PR #47060); from
    // 0.24.0 too FlashInfer is offered only from 8.0 (was 7.5). vllm_fp8_kv_refusal.
    bool fp8_kv_triton_sm89 = true;
    bool fp8_kv_triton_mla_sm89 = true;
    bool flashinfer_sm80 = true;
    // Wheels built for compute capability 7.5 and up: from 0.20.0 (PR #39878 dropped 7.0 from every CUDA
    // architecture list and made CUDA 13 the default). vllm_gpu_refusal.
    bool no_sm70 = true;
    // "setting the `dtype` flag" (PR #13771, 0.8.0): "setting the`dtype`" before. vllm_dtype_refusal.
    bool spaced_sentences = true;
    // `vllm serve --enable-expert-parallel` exists (PR #14305, first in 0.8.0); before, argparse refuses it.
    bool expert_parallel = true;
    // determine_expert_map before 0.10.1 (PR #21497): E % EP experts more on the last rank, not one more on the first.
    bool ep_remainder_last = false;
    std::string version;  // as given; "" = the newest release kvbudget knows
    // A release past the newest kvbudget has read (kVllmNewestRelease): the newest rules apply, and the budget says so.
    bool newer_than_known = false;
};
// The --kv-cache-dtype vLLM ends up with when asked for `asked` ("auto" or a spelling) on this checkpoint and
// release, and the one the command must pass for it:
//  - DeepSeek-V4's attention asserts an fp8 cache (models/deepseek_v4): under auto it stops at start-up, so the
//    answer is the one a user gets by passing fp8, which the command does (note vllm_dsv4_fp8_default);
//  - the KV cache the checkpoint declares: a ModelOpt
//    kv_cache_quant_algo / kv_cache_scheme under auto (kv_from_modelopt), a compressed-tensors kv_cache_scheme
//    (kv_from_ct_scheme); vLLM's own default does it, so the command passes nothing more.
// `notes`, when given, gets why. Refused: a declared cache kvbudget does not size (NVFP4).
struct VllmKvChoice {
    std::string dtype;    // what vLLM allocates
    std::string command;  // what `vllm serve --kv-cache-dtype` says ("auto": nothing)
};
Result<VllmKvChoice> vllm_kv_choice(const ModelSpec& m, const VllmRelease& rel, const std::string& asked,
                                    std::vector<Message>* notes);
// The newest vLLM release whose rules kvbudget has read.
extern const char* const kVllmNewestRelease;
// "" = the newest; otherwise parse_engine_version(version, "vllm") and the boundaries above
// (engine_version_bad when it is not a vLLM release).
Result<VllmRelease> vllm_release(const std::string& version);

// vLLM stopping at start-up for a reason other than memory: why (the answer's verdict_reason), and what vLLM itself
// prints (its engine_error): its ValueError where the refusal is in its words; CUDA's error where vLLM has no check of
// its own; nothing where its words hold a repr that changes by release, so the reason alone says it.
struct VllmStartupRefusal {
    Message reason;
    std::string prints;
};

// vLLM's own start-up refusal of an fp8 KV cache (`kv_dtype` as resolved: fp8, fp8_e4m3, fp8_e5m2) for `m` on an
// NVIDIA GPU named `gpu` of compute capability `cc` (x 10), or nothing when a backend takes it (it then holds one byte
// per value) or the rule is not known (cc 0, AMD, a release before the refusal). vllm/platforms/cuda.py
// _get_backend_priorities tries FLASH_ATTN, FLASHINFER, TRITON_ATTN in turn (FLASHINFER first on 10.x); the first whose
// validate_configuration passes serves:
//  - FLASH_ATTN takes fp8 only with FA3 on 9.x or FA4 on 10.x (fa_utils.flash_attn_supports_kv_cache_dtype);
//  - FLASHINFER takes 8.0 to 12.1 (7.5 before 0.24), head sizes 64, 128, 256, 512, and no attention sinks below 10.x
//    (gpt-oss);
//  - TRITON_ATTN takes any, then TritonAttentionImpl raises below 8.9 (0.24 on): vllm_fp8_kv_triton.
// MLA on CUDA: FLASH_ATTN_MLA and FLASHMLA need 9.x / 10.x, FLASHINFER_MLA and CUTLASS_MLA 10.x, so older GPUs get
// TRITON_MLA, which raises the same below 8.9 (0.26 on). Sparse MLA's fp8_ds_mla runs on its own FlashMLA kernels.
std::optional<VllmStartupRefusal> vllm_fp8_kv_refusal(const ModelSpec& m, const std::string& kv_dtype, int cc,
                                                      const std::string& gpu, const VllmRelease& rel);

// vLLM run in `dtype` (the dtype it serves the model in) on an NVIDIA GPU named `gpu` of compute capability `cc`
// (x 10): bfloat16 below 8.0 (T4, V100, RTX 20x0) stops in Worker.init_device (CudaPlatform.check_if_supports_dtype,
// one space more in its words from 0.8), before the model loads. dtype auto never picks it there (vllm_auto_dtype); an
// explicit --dtype bfloat16 does. Nothing when cc is 0 (AMD, Apple, a GPU given only by its memory).
std::optional<VllmStartupRefusal> vllm_dtype_refusal(const std::string& dtype, int cc, const std::string& gpu,
                                                     const VllmRelease& rel);

struct WeightFormat;  // model/weights.h

// vLLM's check of the checkpoint's quantization method against an NVIDIA GPU of compute capability `cc` (x 10), as it
// reads the quantization config (VllmConfig._get_quantization_config; config.py before 0.14): "The quantization
// method {name} is not supported for the current GPU. Minimum capability: {min}. Current capability: {cc}." (what
// vLLM prints; the reason names the GPU and what runs the model instead, as vllm_gpu_refusal's does). `name`
// and `min` are those of the method vLLM settles on (model_config.quantization after the overrides), by release
// (VllmRelease::marlin_sm75 and the flags beside it): fp8 (a checkpoint's, or --quantization fp8 on a float one)
// 8.0, 7.5 from 0.14; fbgemm_fp8 8.0; mxfp4 (gpt_oss_mxfp4 for gpt-oss from 0.20) 8.0; AWQ 7.5 (awq; auto_awq from
// 0.24; awq_marlin where Marlin runs, which is above that); ModelOpt FP8 (modelopt) 8.9, 8.0 from 0.27; ModelOpt NVFP4
// (modelopt_fp4) 8.0 from 0.9, 7.5 from 0.14. Nothing for the rest: GPTQ's 6.0 and bitsandbytes' and
// compressed-tensors' 7.0 pass every GPU vLLM runs on (compressed-tensors checks each scheme later, in words of its
// own: vllm_ct_scheme_refusal), and a release before 0.9 with ModelOpt NVFP4 is not modelled. This is the first of
// vLLM's start-up checks kvbudget models after the context length: it runs before any worker starts.
std::optional<VllmStartupRefusal> vllm_quant_gpu_refusal(const ModelSpec& m, const WeightFormat& format, int cc,
                                                         const std::string& gpu, const VllmRelease& rel);

// vLLM's check of each compressed-tensors linear layer's scheme against an NVIDIA GPU of compute capability `cc` (x
// 10), as it builds the model (CompressedTensorsConfig.get_scheme: the scheme's get_min_capability), which raises
// RuntimeError("Quantization scheme is not supported for ", "the current GPU. Min capability: {min}. ",
// "Current capability: {cc}.") and so prints the tuple. The scheme is the one _get_scheme_from_parts picks on that GPU
// (QuantScheme::ct_scheme): fp8 weights run as W8A16 below 8.9 (8.0, 7.5 from 0.16); NVFP4 as W4A16 below 10.0 (8.0,
// 7.5 from 0.16); MXFP4 8.0; int8 W8A8 7.5; integer weights alone (WNA16) 8.0, 7.5 from 0.12. W8A16 given fp8 blocks
// before 0.16 (VllmRelease::ct_w8a16_block) passes that check and raises "Unsupported weight strategy=..." as it
// creates the weights (vllm_ct_fp8_block_w8a16; the enum's text there depends on Python's version, so no words are
// claimed). The first such layer in build order is named. Routed experts are left out (their MoE methods check in their
// own ways), and so are the forms a release reads otherwise (VllmRelease::ct_fp8_block and the flags beside it; fp8
// blocks before 0.11: vllm_ct_block_refusal). vLLM meets it after the checks of the dtype and of the GPU's kernels, and
// before its attention layers pick a backend (a layer's projections come first).
std::optional<VllmStartupRefusal> vllm_ct_scheme_refusal(const ModelSpec& m, const WeightFormat& format, int cc,
                                                         const std::string& gpu, const VllmRelease& rel);

// vLLM before 0.11.0 reads no compressed-tensors fp8 block weights (_get_scheme_from_parts took tensor and channel
// strategies only until PR #21404), on any GPU:
// - before 0.10.2 the compressed-tensors release it requires (before 0.11) takes a weight's block_structure as a
//   string, so the checkpoint's list fails QuantizationArgs' validation as vLLM reads the quantization config
//   (CompressedTensorsConfig.from_config), before it checks anything else of the model (`at_config_read`); the words
//   are pydantic's, whose wording is its own release's, so none are claimed;
// - in 0.10.2 the config reads, and the first linear layer in a block scheme stops the model's build with
//   NotImplementedError("No compressed-tensors compatible scheme was found."). Routed experts alone in blocks stop it
//   in get_moe_method with a RuntimeError that prints the scheme's arguments; not claimed.
// A compressed-tensors checkpoint under a release that reads no fp8 blocks (before 0.11.0): where it has blocks, the
// refusal below stops vLLM before the block grid is ever checked.
bool vllm_ct_blocks_unread(const WeightFormat& format, const VllmRelease& rel);
struct VllmCtBlockRefusal {
    VllmStartupRefusal refusal;
    bool at_config_read = false;
};
std::optional<VllmCtBlockRefusal> vllm_ct_block_refusal(const ModelSpec& m, const WeightFormat& format,
                                                        const VllmRelease& rel);

// An architecture vLLM dropped from its registry (registry.py _PREVIOUSLY_SUPPORTED_MODELS: the last release it names,
// and the commit that dropped it). `own_only`: no class of that name in transformers, and remote code written before
// its attention interface, so vLLM's Transformers backend cannot take it (is_backend_compatible) and vLLM stops as it
// reads the config: "Model architecture {arch} was supported in vLLM until v{until}, and is not supported anymore.
// ...". Otherwise vLLM tries that backend first, whose memory kvbudget does not model, and only a note says so.
struct VllmDroppedArch {
    const char* arch;
    const char* until;
    bool own_only;
};
// The first of the model's architectures the release has dropped, if any.
const VllmDroppedArch* vllm_dropped_architecture(const ModelSpec& m, const VllmRelease& rel);
// vLLM's ValueError for it, word for word.
std::string vllm_dropped_architecture_error(const VllmDroppedArch& d);

// vLLM's wheels carry no kernels for an NVIDIA GPU of compute capability `cc` (x 10) named `gpu`: below 7.5 from
// 0.20.0 (rel.no_sm70). vLLM has no check of its own: its first kernel launch fails with CUDA's "no kernel image is
// available for execution on the device", during start-up, before the KV cache is sized. Nothing when it runs, or
// cc is 0 (AMD, Apple, a GPU given only by its memory).
std::optional<VllmStartupRefusal> vllm_gpu_refusal(int cc, const std::string& gpu, const VllmRelease& rel);

// The NVFP4 spellings of --kv-cache-dtype sharing one page layout: nvfp4, nvfp4_4over6 (not sparse MLA's nvfp4_ds_mla).
bool is_nvfp4_kv(const std::string& kv_dtype);

// vLLM's start-up refusal of an NVFP4 cache (`kv_dtype` as resolved: nvfp4, nvfp4_4over6) for `m` on the GPU named
// `gpu` (an NVIDIA one of compute capability `cc` x 10, or `nvidia` false: AMD), or nothing when vLLM serves it. Only
// FlashInfer lists nvfp4 among its supported_kv_cache_dtypes, and only on compute capability 10.x with its trtllm-gen
// kernels (FlashInferBackend.supports_kv_cache_dtype; its metadata builder: "--kv-cache-dtype nvfp4 requires the SM100
// trtllm-gen FlashInfer path."); no ROCm backend lists it. So: 0.20.x on any GPU (no backend), any GPU not of 10.x
// (vllm_nvfp4_kv_gpu), and a head size FlashInfer has no kernel for (64, 128, 256, and 512 from 0.22;
// vllm_nvfp4_kv_head_size).
std::optional<VllmStartupRefusal> vllm_nvfp4_kv_refusal(const ModelSpec& m, const std::string& kv_dtype, bool nvidia,
                                                        int cc, const std::string& gpu, const VllmRelease& rel);

// An explicit `vllm serve --kv-cache-dtype` for `m` under a release taking `choices` (VllmRelease::kv_cache_dtypes;
// empty: the newest's): the element type of its cache. A spelling the release does not take is refused in the words
// of vLLM's argparse (unknown_vllm_kv_dtype, listing the release's choices: float32 never was one); one it takes whose
// cache kvbudget does not size is refused with vllm_kv_dtype_not_modelled (fp8_inc: Intel Gaudi's; turboquant_*,
// *_per_token_head: layouts and kernels of their own; nvfp4_ds_mla, whose record was not read; fp8_ds_mla but on
// DeepSeek-V3.2's sparse MLA, whose fp8 cache it is). nvfp4 / nvfp4_4over6 on an MLA model is vLLM's own refusal
// (vllm_nvfp4_kv_mla). "auto" is the checkpoint's dtype (vllm_kv_type).
Result<KvType> vllm_kv_cache_dtype(const std::string& value, const ModelSpec& m,
                                   const std::vector<std::string>& choices = {});

// How much state memory one request of a hybrid attention + mamba/linear model holds.
enum class MambaCacheMode {
    Default,  // what vLLM picks: with prefix caching on (hybrids' default from 0.28.0, or
              // --enable-prefix-caching) Align from 0.28.0; before, All for the classes declaring
              // SupportsMambaPrefixCaching (Nemotron-H, Jamba, Falcon-H1, Granite 4 hybrids) and Align for
              // the rest (None before 0.15.0); None without prefix caching (every hybrid before 0.28.0 by default)
    None,     // 1 state block per request
    Align,    // 2 state blocks per request (prefix caching of states at block boundaries)
    All,      // a state block per attention block of the request (cdiv(len, block))
};
const char* to_string(MambaCacheMode m);
Result<MambaCacheMode> parse_mamba_cache_mode(const std::string& s);

struct VllmOptions {
    std::string kv_cache_dtype = "auto";  // --kv-cache-dtype, checked by vllm_kv_cache_dtype
    // The spellings the release takes (VllmRelease::kv_cache_dtypes); empty = the newest release's.
    std::vector<std::string> kv_cache_dtype_choices;
    // The dtype the weights are served in (--dtype, or what auto chose for the GPU), which a KV
    // cache dtype "auto" takes (float32 too: Gemma 3 on a T4); "" = from the checkpoint (float32
    // served in bfloat16).
    std::string model_dtype;
    int64_t block_size = 0;      // 0 = engine default (16; MLA: mla_block_size)
    int64_t mla_block_size = 0;  // 0 = the GPU's MLA backend's (vllm_mla_backend), 16 without a GPU
    // CUDA compute capability x 10 of the GPU (90 H100, 100 B200, 120 RTX 5090); 0 = not given. With an
    // MLA model and neither block size given, it picks the MLA backend and its block size.
    int gpu_compute_capability = 0;
    // Releases before 0.18 forced MLA block sizes in CudaPlatform.check_and_update_config; later ones
    // take the selected backend's preferred size (PR #35122). See vllm_mla_backend.
    bool mla_forced_block_sizes = false;
    // Smallest kernel block size of the attention backend, which hybrid attention+mamba models
    // round their attention block to: 0 = 16 (FlashAttention / FlashInfer / Triton on CUDA);
    // 128 on the CPU backend; 32 on Blackwell with head size 256.
    int64_t kernel_block_alignment = 0;
    int64_t tensor_parallel_size = 1;
    int64_t pipeline_parallel_size = 1;
    // VLLM_PP_LAYER_PARTITION: layers per stage, comma-separated ("15,17"); "" = get_pp_indices' default
    // split (the remainder to the stages before the last).
    std::string pp_layer_partition;
    int64_t max_model_len = 0;           // 0 = vLLM's default (the derived length; LongRoPE: the original)
    int64_t max_num_batched_tokens = 0;  // 0 = 8192 (LLM class below 70 GiB, `vllm serve` at or above 70 GiB;
                                         // `vllm serve` below 70 GiB uses 2048, the LLM class above 16384)
    MambaCacheMode mamba_cache_mode = MambaCacheMode::Default;
    std::string mamba_cache_dtype = "auto";      // conv state dtype; auto = model dtype
    std::string mamba_ssm_cache_dtype = "auto";  // ssm state dtype; auto = config mamba_ssm_dtype or conv dtype
    int64_t num_speculative_tokens = 0;
    // Async scheduling keeps two batches in flight; current releases size sliding-window and
    // chunked-local layers for max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens.
    // -1 = default: on with the Current log format, off (one batch) for the older formats.
    int async_scheduling = -1;
    bool disable_hybrid_kv_cache_manager = false;
    // Llama 4 chunked local attention: vLLM turns the hybrid manager off for it unless
    // VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1 (then chunked layers get their own groups).
    bool chunked_local_hybrid = false;
    VllmLogFormat log_format = VllmLogFormat::Current;
    // What --gpu-memory-utilization 1.0 would add per GPU (total - requested): a refusal for want of memory offers a
    // higher fraction only when it could cover the shortfall. -1 = not known (always offered).
    int64_t utilization_headroom_bytes = -1;
    // The capacity lines on one line (1) or two (0); -1 = one line exactly when log_format is Current.
    int one_line_capacity = -1;
    VllmErrorWording error_wording = VllmErrorWording::FromFormat;
    bool pp_check_all_layers = false;                          // see VllmRelease
    bool hybrid_prefix_caching = true;                         // see VllmRelease
    bool mamba_align_mode = true;                              // see VllmRelease
    int dsv4 = 3;                                              // see VllmRelease
    bool msa = true;                                           // see VllmRelease
    bool concurrency_group_blocks = true;                      // see VllmRelease
    bool diffkv = true;                                        // see VllmRelease
    VllmMambaPrefix mamba_prefix = VllmMambaPrefix::Declared;  // see VllmRelease
    bool mamba_spec_align = false;                             // see VllmRelease
    bool mamba_align_default = true;                           // see VllmRelease
    bool nvfp4_kv_sliding_page = true;                         // see VllmRelease
    int enable_prefix_caching = -1;               // --enable-prefix-caching: 1 on, 0 off, -1 the release's default
    int64_t swap_space_bytes = int64_t(4) << 30;  // V0 only: --swap-space (CPU blocks line)
    // VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: a max_model_len past the derived one is laid out
    // (the refusal vLLM would raise without it goes to VllmLayout::over_max_model_len).
    bool allow_long_max_model_len = false;
};

// The release's rules in the options vLLM's capacity reads: cache dtypes, the capacity line's shape, the error
// wordings and the layout rules that changed by release. One place, so the budget, `kvbudget vllm` and the log
// check follow a release alike (the log format stays the caller's: a log has its own).
void apply_vllm_release(const VllmRelease& rel, VllmOptions& o);

// One layer's KVCacheSpec as vLLM builds it on one worker (after the TP split).
struct VllmLayerSpec {
    int64_t layer = 0;  // index in ModelSpec::layers; k x n_layers + i = the k-th extra cache of layer i
                        // (DeepSeek-V3.2's indexer keys; DeepSeek-V4's caches, VllmDsv4Cache)
    LayerKind kind = LayerKind::Full;
    std::string spec_type;     // "FullAttentionSpec", "SlidingWindowSpec", "ChunkedLocalAttentionSpec",
                               // "MLAAttentionSpec", "SlidingWindowMLASpec" (DeepSeek-V4), "MambaSpec"
    int64_t block_size = 0;    // tokens per block (after page-size unification)
    int64_t num_kv_heads = 0;  // per GPU
    int64_t head_size = 0;
    int64_t head_size_v = 0;
    int64_t dtype_bytes = 0;
    int64_t window = 0;                // sliding window / attention chunk size
    int64_t compress_ratio = 1;        // DeepSeek-V4: tokens per stored entry (storage_block_size = block / ratio)
    int64_t cache = 0;                 // DeepSeek-V4: which of a layer's caches (VllmDsv4Cache)
    int64_t real_page_size_bytes = 0;  // bytes of one block of this layer, unpadded
    int64_t page_size_bytes = 0;       // after padding (mamba) / unification
    int64_t state_conv_bytes = 0;      // MambaSpec: conv state bytes per block
    int64_t state_ssm_bytes = 0;       // MambaSpec: ssm state bytes per block
    int pp_rank = 0;                   // pipeline stage holding the layer
};

// One KV-cache group: layers sharing a block table.
struct VllmGroup {
    std::string spec_type;
    LayerKind kind = LayerKind::Full;
    std::vector<int64_t> layers;  // ModelSpec layer indices (vLLM's layers[i::num_groups] order)
    int64_t block_size = 0;
    int64_t page_size_bytes = 0;  // per layer
    int64_t window = 0;
};

// DeepSeek-V4's caches of one decoder layer, as its modules register them (VllmLayerSpec::cache; the id of cache k
// of layer i is k x n_layers + i).
enum VllmDsv4Cache : int64_t {
    kDsv4Swa = 0,           // DeepseekV4SWACache: the last sliding_window tokens, 64-token blocks
    kDsv4Compressed = 1,    // DeepseekV4MLAAttention: 1 latent per compress_ratio tokens (MLAAttentionSpec)
    kDsv4State = 2,         // its compressor's fp32 partial states (CompressorStateCache, SlidingWindowMLASpec)
    kDsv4IndexerKeys = 3,   // ratio 4: DeepseekV4IndexerCache, 128 fp8 + 4 B scale per compressed token
    kDsv4IndexerState = 4,  // ratio 4: the indexer's compressor states
};

struct VllmLayout {
    std::vector<VllmLayerSpec> layers;  // only layers with a KV cache
    std::vector<VllmGroup> groups;      // empty for attention-free models
    // How num_blocks is computed:
    //  uniform_type (all one type, different sizes): num_blocks = avail // bytes_per_block,
    //    bytes_per_block = sum of per-layer pages;
    //  otherwise num_blocks = avail // page_size_bytes // group_size.
    bool uniform_type = false;
    // DeepSeek-V4 (kv_cache_utils _get_kv_cache_groups_uniform_groups / _get_kv_cache_config_deepseek_v4): every
    // group is a UniformTypeKVCacheSpecs whose pages are padded to one of the compressed-MLA group's page sizes;
    // a block id costs num_layer_tuples x tuple_page_bytes (the sum of those distinct sizes), and a request
    // num_layer_tuples x tuple_page_bytes per page its groups need.
    bool dsv4 = false;
    int64_t tuple_page_bytes = 0;
    int64_t num_layer_tuples = 0;
    bool concurrency_group_blocks = true;  // VllmRelease::concurrency_group_blocks
    int64_t group_size = 0;                // layers sharing one block id (max layers per group)
    int64_t page_size_bytes = 0;           // unified page size (0 for uniform_type)
    int64_t bytes_per_block = 0;           // bytes one more block id costs on the most loaded worker
    int64_t min_block_size = 0;
    int64_t padding_layers = 0;
    std::vector<std::string>
        vllm_lines;                     // vLLM's own INFO lines while configuring ("Setting attention block size ...")
    std::vector<std::string> warnings;  // vLLM's own warning texts, e.g. "Add 8 padding layers, ..."
    std::vector<Message> notes;         // what kvbudget decided (block size adjusted, replication, ...)
    // Resolved options
    int64_t max_model_len = 0;
    std::optional<Message> over_max_model_len;  // vLLM's refusal, when allowed past it
    int64_t max_num_batched_tokens = 0;
    int64_t tp = 1, pp = 1;
    MambaCacheMode mamba_cache_mode = MambaCacheMode::None;
    std::string kv_cache_dtype;   // resolved name ("bfloat16", "fp8", ...)
    int64_t attn_block_size = 0;  // block size of attention layers (after hybrid adjustment)
    std::string mla_backend;      // MLA backend picked for the GPU ("FLASHMLA", ...); "" = none picked
    int64_t num_speculative_tokens = 0;
    int64_t max_in_flight_tokens = 0;  // what sliding / chunked layers reserve beyond their window
    VllmLogFormat log_format = VllmLogFormat::Current;
    bool one_line_capacity = true;                               // resolved
    VllmErrorWording error_wording = VllmErrorWording::Current;  // resolved (never FromFormat)
    // Per pipeline stage: bytes one block id costs on that stage (uniform_type: sum of its pages;
    // else page * group_size of the projected groups). num_blocks = min over stages.
    std::vector<int64_t> stage_bytes_per_block;
    std::vector<int64_t> stage_layers;  // hidden layers per pipeline stage, as split
};

Result<VllmLayout> vllm_layout(const ModelSpec& m, const VllmOptions& o);

// Hidden layers per pipeline stage (vllm/distributed/utils.py get_pp_indices): VLLM_PP_LAYER_PARTITION's
// counts when `partition` is given, checked as vLLM checks them (its ValueError texts, code vllm_refused),
// else the even split with the remainder on the stages just before the last.
Result<std::vector<int64_t>> vllm_pp_parts(int64_t n_layers, int64_t pp, const std::string& partition);

// max_memory_usage_bytes of one layer spec for one request of `tokens` tokens
// (Full: cdiv(n, block)*page; Sliding: (cdiv(min(W-1+in_flight, n), block)+1)*page;
// Chunked: cdiv(min(chunk+in_flight, n), block)*page; Mamba: 1, 2 or cdiv(n, block) pages).
int64_t vllm_spec_max_memory(const VllmLayerSpec& s, int64_t tokens, const VllmLayout& l);

// Bytes of KV memory (per GPU, most loaded pipeline stage) one request of `tokens`
// tokens needs, computed as vLLM's _max_memory_usage_bytes_from_groups does.
int64_t vllm_request_bytes(const VllmLayout& l, int64_t tokens);
// Blocks (block ids) one request of `tokens` tokens holds, summed over groups.
int64_t vllm_request_blocks(const VllmLayout& l, int64_t tokens);
// vLLM's estimate_max_model_len: the longest request (<= l.max_model_len) whose KV fits in
// `avail` bytes per GPU on every pipeline stage; 0 when not even one token fits.
int64_t vllm_estimate_max_model_len(const VllmLayout& l, int64_t avail);
// num_blocks for `avail` bytes per GPU (min over pipeline stages), before the null block.
int64_t vllm_num_blocks(const VllmLayout& l, int64_t avail);
// The same when each pipeline stage's workers have their own KV memory (`stage_avail`, one per stage):
// every worker cuts its own memory into blocks of its own cost and the engine keeps the fewest
// (get_kv_cache_configs: "Change the num_blocks of each rank to the smallest among all ranks").
int64_t vllm_num_blocks(const VllmLayout& l, const std::vector<int64_t>& stage_avail);
// Blocks each stage's memory alone would hold (0 for a stage without KV layers, or no memory).
std::vector<int64_t> vllm_stage_num_blocks(const VllmLayout& l, const std::vector<int64_t>& stage_avail);
// KV bytes one request of `tokens` tokens needs on each pipeline stage (0 where a stage holds no KV layer).
std::vector<int64_t> vllm_stage_request_bytes(const VllmLayout& l, int64_t tokens);

struct VllmCapacity {
    int64_t available_bytes = 0;  // KV memory per GPU given (per stage: the stage that limits or refuses)
    // Pipeline parallelism: each stage's KV memory as given, the blocks it alone would hold, and what it
    // allocates once the engine keeps the fewest (num_blocks x its bytes per block). One entry per stage.
    std::vector<int64_t> stage_available_bytes;
    std::vector<int64_t> stage_num_blocks;
    std::vector<int64_t> stage_kv_bytes;
    int64_t limiting_stage = 0;           // the stage whose memory gives num_blocks (or whose check refused)
    int64_t num_blocks = 0;               // min over workers, as logged by vLLM ("num_gpu_blocks")
    int64_t usable_blocks = 0;            // num_blocks - 1 (the null block)
    int64_t blocks_per_request = 0;       // for a max_model_len request
    int64_t request_bytes = 0;            // KV bytes one max_model_len request needs
    int64_t tokens = 0;                   // "GPU KV cache size: N tokens" in the chosen format
    int64_t legacy_tokens = 0;            // num_blocks // groups * min_block_size
    int64_t cpu_blocks = 0;               // V0 only
    double max_concurrency = 0;           // num_blocks / blocks_per_request
    bool fits = false;                    // one max_model_len request fits
    int64_t estimated_max_model_len = 0;  // when !fits: vLLM's binary search result (0: not even 1 token)
    std::vector<std::string> log_lines;   // warnings then the start-up line(s), as vLLM prints them
    std::string error_text;               // vLLM's ValueError text when !fits or no memory, verbatim
    // The same refusal in kvbudget's words, as a code (empty when vLLM starts): what is short and
    // what to change. vllm_no_kv_memory {available}; vllm_kv_too_small {max_model_len, needed,
    // available, estimated_max_model_len}; vllm_kv_too_small_none (not one token fits) without the last.
    Message refusal;
    VllmLayout layout;
};

// From KV-cache memory per GPU (what --kv-cache-memory sets, or "Available KV cache memory")
// to what vLLM logs. An unfit request is not an Error: fits=false with vLLM's error_text.
// Errors are for bad input (bad dtype, tp not dividing heads, max_model_len > model limit, ...).
Result<VllmCapacity> vllm_capacity(const ModelSpec& m, const VllmOptions& o, int64_t kv_cache_memory_bytes_per_gpu);
// Each pipeline stage's workers with their own KV memory (what each one's determine_available_memory
// leaves: their weights differ, and only the last stage runs the sampler). `stage_avail` has one entry
// per stage (one entry: every stage alike). Each worker checks its own memory, in stage order, against
// its own layers (_check_enough_kv_cache_memory): the first that cannot hold a request refuses with its
// own figures; num_blocks is the fewest over stages.
Result<VllmCapacity> vllm_capacity(const ModelSpec& m, const VllmOptions& o, const std::vector<int64_t>& stage_avail);

// Formatting helpers shared with budget / wasm.
std::string vllm_format_gib(int64_t bytes);  // vLLM's format_gib: str(round(bytes / 2**30, 2)): "1.0", "4.38"

// Speculative decoding (vLLM's --speculative-config). The drafter is loaded into the same model
// runner as the target, so its attention layers get KV cache specs beside the target's and take
// pages from the same pool, in one KV cache group (vllm/v1/spec_decode/eagle.py load_model and
// validate_same_kv_cache_group; gpu_model_runner's get_kv_cache_spec walks every attention layer).
// EAGLE / EAGLE-3 heads add the draft config's layers (one decoder layer of the target's geometry
// when no draft config is given); MTP methods add the target's own num_nextn_predict_layers; a
// draft model (method draft_model) adds all of its layers with its own geometry; ngram, suffix,
// medusa and mlp_speculator add none.
struct VllmSpeculative {
    std::string method;  // as given, or inferred from the draft model's name as vLLM does
    std::string model;   // the draft model as named, "" for none
    int64_t num_speculative_tokens = 0;
};
// The JSON object vLLM takes ({"method": "eagle", "model": "...", "num_speculative_tokens": 3}),
// or the Python dict its logs print ({'method': 'eagle', ...}).
Result<VllmSpeculative> parse_vllm_speculative(const std::string& text);
// The attention layers the drafter adds to the pool; `draft` is the drafter's own config (EAGLE head
// or draft model), nullptr when not given. Refused: a draft model without its config, an unknown method.
Result<int64_t> vllm_drafter_layers(const VllmSpeculative& s, const ModelSpec& target, const ModelSpec* draft);
// `target` with the drafter's layers appended (the draft config's attention layers, else copies of the
// target's first attention layer) and a vllm_drafter_layers note.
Result<ModelSpec> vllm_with_drafter(const ModelSpec& target, const VllmSpeculative& s, const ModelSpec* draft);
// `layers` copies of the target's first full or MLA attention layer appended (an EAGLE head, MTP modules).
ModelSpec vllm_add_drafter_layers(const ModelSpec& target, int64_t layers);
// The target's multi-token-prediction modules (num_nextn_predict_layers, Qwen3.5's mtp_num_hidden_layers, a GGUF's
// nextn_predict_layers; 1 when the config does not say, as for Qwen3-Next).
int64_t vllm_nextn_layers(const ModelSpec& target);

}  // namespace kvb
