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
    // What torch.cuda.mem_get_info() typically reports as total on this card: less than the
    // marketed size (ECC, driver reservations). 0 when no public measurement was found.
    // vLLM multiplies THIS by --gpu-memory-utilization.
    int64_t reported_bytes = 0;
    // Fraction of memory_bytes the GPU may wire (macOS recommendedMaxWorkingSetSize is
    // about 75% of RAM on machines above 36 GB). 1.0 for discrete GPUs.
    double gpu_usable_fraction = 1.0;
    std::string source;  // spec-sheet kind and notes
    std::vector<std::string> aliases;

    // Capacity an engine sees as "total": reported_bytes when known, else the marketed
    // capacity times gpu_usable_fraction.
    int64_t total_bytes() const;
};

const std::vector<Gpu>& gpu_catalog();
// Case-insensitive lookup by id or alias ("4090", "RTX 4090", "h100", "a100" ...); nullptr if unknown.
const Gpu* find_gpu(const std::string& id);

}  // namespace kvb
