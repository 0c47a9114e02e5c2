// Why vLLM stops at start-up whatever the memory, in the order it meets each check: compressed-tensors fp8 blocks the
// release cannot read and the quantization method against the GPU (as the config is read), the model dtype against the
// GPU (Worker.init_device), kernels its wheels lack (the first launch), a compressed-tensors scheme the release has no
// class for or the GPU is below (each linear layer as it is built), a KV cache dtype no attention backend takes (the
// attention layers); block-fp8 weights off the grid come last (model/weights.cpp, while the weights are created).
// vllm.h says which vLLM files each rule reads.
#include <algorithm>
#include <string>

#include "base/text.h"
#include "engines/vllm.h"
#include "model/quant.h"
#include "model/weights.h"

namespace kvb {

namespace {

std::string capability_text(int cc) {
    return std::to_string(cc / 10) + "." + std::to_string(cc % 10);
}

}  // namespace

std::optional<VllmStartupRefusal> vllm_dtype_refusal(const std::string& dtype, int cc, const std::string& gpu,
                                                     const VllmRelease& rel) {
    if (dtype != "bfloat16" || cc <= 0 || cc >= 80) return std::nullopt;
    // vLLM's words name the GPU as CUDA does ("Tesla T4"); ours names it as the catalog does.
    return VllmStartupRefusal{note("vllm_bf16_gpu", {{"gpu", gpu}, {"capability", capability_text(cc)}}),
                              "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your " +
                                  gpu + " GPU has compute capability " + capability_text(cc) +
                                  ". You can use float16 instead by explicitly setting the" +
                                  (rel.spaced_sentences ? " " : "") +
                                  "`dtype` flag in CLI, for example: --dtype=half."};
}

std::optional<VllmStartupRefusal> vllm_quant_gpu_refusal(const ModelSpec& m, const WeightFormat& format, int cc,
                                                         const std::string& gpu, const VllmRelease& rel) {
    if (cc <= 0) return std::nullopt;
    std::string name;
    int min = 0;
    const std::string method = format.plan ? lower(m.quant.method) : "";
    if (method == "fp8" || (!format.plan && format.kind == WeightKind::Fp8)) {
        // A checkpoint's, or --quantization fp8 on a float one (budget_vllm.cpp's command).
        name = "fp8";
        min = rel.marlin_sm75 ? 75 : 80;
    } else if (method == "fbgemm_fp8") {
        name = "fbgemm_fp8";
        min = 80;
    } else if (method == "mxfp4") {
        name = rel.gpt_oss_mxfp4_name && m.model_type == "gpt_oss" ? "gpt_oss_mxfp4" : "mxfp4";
        min = 80;
    } else if (method == "awq" || method == "awq_marlin") {
        // Where AWQ-Marlin runs (8.0, 7.5 from 0.14) it is the method, and passes.
        name = rel.auto_awq_name ? "auto_awq" : "awq";
        min = 75;
    } else if (method.compare(0, 8, "modelopt") == 0 && format.plan->algo == "FP8") {
        name = "modelopt";
        min = rel.modelopt_fp8_sm80 ? 80 : 89;
    } else if (method.compare(0, 8, "modelopt") == 0 && format.plan->algo == "NVFP4" && rel.modelopt_fp4_sm80) {
        name = "modelopt_fp4";
        min = rel.marlin_sm75 ? 75 : 80;
    }
    if (name.empty() || cc >= min) return std::nullopt;
    const std::string words = "The quantization method " + name +
                              " is not supported for the current GPU. Minimum capability: " + std::to_string(min) +
                              ". Current capability: " + std::to_string(cc) + ".";
    return VllmStartupRefusal{note("vllm_quant_gpu", {{"method", name},
                                                      {"needed", capability_text(min)},
                                                      {"gpu", gpu},
                                                      {"capability", capability_text(cc)},
                                                      {"min", std::to_string(min)},
                                                      {"current", std::to_string(cc)}}),
                              words};
}

namespace {

// What vLLM runs a compressed-tensors scheme as on a GPU of compute capability `cc`, and from which capability.
struct CtRun {
    std::string cls;                   // the scheme class, less "CompressedTensors"
    int min = 0;                       // 0: nothing claimed (the release reads the form otherwise, or the GPU passes)
    const char* lowered_in = nullptr;  // the release that took this class's minimum below 8.0
    bool no_blocks = false;            // W8A16Fp8 given fp8 blocks before 0.16: its create_weights raises
};

CtRun ct_run(const QuantScheme& s, int cc, const VllmRelease& rel) {
    const std::string& k = s.ct_scheme;
    if (k == "W8A8Fp8" || k == "W8A16Fp8") {
        if (s.block_rows > 0 && !rel.ct_fp8_block) return {};
        // W8A8 from 8.9 on; below, vLLM takes W8A16 for the same weights.
        if (k == "W8A8Fp8" && cc >= 89) return {};
        return {"W8A16Fp8", rel.ct_fp8_nvfp4_sm75 ? 75 : 80, "0.16.0", s.block_rows > 0 && !rel.ct_w8a16_block};
    }
    if (k == "W4A4Fp4" || k == "W4A16Fp4") {
        if (!rel.ct_nvfp4_as_w4a16 || (k == "W4A4Fp4" && cc >= 100)) return {};
        const bool w4a4 = k == "W4A4Fp4" && rel.ct_fp8_nvfp4_sm75;
        return {w4a4 ? "W4A4Fp4" : "W4A16Fp4", rel.ct_fp8_nvfp4_sm75 ? 75 : 80, "0.16.0"};
    }
    if (k == "W4A16Mxfp4") return rel.ct_mxfp4 ? CtRun{k, 80} : CtRun{};
    if (k == "W8A8Int8") return {k, 75};
    if (k == "WNA16") {
        if (s.zero_bits > 0 && !rel.ct_wna16_zero_points) return {};
        return {k, rel.ct_wna16_sm75 ? 75 : 80, "0.12.0"};
    }
    return {};
}

// How the page and the CLI name the weights of a scheme.
std::string ct_weights(const QuantScheme& s) {
    if (s.ct_scheme == "W8A8Fp8" || s.ct_scheme == "W8A16Fp8") return "fp8";
    if (s.ct_scheme == "W4A4Fp4" || s.ct_scheme == "W4A16Fp4") return "NVFP4";
    if (s.ct_scheme == "W4A16Mxfp4") return "MXFP4";
    if (s.ct_scheme == "W8A8Int8") return "int8 (W8A8)";
    return "int" + std::to_string(s.bits) + " (W" + std::to_string(s.bits) + "A16)";
}

}  // namespace

std::optional<VllmStartupRefusal> vllm_ct_scheme_refusal(const ModelSpec& m, const WeightFormat& format, int cc,
                                                         const std::string& gpu, const VllmRelease& rel) {
    if (cc <= 0 || !format.plan || format.plan->match != QuantMatch::CompressedTensors) return std::nullopt;
    // Per layer, vLLM checks the scheme's minimum, then creates its weights.
    auto refused = [&](const QuantScheme& s) {
        const CtRun r = ct_run(s, cc, rel);
        return r.min > 0 && (cc < r.min || r.no_blocks);
    };
    auto first = first_planned_linear(m, format, refused);
    if (!first) return std::nullopt;
    const CtRun run = ct_run(*first->scheme, cc, rel);
    if (cc >= run.min) {
        // Its ValueError prints the strategy as Python formats the enum, which changes with the Python version: no
        // words of vLLM's are claimed.
        return VllmStartupRefusal{note("vllm_ct_fp8_block_w8a16",
                                       {{"layer", first->layer}, {"gpu", gpu}, {"capability", capability_text(cc)}}),
                                  ""};
    }
    // A release that took the minimum below 8.0 (where this one is above the GPU) runs it there.
    const bool newer = run.lowered_in && cc >= 75 && run.min > 75;
    const std::string words =
        "('Quantization scheme is not supported for ', 'the current GPU. Min capability: " + std::to_string(run.min) +
        ". ', 'Current capability: " + std::to_string(cc) + ".')";
    MessageParams p = {{"weights", ct_weights(*first->scheme)},
                       {"layer", first->layer},
                       {"scheme", "CompressedTensors" + run.cls},
                       {"needed", capability_text(run.min)},
                       {"gpu", gpu},
                       {"capability", capability_text(cc)},
                       {"min", std::to_string(run.min)},
                       {"current", std::to_string(cc)}};
    if (newer) p.push_back({"release", run.lowered_in});
    return VllmStartupRefusal{note(newer ? "vllm_ct_scheme_gpu_newer" : "vllm_ct_scheme_gpu", p), words};
}

bool vllm_ct_blocks_unread(const WeightFormat& format, const VllmRelease& rel) {
    return !rel.ct_fp8_block && format.plan && format.plan->match == QuantMatch::CompressedTensors;
}

std::optional<VllmCtBlockRefusal> vllm_ct_block_refusal(const ModelSpec& m, const WeightFormat& format,
                                                        const VllmRelease& rel) {
    if (!vllm_ct_blocks_unread(format, rel)) return std::nullopt;
    auto is_block = [](const QuantScheme& s) { return s.block_rows > 0 && s.block_cols > 0; };
    if (!rel.ct_block_list) {
        // Every config group is validated as the config is read, whichever layers it targets.
        const auto& schemes = format.plan->schemes;
        auto b = std::find_if(schemes.begin(), schemes.end(), is_block);
        if (b == schemes.end()) return std::nullopt;
        return VllmCtBlockRefusal{{note("vllm_ct_fp8_block_unread", {{"rows", std::to_string(b->block_rows)},
                                                                     {"cols", std::to_string(b->block_cols)}}),
                                   ""},
                                  true};
    }
    auto first = first_planned_linear(m, format, is_block);
    if (!first) return std::nullopt;
    return VllmCtBlockRefusal{{note("vllm_ct_fp8_block_no_scheme", {{"layer", first->layer}}),
                               "No compressed-tensors compatible scheme was found."},
                              false};
}

std::optional<VllmStartupRefusal> vllm_gpu_refusal(int cc, const std::string& gpu, const VllmRelease& rel) {
    if (cc <= 0 || cc >= 75 || !rel.no_sm70) return std::nullopt;
    return VllmStartupRefusal{note("vllm_gpu_not_built", {{"gpu", gpu}, {"capability", capability_text(cc)}}),
                              "CUDA error: no kernel image is available for execution on the device"};
}

std::optional<VllmStartupRefusal> vllm_fp8_kv_refusal(const ModelSpec& m, const std::string& kv_dtype, int cc,
                                                      const std::string& gpu, const VllmRelease& rel) {
    if (cc <= 0 || cc >= 89 || (kv_dtype != "fp8" && kv_dtype != "fp8_e4m3" && kv_dtype != "fp8_e5m2"))
        return std::nullopt;
    const bool mla = m.has(LayerKind::Mla);
    if (mla && m.sparse_mla) return std::nullopt;
    std::string backend;
    if (mla) {
        if (!rel.fp8_kv_triton_mla_sm89) return std::nullopt;
        backend = "Triton MLA";
    } else {
        if (!rel.fp8_kv_triton_sm89) return std::nullopt;
        bool flashinfer = cc >= (rel.flashinfer_sm80 ? 80 : 75) && m.model_type != "gpt_oss";
        for (const Layer& l : m.layers) {
            if (!head_attention(l.kind)) continue;
            const int64_t h = l.k_head_dim;
            if (h != 64 && h != 128 && h != 256 && h != 512) flashinfer = false;
        }
        if (flashinfer) return std::nullopt;
        backend = "Triton attention";
    }
    // The dtype the refusal tells the user to take: float16 below 8.0, which has no bfloat16. The words are vLLM's.
    Message why = note("vllm_fp8_kv_triton", {{"backend", backend},
                                              {"gpu", gpu},
                                              {"capability", capability_text(cc)},
                                              {"dtype", cc < 80 ? "float16" : "bfloat16"}});
    std::string prints = render_english(why);
    return VllmStartupRefusal{std::move(why), std::move(prints)};
}

bool is_nvfp4_kv(const std::string& kv_dtype) {
    return kv_dtype == "nvfp4" || kv_dtype == "nvfp4_4over6";
}

// vLLM's own words here are "No valid attention backend found for cuda" with a repr of its selector config that
// changes by release: the refusals carry no printed words.
std::optional<VllmStartupRefusal> vllm_nvfp4_kv_refusal(const ModelSpec& m, const std::string& kv_dtype, bool nvidia,
                                                        int cc, const std::string& gpu, const VllmRelease& rel) {
    if (!is_nvfp4_kv(kv_dtype)) return std::nullopt;
    if (!rel.nvfp4_kv_backend)
        return VllmStartupRefusal{note("vllm_nvfp4_kv_no_backend", {{"dtype", kv_dtype}, {"version", rel.version}}),
                                  ""};
    const std::string capability = nvidia ? capability_text(cc) : "";
    if (!nvidia || cc / 10 != 10)
        return VllmStartupRefusal{note(nvidia ? "vllm_nvfp4_kv_gpu" : "vllm_nvfp4_kv_gpu_amd",
                                       {{"dtype", kv_dtype}, {"gpu", gpu}, {"capability", capability}}),
                                  ""};
    // FlashInferBackend.get_supported_head_sizes, checked against each attention layer's head size.
    for (const Layer& l : m.layers) {
        if (!head_attention(l.kind)) continue;
        const int64_t h = l.k_head_dim;
        if (h != 64 && h != 128 && h != 256 && (h != 512 || !rel.flashinfer_head_512))
            return VllmStartupRefusal{note("vllm_nvfp4_kv_head_size",
                                           {{"dtype", kv_dtype},
                                            {"head", std::to_string(h)},
                                            {"sizes", rel.flashinfer_head_512 ? "64, 128, 256, 512" : "64, 128, 256"}}),
                                      ""};
    }
    return std::nullopt;
}

}  // namespace kvb
