// vLLM's attention backend choice on CUDA: the MLA backend and the KV block size it brings (vllm_mla_backend),
// and whether any backend takes an fp8 or NVFP4 KV cache on the GPU (vllm_fp8_kv_refusal, vllm_nvfp4_kv_refusal;
// vllm.h says which files).
// From vllm/platforms/cuda.py (_get_backend_priorities, check_and_update_config before 0.18,
// update_block_size_for_backend after) and each backend's get_supported_kernel_block_sizes and
// supports_compute_capability in vllm/v1/attention/backends/mla/.
#include <string>

#include "engines/vllm.h"

namespace kvb {

VllmMlaBackend vllm_mla_backend(int compute_capability, bool fp8_kv_cache, int64_t qk_nope_head_dim, bool forced) {
    const int major = compute_capability / 10;
    if (forced) {
        // The platform forced a size for the backend it meant to use and left the rest at 16.
        if (major == 10)
            return qk_nope_head_dim == 128 ? VllmMlaBackend{"FLASHINFER_MLA", 64} : VllmMlaBackend{"CUTLASS_MLA", 128};
        if (major == 9) return {"FLASHMLA", 64};
        return {"TRITON_MLA", 16};
    }
    // Preferred size: 16 when the backend's kernels take 16, else its smallest supported size.
    if (major == 10) {
        const bool fi = qk_nope_head_dim == 64 || qk_nope_head_dim == 128 || qk_nope_head_dim == 192;
        return fi ? VllmMlaBackend{"FLASHINFER_MLA", 32} : VllmMlaBackend{"CUTLASS_MLA", 128};
    }
    // FlashAttention MLA (FA3, Hopper only) takes no fp8 cache; FlashMLA, next in line, does.
    if (major == 9) return fp8_kv_cache ? VllmMlaBackend{"FLASHMLA", 64} : VllmMlaBackend{"FLASH_ATTN_MLA", 16};
    return {"TRITON_MLA", 16};
}

std::optional<VllmStartupRefusal> vllm_gpu_refusal(int cc, const std::string& gpu, const VllmRelease& rel) {
    if (cc <= 0 || cc >= 75 || !rel.no_sm70) return std::nullopt;
    return VllmStartupRefusal{
        note("vllm_gpu_not_built",
             {{"gpu", gpu}, {"capability", std::to_string(cc / 10) + "." + std::to_string(cc % 10)}}),
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
                                              {"capability", std::to_string(cc / 10) + "." + std::to_string(cc % 10)},
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
    const std::string capability = nvidia ? std::to_string(cc / 10) + "." + std::to_string(cc % 10) : "";
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
