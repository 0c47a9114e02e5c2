// vLLM v1 KV-cache layout, step by step: the options vLLM accepts, max_model_len and
// the tokens in flight, the tensor-parallel checks, the recurrent state dtypes, the
// hybrid block size (vllm_hybrid.cpp), the per-layer specs (kv_cache_interface.py), and
// the grouping of kv_cache_utils.get_kv_cache_groups with its pipeline-parallel
// projection (vllm_groups.cpp).
#include "engines/vllm.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "base/arith.h"
#include "base/function_ref.h"
#include "base/text.h"
#include "engines/engine_version.h"
#include "engines/vllm_steps.h"
#include "kv/kv.h"
#include "model/dtype.h"
#include "model/rope.h"

namespace kvb {

const char* to_string(MambaCacheMode m) {
    switch (m) {
        case MambaCacheMode::Default: return "default";
        case MambaCacheMode::None: return "none";
        case MambaCacheMode::Align: return "align";
        case MambaCacheMode::All: return "all";
    }
    return "?";
}

Result<MambaCacheMode> parse_mamba_cache_mode(const std::string& s) {
    if (s == "" || s == "default") return MambaCacheMode::Default;
    if (s == "none") return MambaCacheMode::None;
    if (s == "align") return MambaCacheMode::Align;
    if (s == "all") return MambaCacheMode::All;
    return make_error("bad_value", note("vllm_bad_mamba_cache_mode", {{"value", s}}));
}

Result<VllmLogFormat> parse_vllm_log_format(const std::string& s) {
    if (s == "" || s == "current") return VllmLogFormat::Current;
    if (s == "split") return VllmLogFormat::Split;
    if (s == "legacy") return VllmLogFormat::Legacy;
    if (s == "v0") return VllmLogFormat::V0;
    return make_error("bad_value", note("vllm_bad_log_format", {{"value", s}}));
}

namespace {

// A change to what vLLM prints or checks, placed twice: in the first release that ships it, and on the
// main branch (the setuptools-scm tag before its commit and the commits after that tag), so that a
// nightly or source build ("0.20.2rc1.dev400+g...") is placed as exactly as a release. Every entry was
// read from vLLM's own history: its tags and the commit that made the change (a fork carrying the tags,
// github.com/gabewillen/vllm, fetched 2026-12; `git tag --contains`, `git describe`, and the file at each
// tag, e.g. `git show v0.13.0:vllm/v1/core/kv_cache_utils.py`).
constexpr int64_t kFinal = 1000;  // a final release sorts after its rc tags

struct VllmChange {
    int64_t minor, patch;                         // first release 0.minor.patch
    int64_t tag_minor, tag_patch, tag_rc, after;  // main: `after` commits past tag v0.tag_minor.tag_patch rc tag_rc
                                                  // (kFinal: past the release tag itself)
    // The first release candidate of 0.minor.patch that has it: the earlier ones were cut from main before the
    // commit (kFinal: only the final release).
    int64_t first_rc = 0;
};
// Release branches cut from main with the fix or not: tags on main (v0.13.0rc1, v0.14.0rc0, v0.20.2rc0 …).
//  "Based on the available memory, the estimated maximum model length is N." in the error: PR #16168,
//    2025-04-09 (4716377fb, v0.8.3rc1-79); v0.8.3 has none, v0.8.4 has it (vllm#16118 quotes the text before).
constexpr VllmChange kVllmEstimate = {8, 4, 8, 3, 1, 79};
//  " See https://docs.vllm.ai/.../conserving_memory/ ..." in both errors: PR #28051, merged 2025-12-10
//    (8580919ac, v0.13.0rc1-25); v0.12.0 (branched 2025-12-02) has none, v0.13.0 has it.
constexpr VllmChange kVllmSeeDocs = {13, 0, 13, 0, 1, 25};
//  format_gib (str(round(x, 2)): "24.0") for "%.2f" in the error: PR #31865, 2026-01-08 (c907d2215,
//    v0.14.0rc0-346); v0.13.0 prints "%.2f", v0.14.0 format_gib.
constexpr VllmChange kVllmFormatGib = {14, 0, 14, 0, 0, 346};
//  "model's" and "(which also controls CPU memory on the CPU backend)": PR #42479, 2026-05-15 (27b85d208,
//    v0.20.2rc0-373); v0.21.0 (branched 2026-05-11) still "models's", v0.22.0 has it.
constexpr VllmChange kVllmModelsFixed = {22, 0, 20, 2, 0, 373};
//  "GPU KV cache size: N" with N = int(max_concurrency * max_model_len): PR #41069, 2026-04-28 (e68fa1b90,
//    v0.20.1rc0-31), cherry-picked into v0.20.1 (a076bd1e6); v0.20.0 prints num_blocks // groups x block.
constexpr VllmChange kVllmTokensFromConcurrency = {20, 1, 20, 1, 0, 31};
//  Sliding-window / chunked-local layers reserve max_in_flight_tokens (async scheduling's batches in
//    flight): PR #47728, 2026-07-08 (cd0de48d0, v0.23.1rc0-946); first in v0.26.0.
constexpr VllmChange kVllmInFlightWindow = {26, 0, 23, 1, 0, 946};
//  One line "GPU KV cache size: N tokens, Maximum concurrency for M tokens per request: X.XXx": PR #50462,
//    2026-08-04 (5f2ee2fa8, v0.26.1rc0-316), after v0.27 branched (2026-08-03): v0.27.0 and v0.27.1 print two
//    lines; taken to ship in 0.28.0, the next release cut from main.
constexpr VllmChange kVllmOneLine = {28, 0, 26, 1, 0, 316};
//  PR #29431 (`--max-model-len auto`, 2025-12-24, 8ee90c83f, v0.14.0rc0-104) checked one request on a spec of
//    every layer; PR #33698 (2026-02-11, c5a66d169, v0.16.0rc1-52) projects it per worker again: 0.14.0 to 0.16.x.
constexpr VllmChange kVllmPpAllLayers = {14, 0, 14, 0, 0, 104};
constexpr VllmChange kVllmPpPerWorker = {17, 0, 16, 0, 1, 52};
//  allow_fp8_block_shape_mismatch for a merged block-fp8 linear with a part off the block grid (linear.py
//    ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch): PR #30836 (MiMo-V2-Flash), 2025-12-20 (969bbc7c6,
//    v0.14.0rc0-16); v0.12.0's linear.py has none, v0.14.0rc1 and v0.14.0 have it.
constexpr VllmChange kVllmFp8MergedOffGrid = {14, 0, 14, 0, 0, 16};
//  GLM-4.5's gate as nn.Linear(dtype=torch.float32) and an fp32 e_score_correction_bias (models/glm4_moe.py): PR
//    #22203, 2025-08-05 (6fa41e0c3, v0.10.0-356), first in v0.10.1rc1. ERNIE-4.5-MoE's gate as ReplicatedLinear(
//    params_dtype=torch.float32) and its bias (models/ernie45_moe.py): PR #25936, 2025-09-30 (ef6e0e713,
//    v0.11.0rc1-76), first in v0.11.1rc1.
constexpr VllmChange kVllmGlm4MoeFp32Gate = {10, 1, 10, 0, kFinal, 356, 1};
constexpr VllmChange kVllmErnie45Fp32Gate = {11, 1, 11, 0, 1, 76, 1};
//  Nemotron-H's gate as GateLinear(force_fp32_compute=True) (layers/fused_moe/router/gate_linear.py): float32 weights
//    only where no specialized router kernel runs. PR #35121, 2026-02-27 (38c498b8e, v0.16.1rc0-36), first in
//    v0.17.0rc0; from its first MoE support (PR #25863, 0.11.1) to then, ReplicatedLinear(params_dtype=float32).
constexpr VllmChange kVllmGateLinear = {17, 0, 16, 1, 0, 36};
//  DeepSeek-V3's e_score_correction_bias as torch.empty(n_routed_experts, dtype=torch.float32) (models/deepseek_v2.py,
//    every class there with noaux_tc routing): PR #23640, 2025-08-26 (fdeb3dac1, v0.10.1rc1-240), first in
//    v0.10.2rc1; before, the model dtype.
constexpr VllmChange kVllmDeepseekFp32ScoreBias = {10, 2, 10, 1, 1, 240, 1};
//  MLA block sizes forced in CudaPlatform.check_and_update_config until PR #35122 (reapplied 2026-03-09,
//    77a73458e, v0.17.0rc0-174): v0.17.1's cuda.py still forces them, v0.18.0's does not.
constexpr VllmChange kVllmMlaPreferred = {18, 0, 17, 0, 0, 174};

//  Mamba prefix caching in "align" mode: PR #30877, 2026-01-23 (5206e5e28, v0.14.0rc1-285); first in v0.15.0.
//    Before it, prefix caching asked for on a gated-delta-net or KDA hybrid was switched off (mode none).
constexpr VllmChange kVllmMambaAlign = {15, 0, 14, 0, 1, 285};
//  Prefix caching on by default for hybrid models, so mamba cache mode "align": PR #50991, 2026-08-04
//    (f9c74b4b9, v0.26.1rc0-321), after v0.27 branched; taken to ship in 0.28.0 (vllm-metal PR #645: "a
//    plain vllm serve that worked on 0.27.1"). vllm#40691 (0.19.0) ran Qwen3.5-27B with mode none.
constexpr VllmChange kVllmHybridPrefixCaching = {28, 0, 26, 1, 0, 321};
//  The same PR made prefix caching's default mode "align" for every model (config.py MambaModelConfig sets
//    "align"); before, `"all" if model_config.supports_mamba_prefix_caching else "align"`.
constexpr VllmChange kVllmMambaAlignDefault = kVllmHybridPrefixCaching;
//  Mamba-2 prefix caching ("all"): PR #25752, 2025-10-04 (ea507c3a9, v0.11.0rc1-195), first in v0.11.1rc1: the
//    MAMBA2_MODELS list (Bamba, FalconH1, GraniteMoeHybrid, Mamba2, NemotronH, Zamba2) kept prefix caching, every
//    other hybrid had it switched off. PR #27339, 2025-10-27 (927375422, v0.11.1rc3-31), first in v0.11.1rc4: the
//    SupportsMambaPrefixCaching protocol, declared by the same classes and Jamba and Mamba (unchanged to v0.27.1).
constexpr VllmChange kVllmMambaPrefixCaching = {11, 1, 11, 0, 1, 195, 1};
constexpr VllmChange kVllmMambaPrefixProtocol = {11, 1, 11, 1, 3, 31, 4};
//  "align" for a declaring class when speculative decoding is on: PR #40454, 2026-04-21 (f819265a4, v0.19.2rc0-80; in
//    the re-cut v0.20.0, not v0.20.0rc1); undone by PR #41233, 2026-05-18 (737bfa3a4, v0.21.1rc0-62), first in 0.22.0.
constexpr VllmChange kVllmMambaSpecAlign = {20, 0, 19, 2, 0, 80, kFinal};
constexpr VllmChange kVllmMambaSpecAll = {22, 0, 21, 1, 0, 62};

//  CUDA graph memory profiled on ROCm (gpu_worker.py determine_available_memory: `current_platform.is_cuda_alike()`;
//    0.18 to 0.20 had `not current_platform.is_rocm()`, 0.21 to 0.25 `is_cuda()`): PR #47366, 2026-07-09 (88e5e2c57,
//    v0.23.1rc0-998) turned it on, PR #48440, 2026-07-12 (d973cce3c, v0.23.1rc0-1057) off again, PR #48526,
//    2026-07-15 (05eed72ae, v0.23.1rc0-1150) on for good. v0.26.0rc1 has all three, v0.25.1 none.
constexpr VllmChange kVllmRocmGraphsOn = {26, 0, 23, 1, 0, 998};
constexpr VllmChange kVllmRocmGraphsOff = {26, 0, 23, 1, 0, 1057};
constexpr VllmChange kVllmRocmGraphs = {26, 0, 23, 1, 0, 1150};

//  gpu_memory_utilization's default 0.9 -> 0.92 and CUDA graph memory profiled by default
//    (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "0" -> "1"): PR #38284, 2026-04-21 (96a85c575, v0.19.2rc0-94).
//    v0.20.0rc1 (branched at v0.19.2rc0-23) has 0.9; v0.20.0, re-cut at v0.19.2rc0-216, has 0.92 (its own log
//    line says "default since v0.21.0", written before the release was re-cut).
constexpr VllmChange kVllmUtil092 = {20, 0, 19, 2, 0, 94, kFinal};

//  `vllm serve`'s batch defaults on a GPU of >= 160 GiB (B200, MI300X): 16,384 batched tokens, PR #51726,
//    2026-08-11 (4988df2eb, v0.26.1rc0-627), after v0.27 branched; taken to ship in 0.28.0 (released 2026-08-26 at
//    2cf0a6915, cut after main's 2026-08-18 ef47a897e, which has it).
constexpr VllmChange kVllmBatch160 = {28, 0, 26, 1, 0, 627};
//  CUDA graph capture ceiling 1,024 on compute capability 10.x: PR #49390, 2026-08-07 (021b7d985, v0.26.1rc0-487);
//    0.28.0 likewise.
constexpr VllmChange kVllmCapture1024 = {28, 0, 26, 1, 0, 487};
//  max_num_batched_tokens appended to the capture sizes: PR #40734, 2026-04-29 (8b49cf3a3, v0.20.1rc0-46),
//    cherry-picked into v0.20.1 (66df2c03f); v0.20.1rc0 and v0.20.0 lack it.
constexpr VllmChange kVllmCaptureMaxTokens = {20, 1, 20, 1, 0, 46, kFinal};

//  DeepSeek-V4 (vllm/model_executor/models/deepseek_v4.py): 4d51588e2, 2026-04-26 (v0.19.2rc0-216), the commit
//    v0.20.0 was re-cut at; v0.20.0rc1 lacks it.
constexpr VllmChange kVllmDsv4 = {20, 0, 19, 2, 0, 216, kFinal};
//  Its fp8-only assertion reworded "DeepseekV4 FlashMLA fp8 layout only supports fp8 kv-cache, got ...": 4efd6ffde,
//    2026-06-04 (v0.22.1rc0-194), first in v0.23.0; "DeepseekV4 fp8_ds_mla layout ...": 44d95069e, 2026-06-22
//    (v0.23.1rc0-275), first in v0.24.0.
constexpr VllmChange kVllmDsv4FlashMlaAssert = {23, 0, 22, 1, 0, 194};
constexpr VllmChange kVllmDsv4DsMlaAssert = {24, 0, 23, 1, 0, 275};
//  MiniMax-M3 (vllm/models/minimax_m3, MiniMaxM3SparseForCausalLM): PR #45381, 2026-06-16 (0a1c5034f,
//    v0.23.1rc0-22); first in v0.24.0.
constexpr VllmChange kVllmMsa = {24, 0, 23, 1, 0, 22};
//  get_max_concurrency_for_kv_cache_config sums per-group blocks: PR #48317, 2e2e626b4, 2026-07-21
//    (v0.23.1rc0-1315), after v0.26 branched; first in v0.27.0.
constexpr VllmChange kVllmConcurrencyGroupBlocks = {27, 0, 23, 1, 0, 1315};
//  SlidingWindowSpec.head_size_v, and MiMo-V2's attention on the DiffKV backends with V unpadded: PR #40045
//    "[Attention] use diff kv backend for mimo v2 flash", 2026-04-24 (e8ee2a78d, v0.19.2rc0-187); v0.20.0rc1
//    (branched at v0.19.2rc0-23) lacks it, v0.20.0 (re-cut at v0.19.2rc0-216) has it.
constexpr VllmChange kVllmDiffKv = {20, 0, 19, 2, 0, 187, kFinal};

//  --kv-cache-dtype auto resolved from a ModelOpt checkpoint's kv_cache_quant_algo (utils/torch_utils.py
//    resolve_kv_cache_dtype_string, called in arg_utils.py create_engine_config): PR #30785, 2025-12-17 (7b966ae2b,
//    v0.13.0rc1-223); v0.13.0 lacks it, v0.14.0rc0 has it. Its "nvfp4" mapping came with kVllmKvNvfp4 (0.20.0).
constexpr VllmChange kVllmKvFromModelopt = {14, 0, 13, 0, 1, 223};
//  compressed-tensors kv_cache_scheme -> an fp8 cache in Attention.__init__ ("llm-compressor mdls need to set
//    cache_dtype to fp8 manually"): PR #30141, 2026-01-22 (44f08af3a, v0.14.0rc1-257), first in v0.15.0; only under
//    auto from PR #42782, 2026-05-15 (852f56744, v0.21.1rc0-25), first in v0.22.0.
constexpr VllmChange kVllmKvFromCtScheme = {15, 0, 14, 0, 1, 257};
constexpr VllmChange kVllmKvCtExplicitWins = {22, 0, 21, 1, 0, 25};
//  The Triton attention backend refuses an fp8 KV cache below compute capability 8.9 (TritonAttentionImpl.__init__,
//    "native FP8 (fp8e4nv) requires SM89+"): PR #43914, 2026-06-15 (fa63bb9db, v0.23.1rc0-18), first in v0.24.0rc1.
//    FlashInfer's floor raised from 7.5 to 8.0 (FlashInferBackend.supports_compute_capability, "broken on SM75"):
//    56e579751, 2026-06-22 (v0.23.1rc0-296), first in v0.24.0rc1. Triton MLA's same refusal (TritonMLAImpl): PR #47060,
//    2026-07-15 (915dffaa5, v0.23.1rc0-1174), first in v0.26.0rc1. All three unchanged at v0.27.1 and in the 0.29
//    start-up errors users quote.
constexpr VllmChange kVllmFp8KvTritonSm89 = {24, 0, 23, 1, 0, 18};
constexpr VllmChange kVllmFlashInferSm80 = {24, 0, 23, 1, 0, 296};
constexpr VllmChange kVllmFp8KvTritonMlaSm89 = {26, 0, 23, 1, 0, 1174};
//  Compute capability 7.0 (V100) out of every CUDA architecture list in CMakeLists.txt, CUDA 13.0 the default build:
//    PR #39878, 2026-04-23 (3ed5231c6, v0.19.2rc0-141); v0.20.0rc1 (cut at v0.19.2rc0-23) lacks it, v0.20.0 has it.
//    The install guide says "compute capability 7.5 or higher" from 0.20.0; unchanged at v0.27.1.
constexpr VllmChange kVllmNoSm70 = {20, 0, 19, 2, 0, 141, kFinal};
//  One space between the sentences of its messages, "setting the `dtype` flag" in the bfloat16 refusal among them
//    ("setting the`dtype`" before): PR #13771 (51010a180, v0.7.3-71); v0.8.0rc1 has it.
constexpr VllmChange kVllmSpacedSentences = {8, 0, 7, 3, kFinal, 71, 1};

//  Quantization methods' minimum compute capability (vllm_quant_gpu_refusal):
//    Fp8Config and ModelOptNvFp4Config 8.0 -> 7.5: PR #29901 "add marlin kernel support for turing (sm75)",
//    2025-12-16 (ce96857fd, v0.13.0rc1-199); v0.14.0rc0 on.
constexpr VllmChange kVllmMarlinSm75 = {14, 0, 13, 0, 1, 199};
//    ModelOptFp8Config 8.9 -> 8.0: PR #50019 "Enable ModelOpt FP8 emulation on SM80", 2026-07-31 (e3be89673,
//    v0.26.1rc0-222); v0.27.0rc1 on.
constexpr VllmChange kVllmModeloptFp8Sm80 = {27, 0, 26, 1, 0, 222};
//    ModelOpt NVFP4 10.0 -> 8.0 (PR #17687, d74e5f37b, v0.8.4-578) and its name modelopt_nvfp4 -> modelopt_fp4 (PR
//    #18356, f4a8a3746, v0.8.4-783), both first in v0.9.0: placed at the later.
constexpr VllmChange kVllmModeloptFp4Sm80 = {9, 0, 8, 4, kFinal, 783};
//    gpt-oss's quant_method mxfp4 read as gpt_oss_mxfp4 (GptOssMxfp4Config): PR #39604, 2026-04-13 (739e5945d,
//    v0.19.1rc0-242); v0.20.0rc1 on.
constexpr VllmChange kVllmGptOssMxfp4 = {20, 0, 19, 1, 0, 242};
//    AWQ read as auto_awq (AutoAWQConfig, for every CUDA GPU): PR #42727, 2026-06-18 (8d4f54966, v0.23.1rc0-159);
//    v0.24.0rc1 on.
constexpr VllmChange kVllmAutoAwq = {24, 0, 23, 1, 0, 159};
//  AWQ-Marlin's per-layer fallback to the AWQ kernel ("Layer '...' is not supported by AWQMarlin. Falling back to
//    unoptimized AWQ kernels."): PR #13119, 2025-02-11 (09972e716, v0.7.2-100); v0.7.3 has it. Unchanged at v0.27.1
//    (auto_awq.py from 0.24, "AutoAWQMarlin" in the warning).
constexpr VllmChange kVllmAwqLayerFallback = {7, 3, 7, 2, kFinal, 100};
//  compressed-tensors' schemes and their minimum compute capability (vllm_ct_scheme_refusal; compressed_tensors.py and
//    schemes/, read at v0.7.3 ... v0.27.1):
//    fp8 block weights read as W8A8 / W8A16 fp8: PR #21404, 2025-09-18 (fbd6523ac, v0.10.2rc2-221); v0.11.0rc1 on.
constexpr VllmChange kVllmCtFp8Block = {11, 0, 10, 2, 2, 221};
//    compressed-tensors 0.11.0 required (requirements/common.txt), whose QuantizationArgs takes block_structure as a
//    list of two ints (0.10.2 and before: Optional[str]; compressed-tensors 09b7ed4a): PR #23202, 2025-08-19
//    (c32e6ad1f, v0.10.1rc1-58); v0.10.2rc1 on.
constexpr VllmChange kVllmCtBlockList = {10, 2, 10, 1, 1, 58};
//    NVFP4 W4A4 below 10.0 run as CompressedTensorsW4A16Fp4 (8.0) instead of W4A4Fp4 (10.0): PR #19563, 2025-06-16
//    (6bc7b5731, v0.9.1-108); v0.9.2rc1 on.
constexpr VllmChange kVllmCtNvfp4AsW4a16 = {9, 2, 9, 1, kFinal, 108, 1};
//    MXFP4 dense weights (CompressedTensorsW4A16Mxfp4, 8.0): PR #31926, 2026-01-10 (e6c6f2c79, v0.14.0rc0-470);
//    v0.14.0rc1 on.
constexpr VllmChange kVllmCtMxfp4 = {14, 0, 14, 0, 0, 470, 1};
//    WNA16 with zero points (asymmetric): PR #14211, 2025-04-15 (54a66e5fe, v0.8.4-25); v0.8.5 on.
constexpr VllmChange kVllmCtWna16ZeroPoints = {8, 5, 8, 4, kFinal, 25};
//    WNA16 8.0 -> 7.5: PR #29732, 2025-11-30 (e1464c3a0, v0.11.1-405); v0.12.0 on.
constexpr VllmChange kVllmCtWna16Sm75 = {12, 0, 11, 1, kFinal, 405};
//  The Qwen-VL and GLM-4.1V vision encoders' RoPE from get_rope, a cos/sin cache of 8,192 positions: PR #28798,
//    2025-11-18 (b9489f51e, v0.11.1-2); v0.11.2 has none, v0.12.0 has it.
constexpr VllmChange kVllmVisionRopeCache = {12, 0, 11, 1, kFinal, 2};
//    W8A16Fp8 and W4A16Fp4 8.0 -> 7.5: PR #33076, 2026-01-27 (66e601ef7, v0.15.0rc1-13); v0.16.0rc0 on (and W4A4Fp4
//    10.0 -> 7.5 with PR #33201, 67ebaff52, v0.16.0rc1: the same GPUs load NVFP4 on either side of it).
constexpr VllmChange kVllmCtFp8Nvfp4Sm75 = {16, 0, 15, 0, 1, 13};
//    W8A16Fp8 with fp8 blocks: PR #33280, 2026-01-30 (fd0e37724, v0.16.0rc0-24); v0.16.0rc1 on.
constexpr VllmChange kVllmCtW8a16Block = {16, 0, 16, 0, 0, 24, 1};
//  --enable-expert-parallel (ParallelConfig.enable_expert_parallel): PR #14305, 2025-03-06 (cc2f9b32c, v0.7.3-271);
//    v0.8.0rc1 on. Unchanged, with its -ep alias, at v0.27.1.
constexpr VllmChange kVllmExpertParallel = {8, 0, 7, 3, kFinal, 271};
//  determine_expert_map's balanced placement (the first E % EP ranks one expert more; before, the remainder all on
//    the last rank): PR #21497 "More balanced expert sharding", 2025-07-24 (fe56180c7, v0.10.0-27); v0.10.1rc1 on.
//    Unchanged at v0.27.1 (fused_moe/expert_map_manager.py from 0.24).
constexpr VllmChange kVllmEpBalanced = {10, 1, 10, 0, kFinal, 27};

// The newest release whose rules were read: 0.31.0 (pinned as `vllm==0.31.0` in public projects; main's nightlies
// read 0.31.1rc1.devN in 2026-10). Its changes from main of 2026-08-18 on were read in the newest stored snapshot of
// vllm-project/vllm (002f10e0c: config/cache.py, engine/arg_utils.py, v1/core/kv_cache_utils.py).
constexpr int64_t kVllmNewestMinor = 31;

// The spellings of --kv-cache-dtype (CacheDType in vllm/config.py, vllm/config/cache.py from 0.10.1; read at every
// tag):
//  CacheDType Literal, whose choices argparse lists sorted: PR #16835, 2025-04-20 (4b07d3689, v0.8.4-104); v0.8.4
//    and before listed the hand-written ['auto', 'fp8', 'fp8_e5m2', 'fp8_e4m3'].
constexpr VllmChange kVllmCacheDtypeSorted = {8, 5, 8, 4, kFinal, 104};
//  fp8_inc (Intel Gaudi): PR #12010, 2025-07-16 (01513a334, v0.9.2rc1-298); v0.10.0rc1 on.
constexpr VllmChange kVllmKvFp8Inc = {10, 0, 9, 2, 1, 298};
//  bfloat16: PR #25896 (DeepSeek-V3.2), 2025-09-30 (fa7e254a7, v0.11.0rc1-73); v0.11.0rc1..rc3 lack it, rc4 has it.
constexpr VllmChange kVllmKvBfloat16 = {11, 0, 11, 0, 1, 73, 4};
//  fp8_ds_mla: PR #24794, 2025-11-11 (b30dfa03c, v0.11.1rc6-23); v0.11.1rc7 lacks it, v0.11.1 has it.
constexpr VllmChange kVllmKvFp8DsMla = {11, 1, 11, 1, 6, 23, kFinal};
//  float16: PR #37199 "Add float16 to CacheDType", 2026-03-16 (93f3c8e53, v0.17.1rc0-220); v0.17.1 lacks it,
//    v0.17.2rc0 and v0.18.0 have it.
constexpr VllmChange kVllmKvFloat16 = {17, 2, 17, 1, 0, 220};
//  int8_per_token_head, fp8_per_token_head: PR #38378, 2026-04-02 (2ce3d0ce3, v0.18.2rc0-59); v0.19.1 lacks them.
constexpr VllmChange kVllmKvPerTokenHead = {20, 0, 18, 2, 0, 59};
//  turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc, turboquant_3bit_nc: PR #38479, 2026-04-14
//    (f4b42df04, v0.19.1rc0-294); nvfp4: PR #37332, 2026-04-17 (6b2b7bd0e, v0.19.1rc0-373). Both first in v0.20.0.
constexpr VllmChange kVllmKvTurboquant = {20, 0, 19, 1, 0, 294};
constexpr VllmChange kVllmKvNvfp4 = {20, 0, 19, 1, 0, 373};
//  PR #37332 gave nvfp4 its spelling, its page (FullAttentionSpec only) and FlashInfer's layout, but no backend's
//    supported_kv_cache_dtypes listed it. PR #40177 "Add nvfp4 kv cache support", 2026-04-30 (947138b6c,
//    v0.20.1rc0-125; v0.20.1 and v0.20.2 lack it, v0.21.0rc1 has it): FlashInfer takes nvfp4, the chunked-local
//    page (AttentionSpec) packs it, the per-layer FP8 output buffer, and VllmConfig refuses nvfp4 with MLA.
constexpr VllmChange kVllmKvNvfp4Backend = {21, 0, 20, 1, 0, 125};
//  SlidingWindowSpec packs nvfp4 (before, its page counted one uint8 per value): PR #42464, a8c13d283, 2026-05-13
//    (v0.20.2rc0-294), picked into v0.21.0rc2 (a707288c1).
constexpr VllmChange kVllmKvNvfp4SlidingPage = {21, 0, 20, 2, 0, 294, 2};
//  FlashInfer's head size 512 (get_supported_head_sizes, was 64 / 128 / 256): PR #38822, 552bbe6f4, 2026-05-22
//    (v0.21.1rc0-236); first in v0.22.0rc1.
constexpr VllmChange kVllmFlashInferHead512 = {22, 0, 21, 1, 0, 236};
//  FlashInfer refuses nvfp4 off compute capability 10.x at backend selection
//  (FlashInferBackend.supports_kv_cache_dtype)
//    from PR #43232 "Xqa decode kernels", d29125c08, 2026-07-02 (v0.23.1rc0-733), first in v0.25.0rc1; before, it
//    was picked on any GPU it runs on and its trtllm-gen prefill / decode wrappers failed later. Refused alike
//    (vllm_nvfp4_kv_refusal), so no boundary is kept.
//  int4_per_token_head: PR #40835, 2026-06-24 (70749fdcc, v0.23.1rc0-377); v0.24.0 lacks it, v0.25.0rc1 has it.
constexpr VllmChange kVllmKvInt4PerTokenHead = {25, 0, 23, 1, 0, 377};
//  nvfp4_4over6: PR #45187, 2026-08-07 (1c94e8dc7, v0.26.1rc0-492), after v0.27 branched: main only, taken to ship
//    in 0.28.0.
constexpr VllmChange kVllmKvNvfp4Over6 = {28, 0, 26, 1, 0, 492};
//  nvfp4_ds_mla (sparse MLA's NVFP4 record): PR #51724, merged 2026-09-01 (7c5dc571c), after 0.28.0 was released
//    (2026-08-26); taken to ship in 0.29.0 (released 2026-09-09, v0.29.0rc1 tagged by 2026-09-02). Its place on main
//    past v0.28.1rc0 was not read: every build past that tag is taken to have it.
constexpr VllmChange kVllmKvNvfp4DsMla = {29, 0, 28, 1, 0, 0};

bool has_change(const EngineVersion& v, const VllmChange& c) {
    if (v.major > 0) return true;
    if (v.dev < 0) {  // a release or a release candidate: what its release ships, unless cut before the change
        if (v.minor == c.minor && v.patch == c.patch && v.rc >= 0 && v.rc < c.first_rc) return false;
        return v.minor > c.minor || (v.minor == c.minor && v.patch >= c.patch);
    }
    // A dev build: `dev` commits past rc (N - 1), or past the previous patch release when there is no rc.
    int64_t minor = v.minor, patch = v.patch, rank = v.rc >= 1 ? v.rc - 1 : kFinal;
    if (v.rc < 1) {
        if (patch > 0)
            --patch;
        else
            rank = -1;  // "0.10.0.dev5": before every tag of 0.10
    }
    const int64_t a[4] = {minor, patch, rank, v.dev};
    const int64_t b[4] = {c.tag_minor, c.tag_patch, c.tag_rc, c.after};
    for (int k = 0; k < 4; ++k)
        if (a[k] != b[k]) return a[k] > b[k];
    return true;
}

// CacheDType's spellings in a release, as `vllm serve --help` and its "invalid choice" error list them.
std::vector<std::string> kv_cache_dtypes(FunctionRef<bool(const VllmChange&)> has) {
    if (!has(kVllmCacheDtypeSorted)) return {"auto", "fp8", "fp8_e5m2", "fp8_e4m3"};
    std::vector<std::string> d = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"};
    const std::pair<const VllmChange*, std::vector<std::string>> added[] = {
        {&kVllmKvFp8Inc, {"fp8_inc"}},
        {&kVllmKvBfloat16, {"bfloat16"}},
        {&kVllmKvFp8DsMla, {"fp8_ds_mla"}},
        {&kVllmKvFloat16, {"float16"}},
        {&kVllmKvPerTokenHead, {"int8_per_token_head", "fp8_per_token_head"}},
        {&kVllmKvTurboquant, {"turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc"}},
        {&kVllmKvNvfp4, {"nvfp4"}},
        {&kVllmKvInt4PerTokenHead, {"int4_per_token_head"}},
        {&kVllmKvNvfp4Over6, {"nvfp4_4over6"}},
        {&kVllmKvNvfp4DsMla, {"nvfp4_ds_mla"}},
    };
    for (const auto& a : added)
        if (has(*a.first)) d.insert(d.end(), a.second.begin(), a.second.end());
    // literal_to_kwargs: choices=sorted(options), Python's code-point order.
    std::sort(d.begin(), d.end());
    return d;
}

}  // namespace

const char* const kVllmNewestRelease = "0.31.0";

void apply_vllm_release(const VllmRelease& rel, VllmOptions& o) {
    o.kv_cache_dtype_choices = rel.kv_cache_dtypes;
    o.one_line_capacity = rel.one_line_capacity ? 1 : 0;
    o.error_wording = rel.error_wording;
    o.mla_forced_block_sizes = rel.mla_forced_block_sizes;
    o.pp_check_all_layers = rel.pp_check_all_layers;
    o.hybrid_prefix_caching = rel.hybrid_prefix_caching;
    o.mamba_align_mode = rel.mamba_align_mode;
    o.dsv4 = rel.dsv4;
    o.msa = rel.msa;
    o.concurrency_group_blocks = rel.concurrency_group_blocks;
    o.diffkv = rel.diffkv;
    o.mamba_prefix = rel.mamba_prefix;
    o.mamba_spec_align = rel.mamba_spec_align;
    o.mamba_align_default = rel.mamba_align_default;
    o.nvfp4_kv_sliding_page = rel.nvfp4_kv_sliding_page;
}

// _PREVIOUSLY_SUPPORTED_MODELS as of v0.27.1 (and main on 2026-08-18), each with the commit that took it out of the
// registry (git log -S on registry.py; the release is the first whose tags contain it). Left out: the
// encoder-decoder and encoder-only ones (Bart, MBart, Florence-2, Donut, ERNIE 1-3), which kvbudget does not size.
// own_only by whether transformers has a class of the name: it has Mllama, Bamba, Dots1, MiniMax (MiniMaxForCausalLM),
// Phi-4-multimodal, Persimmon, Fuyu, Aya Vision; Phi-4-flash, Motif, Plamo2, Ouro, Tarsier, Mantis and Music Flamingo
// are left as notes too, their remote code being recent enough that it may declare the attention interface.
// The remote code of the refused ones was judged by its age, not read file by file (MiniMax-M1's derives from
// MiniMax-Text-01's of January 2025). Their configs have an auto_map, so the command kvbudget prints has
// --trust-remote-code (vllm_needs_remote_code) and gets past the config to the architecture.
struct DroppedArchChange {
    VllmDroppedArch d;
    VllmChange change;
};
const DroppedArchChange kVllmDroppedArchs[] = {
    // PR #21217 (752c6ade2, v0.9.2rc1-365).
    {{"Phi3SmallForCausalLM", "0.9.2", true}, {10, 0, 9, 2, 1, 365}},
    // PR #24907 "Remove V0 Encoder-Decoder Support" (759ef49b1, v0.10.2rc2-100).
    {{"MllamaForConditionalGeneration", "0.10.2", false}, {11, 0, 10, 2, 2, 100}},
    // PR #25400 (a903669e1, v0.10.2rc2-386).
    {{"Phi4FlashForCausalLM", "0.10.2", false}, {11, 0, 10, 2, 2, 386}},
    // PR #25866 (e61eb5e09, v0.11.0rc1-56); first in 0.11.1.
    {{"MotifForCausalLM", "0.10.2", false}, {11, 1, 11, 0, 1, 56}},
    // PR #30049 (9998ea5b5, v0.11.1-549).
    {{"Phi4MultimodalForCausalLM", "0.12.0", false}, {13, 0, 11, 1, kFinal, 549}},
    // PR #43784 (085ac221a, v0.21.1rc0-398); v0.22.1 was cut before it.
    {{"JAISLMHeadModel", "0.22.0", true}, {23, 0, 21, 1, 0, 398}},
    // PRs #45129, #45131, #45128 (v0.22.1rc0-464, -359, -431).
    {{"InternLM2VEForCausalLM", "0.23.0", true}, {24, 0, 22, 1, 0, 464}},
    {{"QWenLMHeadModel", "0.23.0", true}, {24, 0, 22, 1, 0, 359}},
    {{"QwenVLForConditionalGeneration", "0.23.0", true}, {24, 0, 22, 1, 0, 359}},
    {{"InternLMForCausalLM", "0.23.0", true}, {24, 0, 22, 1, 0, 431}},
    // PRs #45638, #45637, #45990, #45993 (v0.23.1rc0-4, -74, -164, -250).
    {{"XverseForCausalLM", "0.23.0", true}, {24, 0, 23, 1, 0, 4}},
    {{"Dots1ForCausalLM", "0.23.0", false}, {24, 0, 23, 1, 0, 74}},
    {{"BambaForCausalLM", "0.23.0", false}, {24, 0, 23, 1, 0, 164}},
    {{"MiniMaxForCausalLM", "0.23.0", false}, {24, 0, 23, 1, 0, 250}},
    {{"MiniMaxText01ForCausalLM", "0.23.0", true}, {24, 0, 23, 1, 0, 250}},
    {{"MiniMaxM1ForCausalLM", "0.23.0", true}, {24, 0, 23, 1, 0, 250}},
    {{"MiniMaxVL01ForConditionalGeneration", "0.23.0", true}, {24, 0, 23, 1, 0, 250}},
    // PRs of 2026-06-24 to 07-01 (v0.23.1rc0-371 to -691), first in 0.25.0.
    {{"BaiChuanForCausalLM", "0.23.0", true}, {25, 0, 23, 1, 0, 371}},
    {{"BaichuanForCausalLM", "0.23.0", true}, {25, 0, 23, 1, 0, 371}},
    {{"AquilaModel", "0.24.0", true}, {25, 0, 23, 1, 0, 432}},
    {{"AquilaForCausalLM", "0.24.0", true}, {25, 0, 23, 1, 0, 432}},
    {{"Grok1ModelForCausalLM", "0.24.0", true}, {25, 0, 23, 1, 0, 476}},
    {{"Grok1ForCausalLM", "0.24.0", true}, {25, 0, 23, 1, 0, 476}},
    {{"TarsierForConditionalGeneration", "0.24.0", false}, {25, 0, 23, 1, 0, 623}},
    {{"Tarsier2ForConditionalGeneration", "0.23.0", false}, {25, 0, 23, 1, 0, 623}},
    {{"MantisForConditionalGeneration", "0.24.0", false}, {25, 0, 23, 1, 0, 679}},
    {{"MusicFlamingoForConditionalGeneration", "0.24.0", false}, {25, 0, 23, 1, 0, 691}},
    {{"AyaVisionForConditionalGeneration", "0.24.0", false}, {25, 0, 23, 1, 0, 691}},
    // PRs #47989 and the Persimmon / Fuyu removal (v0.23.1rc0-973, -978), first in 0.26.0.
    {{"TeleChatForCausalLM", "0.25.0", true}, {26, 0, 23, 1, 0, 973}},
    {{"PersimmonForCausalLM", "0.25.0", false}, {26, 0, 23, 1, 0, 978}},
    {{"FuyuForCausalLM", "0.25.0", false}, {26, 0, 23, 1, 0, 978}},
    // PRs #49729, #49786 (v0.23.1rc0-1463, -1478), first in 0.27.0.
    {{"Plamo2ForCausalLM", "0.26.0", false}, {27, 0, 23, 1, 0, 1463}},
    {{"OuroForCausalLM", "0.26.0", false}, {27, 0, 23, 1, 0, 1478}},
};

Result<VllmRelease> vllm_release(const std::string& version) {
    VllmRelease r;
    if (trim(version).empty()) {
        auto all = [](const VllmChange&) { return true; };
        r.kv_cache_dtypes = kv_cache_dtypes(all);
        for (const DroppedArchChange& d : kVllmDroppedArchs) r.dropped.push_back(&d.d);
        return r;
    }
    auto ev = parse_engine_version(version, "vllm");
    if (!ev) return ev.error();
    r.version = ev->text;
    auto has = [&](const VllmChange& c) { return has_change(*ev, c); };
    r.gpu_memory_utilization = has(kVllmUtil092) ? 0.92 : 0.9;
    r.cudagraph_profiling = has(kVllmUtil092);
    r.cudagraph_profiling_rocm = has(kVllmRocmGraphs) || (has(kVllmRocmGraphsOn) && !has(kVllmRocmGraphsOff));
    r.kv_cache_dtypes = kv_cache_dtypes(has);
    r.batch_defaults_160 = has(kVllmBatch160);
    r.kv_from_modelopt = has(kVllmKvFromModelopt);
    r.kv_modelopt_nvfp4 = has(kVllmKvNvfp4);
    r.nvfp4_kv_backend = has(kVllmKvNvfp4Backend);
    r.nvfp4_kv_sliding_page = has(kVllmKvNvfp4SlidingPage);
    r.flashinfer_head_512 = has(kVllmFlashInferHead512);
    r.kv_from_ct_scheme = has(kVllmKvFromCtScheme);
    r.kv_ct_explicit_wins = has(kVllmKvCtExplicitWins);
    r.cudagraph_max_1024_sm100 = has(kVllmCapture1024);
    r.cudagraph_captures_max_tokens = has(kVllmCaptureMaxTokens);
    r.fp8_kv_triton_sm89 = has(kVllmFp8KvTritonSm89);
    r.fp8_kv_triton_mla_sm89 = has(kVllmFp8KvTritonMlaSm89);
    r.flashinfer_sm80 = has(kVllmFlashInferSm80);
    r.no_sm70 = has(kVllmNoSm70);
    r.spaced_sentences = has(kVllmSpacedSentences);
    r.expert_parallel = has(kVllmExpertParallel);
    r.ep_remainder_last = !has(kVllmEpBalanced);
    r.newer_than_known = ev->major > 0 || ev->minor > kVllmNewestMinor;
    r.log_format = !has(kVllmTokensFromConcurrency) ? VllmLogFormat::Legacy
                   : !has(kVllmInFlightWindow)      ? VllmLogFormat::Split
                                                    : VllmLogFormat::Current;
    r.one_line_capacity = has(kVllmOneLine);
    r.mla_forced_block_sizes = !has(kVllmMlaPreferred);
    r.pp_check_all_layers = has(kVllmPpAllLayers) && !has(kVllmPpPerWorker);
    r.hybrid_prefix_caching = has(kVllmHybridPrefixCaching);
    r.mamba_align_mode = has(kVllmMambaAlign);
    r.dsv4 = !has(kVllmDsv4) ? 0 : !has(kVllmDsv4FlashMlaAssert) ? 1 : !has(kVllmDsv4DsMlaAssert) ? 2 : 3;
    r.concurrency_group_blocks = has(kVllmConcurrencyGroupBlocks);
    r.diffkv = has(kVllmDiffKv);
    r.msa = has(kVllmMsa);
    r.fp8_merged_off_grid = has(kVllmFp8MergedOffGrid);
    r.awq_layer_fallback = has(kVllmAwqLayerFallback);
    r.marlin_sm75 = has(kVllmMarlinSm75);
    r.ct_fp8_block = has(kVllmCtFp8Block);
    r.ct_block_list = has(kVllmCtBlockList);
    r.ct_nvfp4_as_w4a16 = has(kVllmCtNvfp4AsW4a16);
    r.ct_mxfp4 = has(kVllmCtMxfp4);
    r.ct_wna16_zero_points = has(kVllmCtWna16ZeroPoints);
    r.ct_wna16_sm75 = has(kVllmCtWna16Sm75);
    r.vision_rope_cache = has(kVllmVisionRopeCache);
    for (const DroppedArchChange& d : kVllmDroppedArchs)
        if (has(d.change)) r.dropped.push_back(&d.d);
    r.ct_fp8_nvfp4_sm75 = has(kVllmCtFp8Nvfp4Sm75);
    r.ct_w8a16_block = has(kVllmCtW8a16Block);
    r.modelopt_fp8_sm80 = has(kVllmModeloptFp8Sm80);
    r.modelopt_fp4_sm80 = has(kVllmModeloptFp4Sm80);
    r.gpt_oss_mxfp4_name = has(kVllmGptOssMxfp4);
    r.auto_awq_name = has(kVllmAutoAwq);
    r.fp32_router_glm4_moe = has(kVllmGlm4MoeFp32Gate);
    r.fp32_router_ernie45 = has(kVllmErnie45Fp32Gate);
    r.gate_linear = has(kVllmGateLinear);
    r.fp32_score_bias_deepseek = has(kVllmDeepseekFp32ScoreBias);
    r.mamba_prefix = has(kVllmMambaPrefixProtocol)  ? VllmMambaPrefix::Declared
                     : has(kVllmMambaPrefixCaching) ? VllmMambaPrefix::Mamba2List
                                                    : VllmMambaPrefix::Off;
    r.mamba_spec_align = has(kVllmMambaSpecAlign) && !has(kVllmMambaSpecAll);
    r.mamba_align_default = has(kVllmMambaAlignDefault);
    r.error_wording = !has(kVllmEstimate)      ? VllmErrorWording::NoEstimate2f
                      : !has(kVllmSeeDocs)     ? VllmErrorWording::NoDocs2f
                      : !has(kVllmFormatGib)   ? VllmErrorWording::SeeDocs2f
                      : !has(kVllmModelsFixed) ? VllmErrorWording::SeeDocsGib
                                               : VllmErrorWording::Current;
    return r;
}

Result<VllmKvChoice> vllm_kv_choice(const ModelSpec& m, const VllmRelease& rel, const std::string& asked,
                                    std::vector<Message>* notes) {
    VllmKvChoice c{asked, asked};
    // A spelling this release's argparse refuses stays as asked, for vllm_kv_cache_dtype to refuse in its words.
    if (std::find(rel.kv_cache_dtypes.begin(), rel.kv_cache_dtypes.end(), asked) == rel.kv_cache_dtypes.end()) return c;
    auto say = [&](Message n) {
        if (notes) notes->push_back(std::move(n));
    };
    if (asked == "auto" && rel.dsv4 && std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer)) {
        c.dtype = c.command = "fp8";
        say(note("vllm_dsv4_fp8_default"));
        return c;
    }
    const Quantization& q = m.quant;
    if (q.kv.source == "modelopt" && rel.kv_from_modelopt && asked == "auto") {
        if (!(q.kv.dtype == "fp8" || (q.kv.dtype == "nvfp4" && rel.kv_modelopt_nvfp4))) {
            say(note("vllm_kv_declared_unmapped", {{"value", q.kv.written}}));
            return c;
        }
        // MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP: "fp8" -> "fp8_e4m3", "nvfp4" -> "nvfp4".
        c.dtype = q.kv.dtype == "fp8" ? "fp8_e4m3" : q.kv.dtype;
        say(note("vllm_kv_declared", {{"dtype", c.dtype}, {"value", q.kv.written}}));
        return c;
    }
    // Only vLLM's Attention class reads kv_cache_scheme: a model of MLA layers alone keeps its dtype.
    const bool attention =
        std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return head_attention(l.kind); });
    if (q.kv.source == "compressed-tensors" && rel.kv_from_ct_scheme && attention && asked != "fp8") {
        if (asked == "auto") {
            c.dtype = "fp8";
            say(note("vllm_kv_declared_scheme", {{"value", q.kv.written}}));
        } else if (!rel.kv_ct_explicit_wins) {
            c.dtype = "fp8";
            say(note("vllm_kv_scheme_over_flag", {{"asked", asked}, {"value", q.kv.written}}));
        }
    }
    return c;
}

Result<KvType> vllm_kv_cache_dtype(const std::string& value, const ModelSpec& m,
                                   const std::vector<std::string>& choices_in) {
    const std::vector<std::string> choices = choices_in.empty() ? vllm_release("")->kv_cache_dtypes : choices_in;
    if (std::find(choices.begin(), choices.end(), value) == choices.end())
        return make_error("bad_kv_dtype",
                          note("unknown_vllm_kv_dtype", {{"value", value}, {"choices", argparse_choices(choices)}}));
    // Only the sparse MLA backends (FlashMLA-sparse, FlashInfer-MLA-sparse) store the packed fp8_ds_mla cache.
    const bool ds_sparse =
        (m.has(LayerKind::Mla) && m.sparse_mla) || std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer);
    const bool mla = m.has(LayerKind::Mla);
    auto sized = [&](const std::string& n) {
        const auto& names = vllm_kv_type_names();
        return std::find(names.begin(), names.end(), n) != names.end() || (n == "fp8_ds_mla" && ds_sparse) ||
               (is_nvfp4_kv(n) && !mla);
    };
    // VllmConfig.validate_nvfp4_kv_cache_with_mla (PR #40177, 0.21.0 on; 0.20 had no backend for nvfp4 at all).
    if (is_nvfp4_kv(value) && mla) return vllm_steps::refuse(note("vllm_nvfp4_kv_mla"));
    if (!sized(value)) {
        std::string list;
        for (const auto& n : choices)
            if (sized(n)) list += (list.empty() ? "" : ", ") + n;
        return make_error("bad_kv_dtype", note("vllm_kv_dtype_not_modelled", {{"value", value}, {"choices", list}}));
    }
    return vllm_kv_type(value, m.dtype);
}

Result<VllmLogFormat> vllm_log_format_for_version(const std::string& version) {
    auto r = vllm_release(version);
    if (!r) return r.error();
    return r->log_format;
}

bool vllm_mla_forced_for_version(const std::string& version) {
    auto r = vllm_release(version);
    return r && r->mla_forced_block_sizes;
}

int64_t vllm_spec_max_memory(const VllmLayerSpec& s, int64_t tokens, const VllmLayout& l) {
    const int64_t mnbt = l.max_in_flight_tokens > 0 ? l.max_in_flight_tokens : l.max_num_batched_tokens;
    const MambaCacheMode mode = l.mamba_cache_mode;
    const int64_t num_spec = l.num_speculative_tokens;
    const int64_t page = s.page_size_bytes;
    if (s.spec_type == "SlidingWindowSpec" || s.spec_type == "SlidingWindowMLASpec") {
        const int64_t n = std::min(sat_add(s.window - 1, mnbt), tokens);
        return sat_mul(cdiv(n, s.block_size) + 1, page);
    }
    if (s.spec_type == "ChunkedLocalAttentionSpec") {
        const int64_t n = std::min(sat_add(s.window, mnbt), tokens);
        return sat_mul(cdiv(n, s.block_size), page);
    }
    if (s.spec_type == "MambaSpec") {
        if (mode == MambaCacheMode::All) return sat_mul(cdiv(tokens, s.block_size), page);
        if (mode == MambaCacheMode::Align) return sat_mul(page, 2 + num_spec);
        return sat_mul(page, 1 + num_spec);
    }
    return sat_mul(cdiv(tokens, s.block_size), page);
}

namespace {

using namespace vllm_steps;
using std::to_string;

Error bad_value(Message m) {
    return make_error("bad_value", std::move(m));
}

// The ranges vLLM's argument parser and config classes accept.
Result<bool> check_options(const ModelSpec& m, const VllmOptions& o) {
    if (o.tensor_parallel_size < 1 || o.tensor_parallel_size > 4096)
        return bad_value(note("vllm_tp_range", {{"value", to_string(o.tensor_parallel_size)}}));
    if (o.pipeline_parallel_size < 1 || o.pipeline_parallel_size > 4096)
        return bad_value(note("vllm_pp_range", {{"value", to_string(o.pipeline_parallel_size)}}));
    if (o.block_size < 0 || o.block_size > (1 << 20))
        return bad_value(note("vllm_block_size_range", {{"value", to_string(o.block_size)}}));
    if (o.mla_block_size < 0 || o.mla_block_size > (1 << 20))
        return bad_value(note("vllm_mla_block_size_range", {{"value", to_string(o.mla_block_size)}}));
    if (o.gpu_compute_capability < 0 || o.gpu_compute_capability > 999)
        return bad_value(note("vllm_compute_capability_range", {{"value", to_string(o.gpu_compute_capability)}}));
    if (o.max_model_len < 0 || o.max_num_batched_tokens < 0) return bad_value(note("vllm_lengths_negative"));
    if (o.kernel_block_alignment < 0 || o.kernel_block_alignment > 4096)
        return bad_value(note("vllm_kernel_alignment_range"));
    if (o.num_speculative_tokens < 0 || o.num_speculative_tokens > 64) return bad_value(note("vllm_spec_tokens_range"));
    if (m.layers.empty()) return bad_value(note("engine_no_layers", {{"model", m.name}}));
    const int64_t n_layers = static_cast<int64_t>(m.layers.size());
    if (o.pipeline_parallel_size > n_layers)
        return refuse(note("vllm_pp_over_layers",
                           {{"pp", to_string(o.pipeline_parallel_size)}, {"layers", to_string(n_layers)}}));
    return true;
}

// max_model_len: vLLM refuses more than the length it derives from the config (the length
// keys, x the RoPE scaling factor; model/rope.h). Without any length key it assumes 2048.
// Then the batch and the tokens in flight.
Result<bool> resolve_lengths(const ModelSpec& m, const VllmOptions& o, VllmLayout& L) {
    const ContextLimits lim = context_limits(m);
    const bool has_len_key = m.max_position_embeddings > 0;
    const int64_t model_max = lim.max_len;
    if (!has_len_key) L.notes.push_back(note("vllm_no_max_len"));
    const int64_t mml = o.max_model_len > 0 ? o.max_model_len : lim.vllm_default;
    if (mml > model_max) {
        const bool current = o.log_format == VllmLogFormat::Current || o.log_format == VllmLogFormat::Split;
        Message refusal =
            note(current ? "vllm_max_model_len_over" : "vllm_max_model_len_over_legacy",
                 {{"max_model_len", to_string(mml)},
                  {"key", lim.vllm_key},
                  {"derived", current || lim.vllm_scaled ? py_float_text(lim.vllm_derived) : to_string(model_max)}});
        if (!o.allow_long_max_model_len) return refuse(refusal);
        L.over_max_model_len = refusal;
    }
    if (mml > (int64_t(1) << 40)) return bad_value(note("vllm_max_model_len_absurd"));
    L.max_model_len = mml;
    // get_batch_defaults: `vllm serve` uses 8192 on >= 70 GiB GPUs (2048 below, 16384 from 160 GiB in 0.28.0 on),
    // the LLM class 8192 below 70 GiB (16384 above); 8192 is the value both share. The budget passes the GPU's own.
    L.max_num_batched_tokens = o.max_num_batched_tokens > 0 ? o.max_num_batched_tokens : 8192;
    // VllmConfig.max_concurrent_batches (V1 model runner): 2 with async scheduling and no PP, else
    // pp_size. Releases before max_in_flight_tokens (the older log formats) reserved one batch.
    int64_t batches = 1;
    if (o.async_scheduling >= 0 || o.log_format == VllmLogFormat::Current) {
        const bool async = o.async_scheduling != 0;
        batches = async ? (L.pp <= 1 ? 2 : L.pp) : L.pp;
    }
    // vLLM bounds neither; saturating keeps min(window + in-flight, tokens) exact.
    L.max_in_flight_tokens = sat_mul(batches, L.max_num_batched_tokens);
    return true;
}

// vLLM's ParallelConfig / ModelConfig checks for tensor parallelism.
Result<bool> check_tp(const ModelSpec& m, int64_t tp) {
    const int64_t heads = m.dims.num_attention_heads;
    if (heads > 0 && heads % tp != 0)
        return refuse(note("vllm_tp_heads", {{"heads", to_string(heads)}, {"tp", to_string(tp)}}));
    for (const Layer& l : m.layers) {
        // A layer of its own head count (Laguna's num_attention_heads_per_layer): the config's check above passes on
        // num_attention_heads, and the layer's attention asserts total_num_heads % tp_size == 0 as it is built.
        if (l.q_heads > 0 && l.q_heads % tp != 0)
            return refuse(note("vllm_tp_layer_heads", {{"heads", to_string(l.q_heads)}, {"tp", to_string(tp)}}));
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
            // QKVParallelLinear: KV heads are either split evenly or replicated evenly.
            const int64_t h = l.kv_heads;
            if (h <= 0) continue;
            if ((tp >= h && tp % h != 0) || (tp < h && h % tp != 0))
                return refuse(note("vllm_tp_kv_heads", {{"heads", to_string(h)}, {"tp", to_string(tp)}}));
        }
        if (l.kind == LayerKind::Linear || l.kind == LayerKind::Mamba) {
            const StateGeometry& g = l.state;
            if (g.heads > 0 && g.heads % tp != 0)
                return refuse(note(l.kind == LayerKind::Linear ? "vllm_tp_linear_heads" : "vllm_tp_mamba_heads",
                                   {{"heads", to_string(g.heads)}, {"tp", to_string(tp)}}));
        }
    }
    // The vision encoder's attention splits its heads over the TP ranks (dist_utils.divide as it is built, the
    // config's checks passed: GLM-4.5V at TP 8, vllm#24004). Kimi K2.5's ViT falls back to a whole encoder per rank
    // (is_vit_use_data_parallel(num_heads), 0.26.0 on; before, not modelled) and InternViT pads dummy heads.
    const int64_t vh = m.dims.vision_heads;
    const bool vit_fallback = m.architecture == "KimiK25ForConditionalGeneration" ||
                              m.architecture == "InternVLChatModel" ||
                              m.architecture == "InternVLForConditionalGeneration";
    if (m.dims.vision_params > 0 && vh > 0 && vh % tp != 0 && !vit_fallback)
        return refuse(note("vllm_tp_vision_heads", {{"heads", to_string(vh)}, {"tp", to_string(tp)}}));
    // Then each block's MLP, built after its attention: MergedColumnParallelLinear asserts every output size divides
    // by TP with no message (Qwen2.5-VL's 3,420 at TP 8), ColumnParallelLinear through divide() as above.
    const int64_t mlp = m.dims.vision_mlp;
    if (m.dims.vision_params > 0 && mlp > 0 && mlp % tp != 0)
        return refuse(note(m.dims.vision_mlp_merged ? "vllm_tp_vision_mlp_merged" : "vllm_tp_vision_mlp",
                           {{"width", to_string(mlp)}, {"tp", to_string(tp)}}));
    return true;
}

// Dtypes of recurrent state: mamba_cache_dtype / mamba_ssm_cache_dtype ("auto" follows the model).
Result<bool> state_dtypes(const ModelSpec& m, const VllmOptions& o, const KvType& kvt, Plan& p) {
    const KvDtypes sd = uniform_kv_dtypes(m, kvt);
    p.conv_b = sd.conv_state_bytes;
    p.ssm_b = sd.ssm_state_bytes;
    if (o.mamba_cache_dtype != "auto" && !o.mamba_cache_dtype.empty()) {
        p.conv_b = dtype_size(o.mamba_cache_dtype);
        if (p.conv_b <= 0) return bad_value(note("vllm_mamba_dtype_unknown", {{"value", o.mamba_cache_dtype}}));
        p.ssm_b = p.conv_b;
    }
    if (o.mamba_ssm_cache_dtype != "auto" && !o.mamba_ssm_cache_dtype.empty()) {
        p.ssm_b = dtype_size(o.mamba_ssm_cache_dtype);
        if (p.ssm_b <= 0) return bad_value(note("vllm_mamba_ssm_dtype_unknown", {{"value", o.mamba_ssm_cache_dtype}}));
    }
    // KDA (mamba_utils kda_state_dtype): the conv states follow mamba_cache_dtype, the recurrent state is
    // float32 whatever either option says.
    if (m.family == "kimi_linear") p.ssm_b = 4;
    return true;
}

// vllm/distributed/utils.py get_pp_indices: VLLM_PP_LAYER_PARTITION's counts, checked as vLLM checks
// them (same ValueError texts), else the even split with the remainder on the stages just before the last.
}  // namespace

Result<std::vector<int64_t>> vllm_pp_parts(int64_t n_layers, int64_t pp, const std::string& partition) {
    std::vector<int64_t> parts;
    if (partition.empty()) {
        parts.assign(static_cast<size_t>(pp), n_layers / pp);
        const int64_t rem = n_layers % pp;
        for (int64_t i = 2; i < rem + 2; ++i) parts[static_cast<size_t>(pp - i)] += 1;
        return parts;
    }
    // Python's int() per comma-separated item: blanks around digits, an optional sign. A negative count
    // passes vLLM's checks and fails later; kvbudget calls it invalid here.
    size_t i = 0;
    while (i <= partition.size()) {
        const size_t end = std::min(partition.find(',', i), partition.size());
        std::string item = partition.substr(i, end - i);
        const size_t a = item.find_first_not_of(" \t"), b = item.find_last_not_of(" \t");
        item = a == std::string::npos ? "" : item.substr(a, b - a + 1);
        if (!item.empty() && item[0] == '+') item = item.substr(1);
        if (item.empty() || item.size() > 9 || item.find_first_not_of("0123456789") != std::string::npos ||
            parts.size() > 4096)
            return vllm_steps::refuse(note("vllm_pp_partition_invalid", {{"value", partition}}));
        parts.push_back(std::stoll(item));
        i = end + 1;
    }
    int64_t sum = 0;
    for (int64_t x : parts) sum += x;
    if (static_cast<int64_t>(parts.size()) != pp)
        return vllm_steps::refuse(
            note("vllm_pp_partition_count", {{"count", std::to_string(parts.size())}, {"pp", std::to_string(pp)}}));
    if (sum != n_layers)
        return vllm_steps::refuse(
            note("vllm_pp_partition_sum", {{"sum", std::to_string(sum)}, {"layers", std::to_string(n_layers)}}));
    return parts;
}

namespace {

std::vector<int> pp_ranks(const std::vector<int64_t>& parts) {
    std::vector<int> rank;
    for (size_t r = 0; r < parts.size(); ++r)
        rank.insert(rank.end(), static_cast<size_t>(parts[r]), static_cast<int>(r));
    return rank;
}

// The block sizes and spec types the model's layer kinds call for, before the hybrid adjustment.
void plan_attention(const ModelSpec& m, const VllmOptions& o, const KvType& kvt, Plan& p, VllmLayout& L) {
    const bool is_mla = m.has(LayerKind::Mla);
    // Sparse MLA (DeepSeek-V3.2, GLM-5: the config has index_topk, ModelSpec::sparse_mla): FlashMLA-sparse
    // pages are 64 tokens, an fp8 cache is the packed "fp8_ds_mla" layout of 656 B/token, and every layer
    // that runs its own indexer also caches its keys (DeepseekV32IndexerCache: index_head_dim fp8 values
    // + one fp32 scale per 128 = 132 B/token at 128).
    p.dsv4 = std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer);
    // DeepSeek-V4 keeps its indexer keys in caches of its own (below), not DeepSeek-V3.2's.
    p.ds_sparse = is_mla && m.sparse_mla && !p.dsv4;
    p.fp8_ds_mla = p.ds_sparse && kvt.name.rfind("fp8", 0) == 0;
    p.attn_block =
        o.block_size > 0 ? o.block_size : (is_mla && o.mla_block_size > 0 ? o.mla_block_size : (p.ds_sparse ? 64 : 16));
    // DeepSeek-V4: the first attention layer is a DeepseekV4SWACache, whose backend prefers 256-token blocks
    // (DeepseekSparseSWABackend.get_preferred_block_size; update_block_size_for_backend: "Setting kv cache block
    // size to 256"), the only size its FlashMLA kernels take.
    if (p.dsv4) p.attn_block = o.block_size > 0 ? o.block_size : 256;
    // MiniMax-M3: the MSA backends (MiniMaxM3SparseBackend, MiniMaxM3IndexerBackend) take only 128-token kernel
    // blocks (get_supported_kernel_block_sizes), yet vLLM takes its block size from the first layer's backend, a
    // dense one content with 16, so at the default the worker stops in select_common_block_size; the model's
    // recipe passes --block-size 128, which is what this budget serves (and its command says).
    if (m.msa_block_size > 0 && o.block_size == 0) p.attn_block = m.msa_block_size;
    if (is_mla && !p.ds_sparse && !p.dsv4 && o.block_size == 0 && o.mla_block_size == 0 &&
        o.gpu_compute_capability > 0) {
        const VllmMlaBackend b = vllm_mla_backend(o.gpu_compute_capability, kvt.name.rfind("fp8", 0) == 0,
                                                  m.dims.qk_nope_head_dim, o.mla_forced_block_sizes);
        p.attn_block = b.block_size;
        L.mla_backend = b.backend;
    }
    // Chunked local attention (Llama 4): vLLM disables the hybrid manager by default
    // (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE unset), so chunked layers are full.
    const bool chunked_as_full = m.has(LayerKind::Chunked) && !o.chunked_local_hybrid;
    if (chunked_as_full) L.notes.push_back(note("vllm_chunked_as_full"));
    p.disable_hybrid = o.disable_hybrid_kv_cache_manager || chunked_as_full || o.log_format == VllmLogFormat::V0;
}

// One attention layer's spec: FullAttentionSpec, or SlidingWindowSpec / ChunkedLocalAttentionSpec
// while the hybrid manager is on.
// Page products in 128 bits: a hybrid model's attention block grows to hold one state page
// (up to 2^42 bytes), so block x heads x head sizes x dtype can pass 2^63; -1 then.
int64_t page_bytes(__int128 block, __int128 per_token) {
    const __int128 b = block * per_token;
    return b > static_cast<__int128>(INT64_MAX) ? -1 : static_cast<int64_t>(b);
}

void attention_spec(const Layer& l, const Plan& p, VllmLayerSpec& s) {
    s.block_size = p.attn_block;
    s.num_kv_heads = std::max<int64_t>(1, l.kv_heads / p.tp);
    s.head_size = l.k_head_dim;
    s.head_size_v = l.v_head_dim > 0 && !p.pad_v ? l.v_head_dim : l.k_head_dim;
    s.window = l.window;
    // A head's K row and V row as the element type stores them (an NVFP4 row carries its block scales).
    auto row = [&](int64_t n) { return __int128(p.kv.bytes(n)); };
    if (l.kind == LayerKind::Full || p.disable_hybrid) {
        s.spec_type = "FullAttentionSpec";
        s.real_page_size_bytes =
            page_bytes(s.block_size, __int128(s.num_kv_heads) * (row(s.head_size) + row(s.head_size_v)));
        if (l.kind == LayerKind::Full) s.window = 0;
    } else {
        s.spec_type = l.kind == LayerKind::Sliding ? "SlidingWindowSpec" : "ChunkedLocalAttentionSpec";
        // SlidingWindowSpec pages head_size + head_size_v from 0.20.0 (VllmOptions::diffkv), 2 x head_size before;
        // ChunkedLocalAttentionSpec still 2 x head_size.
        const bool diff = l.kind == LayerKind::Sliding && p.diffkv;
        if (!diff) s.head_size_v = s.head_size;
        const __int128 per_head = l.kind == LayerKind::Sliding && p.sliding_uint8
                                      ? __int128(s.head_size + s.head_size_v) * p.dt
                                      : row(s.head_size) + row(s.head_size_v);
        s.real_page_size_bytes = page_bytes(s.block_size, __int128(s.num_kv_heads) * per_head);
    }
}

// MLAAttentionSpec: one latent "head", never split by TP.
void mla_spec(const Layer& l, const Plan& p, VllmLayerSpec& s) {
    s.spec_type = "MLAAttentionSpec";
    s.block_size = p.attn_block;
    s.num_kv_heads = 1;
    s.head_size = l.kv_lora_rank + l.qk_rope_head_dim;
    s.head_size_v = s.head_size;
    s.real_page_size_bytes = page_bytes(s.block_size, p.fp8_ds_mla ? 656 : p.kv.bytes(s.head_size));
    if (p.fp8_ds_mla) s.dtype_bytes = 1;
}

// kv_cache_interface.py _apply_alignment_padding: a DeepSeek-V4 page rounded up to FlashMLA's 576 B.
int64_t round_576(int64_t b) {
    return b < 0 ? b : cdiv(b, 576) * 576;
}

// A DeepSeek-V4 layer's caches with the fp8_ds_mla layout (models/deepseek_v4/attention.py, compressor.py,
// v1/attention/backends/mla/sparse_swa.py; the same from 0.20 to 0.27): a token's latent is 448 fp8 NoPE + 64 bf16
// RoPE + 8 scale bytes = 584 B; every page is padded to a multiple of 576 B. None is split by tensor parallelism.
void dsv4_specs(const Layer& l, const Plan& p, int64_t i, VllmLayerSpec s, std::vector<VllmLayerSpec>& out) {
    const int64_t latent = l.kv_lora_rank + l.qk_rope_head_dim;
    auto add = [&](int64_t cache, const char* type, int64_t block, int64_t ratio, int64_t head, int64_t dt,
                   int64_t window, int64_t per_entry) {
        VllmLayerSpec c = s;
        c.layer = cache * p.n_layers + i;
        c.cache = cache;
        c.spec_type = type;
        c.block_size = block;
        c.compress_ratio = ratio;
        c.num_kv_heads = 1;
        c.head_size = c.head_size_v = head;
        c.dtype_bytes = dt;
        c.window = window;
        // storage_block_size (block // compress_ratio) entries of per_entry bytes.
        c.real_page_size_bytes = page_bytes(block / ratio, per_entry);
        c.page_size_bytes = round_576(c.real_page_size_bytes);
        out.push_back(c);
    };
    // Registration order: the indexer (its key cache, then its compressor), the window cache, the compressed
    // cache, the compressor.
    if (l.compress_ratio == 4 && l.indexer_head_dim > 0) {
        // 128 fp8 values + one fp32 scale per 128 (DeepseekV4Indexer: head_dim + head_dim // 128 * 4).
        const int64_t key = l.indexer_head_dim + l.indexer_head_dim / 128 * 4;
        add(kDsv4IndexerKeys, "MLAAttentionSpec", p.attn_block, 4, key, 1, 0, key);
        // CompressorStateCache: coff = 2 at ratio 4; kv and score states of coff x head_dim fp32; 4-token blocks,
        // window coff x ratio.
        add(kDsv4IndexerState, "SlidingWindowMLASpec", 4, 1, 2 * 2 * l.indexer_head_dim, 4, 8,
            2 * 2 * l.indexer_head_dim * 4);
    }
    add(kDsv4Swa, "SlidingWindowMLASpec", 64, 1, latent, 1, l.window, 584);
    if (l.compress_ratio > 1) {
        const int64_t coff = l.compress_ratio == 4 ? 2 : 1;
        add(kDsv4Compressed, "MLAAttentionSpec", p.attn_block, l.compress_ratio, latent, 1, 0, 584);
        // Compressor states: 4-token blocks at ratio 4, 8-token blocks at 128 ("The KV block shape [256//4,
        // head_dim] = [64, 584] determines ..."), window coff x ratio.
        add(kDsv4State, "SlidingWindowMLASpec", l.compress_ratio == 4 ? 4 : 8, 1, 2 * coff * latent, 4,
            coff * l.compress_ratio, 2 * coff * latent * 4);
    }
}

// Per-layer specs (KVCacheSpec per layer on one worker), the indexer caches of sparse MLA.
Result<bool> layer_specs(const ModelSpec& m, const Plan& p, VllmLayout& L) {
    L.layers.reserve(m.layers.size());
    int64_t indexed = 0, index_bytes = 0;
    for (int64_t i = 0; i < p.n_layers; ++i) {
        const Layer& l = m.layers[i];
        VllmLayerSpec s;
        s.layer = i;
        s.kind = l.kind;
        s.pp_rank = p.rank[i];
        s.dtype_bytes = p.dt;
        switch (l.kind) {
            case LayerKind::Full:
            case LayerKind::Sliding:
            case LayerKind::Chunked: attention_spec(l, p, s); break;
            case LayerKind::Mla:
                if (p.dsv4 && dsv4_layer(l)) {
                    const size_t before = L.layers.size();
                    dsv4_specs(l, p, i, s, L.layers);
                    for (size_t k = before; k < L.layers.size(); ++k)
                        if (L.layers[k].real_page_size_bytes < 0) return overflow(m.name);
                    continue;
                }
                mla_spec(l, p, s);
                break;
            case LayerKind::Linear:
            case LayerKind::Mamba:
                s.spec_type = "MambaSpec";
                s.block_size = p.mamba_block;
                state_bytes_per_gpu(l, p.tp, p.num_spec, p.conv_b, p.ssm_b, &s.state_conv_bytes, &s.state_ssm_bytes);
                s.real_page_size_bytes = s.state_conv_bytes + s.state_ssm_bytes;
                if (p.mamba_page_padded > 0 && p.mamba_page_padded < s.real_page_size_bytes)
                    return make_error("unsupported", note("vllm_state_sizes_differ", {{"model", m.name}}));
                break;
            case LayerKind::None: continue;
        }
        if (s.real_page_size_bytes < 0 || p.mamba_page_padded == INT64_MAX) return overflow(m.name);
        s.page_size_bytes = s.real_page_size_bytes;
        if (s.spec_type == "MambaSpec" && p.mamba_page_padded > 0) s.page_size_bytes = p.mamba_page_padded;
        if (s.page_size_bytes <= 0)
            return bad_value(note("vllm_empty_page", {{"layer", to_string(i)}, {"model", m.name}}));
        L.layers.push_back(s);
        // MiniMax-M3's MSA indexer keys (MiniMaxM3IndexerCache.get_kv_cache_spec): an MLAAttentionSpec of one head of
        // index_head_dim, bf16 whatever --kv-cache-dtype says (attention_config.indexer_kv_dtype, default "bf16"),
        // never split by tensor parallelism.
        if (m.msa_block_size > 0 && l.kind == LayerKind::Full && l.index_head_dim > 0) {
            VllmLayerSpec ix = s;
            ix.layer = p.n_layers + i;
            ix.spec_type = "MLAAttentionSpec";
            ix.num_kv_heads = 1;
            ix.head_size = ix.head_size_v = l.index_head_dim;
            ix.dtype_bytes = 2;
            ix.window = 0;
            ix.real_page_size_bytes = ix.page_size_bytes = page_bytes(ix.block_size, __int128(l.index_head_dim) * 2);
            if (ix.page_size_bytes < 0) return overflow(m.name);
            L.layers.push_back(ix);
            ++indexed;
            index_bytes = l.index_head_dim * 2;
        }
        if (p.ds_sparse && l.kind == LayerKind::Mla && l.index_head_dim > 0) {
            VllmLayerSpec ix = s;
            ix.layer = p.n_layers + i;  // an extra cache of layer i
            ix.head_size = ix.head_size_v = l.index_head_dim + l.index_head_dim / 128 * 4;
            ix.dtype_bytes = 1;
            ix.real_page_size_bytes = ix.page_size_bytes = page_bytes(ix.block_size, ix.head_size);
            if (ix.page_size_bytes < 0) return overflow(m.name);
            L.layers.push_back(ix);
            ++indexed;
            index_bytes = ix.head_size;
        }
    }
    if (p.ds_sparse)
        L.notes.push_back(note(p.fp8_ds_mla ? "vllm_ds_sparse_fp8" : "vllm_ds_sparse",
                               {{"bytes", std::to_string(index_bytes)},
                                {"layers", std::to_string(indexed)},
                                {"total", std::to_string(m.count(LayerKind::Mla))}}));
    if (p.dsv4) L.notes.push_back(note("vllm_dsv4"));
    if (m.msa_block_size > 0)
        L.notes.push_back(note("vllm_msa", {{"block", std::to_string(p.attn_block)},
                                            {"bytes", std::to_string(index_bytes)},
                                            {"layers", std::to_string(indexed)},
                                            {"total", std::to_string(p.n_layers)}}));
    return true;
}

}  // namespace

Result<VllmLayout> vllm_layout(const ModelSpec& m, const VllmOptions& o) {
    if (auto ok = check_options(m, o); !ok) return ok.error();
    VllmLayout L;
    Plan p;
    p.model = m.name;
    p.tp = L.tp = o.tensor_parallel_size;
    p.pp = L.pp = o.pipeline_parallel_size;
    p.n_layers = static_cast<int64_t>(m.layers.size());
    p.num_spec = L.num_speculative_tokens = o.num_speculative_tokens;
    L.log_format = o.log_format;
    L.one_line_capacity = o.one_line_capacity >= 0 ? o.one_line_capacity != 0 : o.log_format == VllmLogFormat::Current;
    L.error_wording = o.error_wording != VllmErrorWording::FromFormat ? o.error_wording
                      : o.log_format == VllmLogFormat::Legacy         ? VllmErrorWording::SeeDocsGib
                                                                      : VllmErrorWording::Current;

    auto kvt = o.kv_cache_dtype == "auto" && !o.model_dtype.empty()
                   ? Result<KvType>(vllm_auto_kv_type(o.model_dtype))
                   : vllm_kv_cache_dtype(o.kv_cache_dtype, m, o.kv_cache_dtype_choices);
    if (!kvt) return kvt.error();
    L.kv_cache_dtype = kvt->name;
    if (std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer)) {
        if (o.dsv4 == 0) return make_error("unsupported", note("vllm_dsv4_release"));
        // DeepseekV4's attention asserts an fp8 cache on its default backends (FlashMLA, and FlashInfer on SM12x:
        // the fp8_ds_mla layout) and switches any fp8 spelling to fp8_ds_mla; "auto" is not one.
        const std::string asked = o.kv_cache_dtype;
        if (asked.rfind("fp8", 0) != 0)
            return refuse(note(o.dsv4 == 1   ? "vllm_dsv4_fp8_only_v20"
                               : o.dsv4 == 2 ? "vllm_dsv4_fp8_only_v23"
                                             : "vllm_dsv4_fp8_only",
                               {{"dtype", asked}}));
        L.kv_cache_dtype = "fp8_ds_mla";
        if (o.block_size > 0 && o.block_size != 256)
            return make_error("unsupported", note("vllm_dsv4_block_size", {{"block", std::to_string(o.block_size)}}));
    }
    if (m.msa_block_size > 0 && !o.msa) return make_error("unsupported", note("vllm_msa_release"));
    // select_common_block_size: the MSA backends' only kernel block (128) must divide vLLM's block.
    if (m.msa_block_size > 0 && o.block_size > 0 && o.block_size % m.msa_block_size != 0)
        return refuse(note("vllm_msa_block_size", {{"block", std::to_string(o.block_size)}}));
    L.concurrency_group_blocks = o.concurrency_group_blocks;
    p.kv = *kvt;
    // STR_DTYPE_TO_TORCH_DTYPE: a block-quantized cache is a uint8 tensor.
    p.dt = kvt->is_block_quantized() ? 1 : kvt->block_bytes;
    if (p.dt <= 0 || kvt->block_bytes <= 0)
        return bad_value(note("vllm_kv_elem_unknown", {{"dtype", o.kv_cache_dtype}}));
    p.sliding_uint8 = is_nvfp4_kv(kvt->name) && !o.nvfp4_kv_sliding_page;

    if (auto ok = resolve_lengths(m, o, L); !ok) return ok.error();
    if (auto ok = check_tp(m, p.tp); !ok) return ok.error();
    if (auto ok = state_dtypes(m, o, *kvt, p); !ok) return ok.error();

    p.has_state = m.has_state();
    for (const Layer& l : m.layers)
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked ||
            l.kind == LayerKind::Mla)
            p.has_attn = true;
    p.mode = resolve_mamba_cache_mode(m, o, p.has_attn);
    L.mamba_cache_mode = p.has_state ? p.mode : MambaCacheMode::None;

    p.diffkv = o.diffkv;
    // MiMo-V2 before PR #40045 (0.20.0) built its Attention without head_size_v and padded V with zeros to K's
    // width (mimo_v2_flash.py MiMoV2Attention.forward: F.pad(v, [0, head_dim - v_head_dim])): every layer cached V
    // at 192.
    const std::string mt = lower(m.model_type);
    p.pad_v = !o.diffkv && (mt == "mimo_v2_flash" || mt == "mimo_v2");
    plan_attention(m, o, *kvt, p, L);
    const int64_t kernel_block = p.attn_block;
    unify_hybrid_block(m, o, p, L);
    L.attn_block_size = p.attn_block;
    if (!L.mla_backend.empty()) {
        // Said once the block is final: a hybrid's state page raises it (Kimi Linear: 1888 tokens), and the
        // backend's size is then only the alignment beside vLLM's own "Setting attention block size" line.
        const int cc = o.gpu_compute_capability;
        MessageParams params = {{"backend", L.mla_backend},
                                {"block", to_string(p.attn_block)},
                                {"capability", to_string(cc / 10) + "." + to_string(cc % 10)}};
        if (p.attn_block == kernel_block) {
            L.notes.push_back(note("vllm_mla_backend", std::move(params)));
        } else {
            params.emplace_back("align", to_string(kernel_block));
            L.notes.push_back(note("vllm_mla_backend_hybrid", std::move(params)));
        }
    }

    // Only the target's layers are split (get_pp_indices, VLLM_PP_LAYER_PARTITION); the drafter is
    // built by the last stage's model runner ("we put the entire draft model on the last PP rank",
    // vllm/v1/worker/gpu_model_runner.py), so its layers join that stage.
    const int64_t drafter = std::clamp<int64_t>(m.drafter_layers, 0, p.n_layers - 1);
    auto parts = vllm_pp_parts(p.n_layers - drafter, p.pp, o.pp_layer_partition);
    if (!parts) return parts.error();
    L.stage_layers = parts.value();
    p.rank = pp_ranks(L.stage_layers);
    p.rank.insert(p.rank.end(), static_cast<size_t>(drafter), p.rank.empty() ? 0 : p.rank.back());
    if (auto ok = layer_specs(m, p, L); !ok) return ok.error();
    if (L.layers.empty()) {
        L.notes.push_back(note("vllm_attention_free"));
        return L;
    }
    if (auto ok = group_layers(p, L); !ok) return ok.error();
    // Every per-block sum below (a uniform-type group's page, a stage's block cost, group size
    // x page, V0's block) is a part of the sum of all pages: bound that sum once.
    __int128 pages = 0;
    for (const VllmLayerSpec& s : L.layers) pages += __int128(s.page_size_bytes) + s.real_page_size_bytes;
    if (pages > static_cast<__int128>(INT64_MAX)) return overflow(m.name);
    stage_costs(p, L);
    return L;
}

namespace {

// The value of "key" in a JSON object or a Python dict, as text ("" when absent).
std::string dict_value(const std::string& raw, const std::string& key) {
    size_t p = raw.find("'" + key + "'");
    if (p == std::string::npos) p = raw.find("\"" + key + "\"");
    if (p == std::string::npos) return {};
    p = raw.find(':', p);
    if (p == std::string::npos) return {};
    ++p;
    while (p < raw.size() && (raw[p] == ' ' || raw[p] == '\'' || raw[p] == '"')) ++p;
    size_t e = p;
    while (e < raw.size() && raw[e] != '\'' && raw[e] != '"' && raw[e] != ',' && raw[e] != '}') ++e;
    std::string v = raw.substr(p, e - p);
    while (!v.empty() && v.back() == ' ') v.pop_back();
    return v == "None" || v == "null" ? std::string() : v;
}

bool is_attention(const Layer& l) {
    return l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked ||
           l.kind == LayerKind::Mla;
}

}  // namespace

Result<VllmSpeculative> parse_vllm_speculative(const std::string& text) {
    size_t a = 0;
    while (a < text.size() && std::isspace(static_cast<unsigned char>(text[a]))) ++a;
    if (a == text.size() || text[a] != '{' || text.find('}') == std::string::npos)
        return bad_value(note("vllm_spec_config_bad", {{"value", text.substr(0, 80)}}));
    VllmSpeculative s;
    s.method = dict_value(text, "method");
    s.model = dict_value(text, "model");
    const std::string n = dict_value(text, "num_speculative_tokens");
    if (!n.empty()) {
        if (n.size() > 3 || n.find_first_not_of("0123456789") != std::string::npos)
            return bad_value(note("vllm_spec_tokens_range"));
        s.num_speculative_tokens = std::stoll(n);
    }
    // vLLM's SpeculativeConfig: without a method, an "eagle" in the draft's name means EAGLE (or
    // EAGLE-3), "[ngram]" n-gram lookup, anything else a draft model.
    if (s.method.empty() && !s.model.empty()) {
        const std::string m = lower(s.model);
        s.method = m.find("eagle3") != std::string::npos  ? "eagle3"
                   : m.find("eagle") != std::string::npos ? "eagle"
                   : m == "[ngram]"                       ? "ngram"
                                                          : "draft_model";
    }
    if (s.method.empty()) return bad_value(note("vllm_spec_config_bad", {{"value", text.substr(0, 80)}}));
    return s;
}

int64_t vllm_nextn_layers(const ModelSpec& target) {
    for (const Message& n : target.notes)
        if (n.code == "mtp") {
            const std::string v = n.param("n");
            if (!v.empty() && v.size() < 4 && v.find_first_not_of("0123456789") == std::string::npos)
                return std::stoll(v);
        }
    if (target.gguf && target.gguf->nextn_layers > 0) return target.gguf->nextn_layers;
    return 1;
}

Result<int64_t> vllm_drafter_layers(const VllmSpeculative& s, const ModelSpec& target, const ModelSpec* draft) {
    const std::string m = lower(s.method);
    auto draft_attention = [&]() {
        int64_t n = 0;
        for (const Layer& l : draft->layers) n += is_attention(l);
        return n;
    };
    if (m == "ngram" || m == "ngram_gpu" || m == "suffix" || m == "medusa" || m == "mlp_speculator") return 0;
    if (m == "eagle" || m == "eagle3") return draft ? draft_attention() : 1;
    if (m == "mtp" || (m.size() > 4 && m.compare(m.size() - 4, 4, "_mtp") == 0)) return vllm_nextn_layers(target);
    if (m == "draft_model") {
        if (!draft) return bad_value(note("vllm_spec_needs_draft", {{"model", s.model.empty() ? "?" : s.model}}));
        return draft_attention();
    }
    return bad_value(note("vllm_spec_method_unknown", {{"method", s.method}}));
}

ModelSpec vllm_add_drafter_layers(const ModelSpec& target, int64_t layers) {
    ModelSpec d = target;
    // MiMo-V2's MTP layer (models/mimo_v2_mtp.py MiMoV2MTPLayer) is a sliding-window attention of the swa_* shapes and
    // sliding_window_size; every other drafter is a full (or MLA) layer like the target's.
    const std::string t = lower(target.model_type);
    const LayerKind drafter_kind = t == "mimo_v2_flash" || t == "mimo_v2" ? LayerKind::Sliding : LayerKind::Full;
    for (const Layer& l : target.layers)
        if (l.kind == drafter_kind || l.kind == LayerKind::Mla) {
            const Layer copy = l;
            for (int64_t i = 0; i < layers; ++i) d.layers.push_back(copy);
            d.drafter_layers += layers;
            break;
        }
    return d;
}

Result<ModelSpec> vllm_with_drafter(const ModelSpec& target, const VllmSpeculative& s, const ModelSpec* draft) {
    auto n = vllm_drafter_layers(s, target, draft);
    if (!n) return n.error();
    const std::string method = lower(s.method);
    const bool own_layers = draft && (method == "eagle" || method == "eagle3" || method == "draft_model");
    ModelSpec d = own_layers ? target : vllm_add_drafter_layers(target, *n);
    if (own_layers)
        for (const Layer& l : draft->layers)
            if (is_attention(l)) {
                d.layers.push_back(l);
                ++d.drafter_layers;
            }
    d.notes.push_back(note("vllm_drafter_layers", {{"method", s.method}, {"layers", std::to_string(*n)}}));
    return d;
}

const VllmDroppedArch* vllm_dropped_architecture(const ModelSpec& m, const VllmRelease& rel) {
    for (const VllmDroppedArch* d : rel.dropped)
        if (m.architecture == d->arch) return d;
    return nullptr;
}

std::string vllm_dropped_architecture_error(const VllmDroppedArch& d) {
    return std::string("Model architecture ") + d.arch + " was supported in vLLM until v" + d.until +
           ", and is not supported anymore. Please use an older version of vLLM if you want to use this model "
           "architecture.";
}

}  // namespace kvb
