// vLLM's MLA attention backend on CUDA and the KV block size it brings (vllm_mla_backend).
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

}  // namespace kvb
