// GPU catalog: memory capacity, memory bandwidth and dense bf16 throughput of the
// accelerators people size LLM serving for. Values come from vendor spec sheets
// (see gpus.cpp for the conventions); budget.cpp and the simulator read them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvb {

struct Gpu {
    std::string id;      // short lowercase slug: "rtx-4090", "h100-sxm", "m4-max-128gb"
    std::string name;    // marketing name
    std::string vendor;  // "nvidia", "amd", "apple"
    // Marketed capacity in bytes. DRAM capacity is binary, so "24 GB" on a spec sheet is
    // 24 GiB here (24 * 2^30); unified-memory machines give their whole RAM.
    int64_t memory_bytes = 0;
    double bandwidth_bytes_per_s = 0;  // peak DRAM bandwidth, decimal (1 TB/s = 1e12 B/s)
    double bf16_flops = 0;             // dense tensor-core bf16 (fp16 where bf16 is missing), no sparsity
    bool unified_memory = false;       // CPU and GPU share the memory (Apple silicon, GB10)
    // CUDA compute capability x 10 (80 A100, 89 RTX 4090, 90 H100, 100 B200, 120 RTX 5090), from
    // NVIDIA's CUDA GPU table; 0 for AMD and Apple. vLLM picks attention backends by it.
    int compute_capability = 0;
    // What torch.cuda.mem_get_info() typically reports as total on this card: less than the
    // marketed size (ECC, driver reservations). 0 when no public measurement was found.
    // vLLM multiplies THIS by --gpu-memory-utilization.
    int64_t reported_bytes = 0;
    // Fraction of memory_bytes the GPU may wire by default: on a Mac, apple_wired_bytes()'s
    // rule (2/3 or 3/4 of RAM). 1.0 for discrete GPUs.
    double gpu_usable_fraction = 1.0;
    std::string source;  // spec-sheet kind and notes
    std::vector<std::string> aliases;

    // Capacity an engine sees as "total": reported_bytes when known, else the marketed
    // capacity times gpu_usable_fraction.
    int64_t total_bytes() const;
};

const std::vector<Gpu>& gpu_catalog();

// What Metal lets the GPU wire on an Apple-silicon Mac with `ram_bytes` of unified memory
// and the default iogpu.wired_limit_mb (0): recommendedMaxWorkingSetSize, 2/3 of RAM up to
// 32 GiB and 3/4 above, as llama.cpp's ggml_metal_init prints it (16 GiB -> 10922.67 MiB,
// 32 GiB -> 21845.34 MiB, 36 GiB -> 27 GiB, 64 GiB -> 48 GiB). A nonzero `wired_limit_mb`
// (sudo sysctl iogpu.wired_limit_mb=N, in MiB) replaces the default.
int64_t apple_wired_bytes(int64_t ram_bytes, int64_t wired_limit_mb = 0);
// Case-insensitive lookup by id or alias ("4090", "RTX 4090", "h100", "a100" ...); nullptr if unknown.
const Gpu* find_gpu(const std::string& id);

}  // namespace kvb
