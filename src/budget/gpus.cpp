// Conventions for every entry:
//  - memory_bytes: the vendor's marketed capacity read as binary units. GDDR and HBM
//    chips come in power-of-two densities, so a "24 GB" RTX 4090 carries 24 GiB of DRAM
//    (CUDA then reports a little less; see reported_bytes). Apple machines: installed RAM.
//  - bandwidth: vendor spec sheet peak, decimal bytes per second.
//  - bf16_flops: vendor spec sheet dense tensor throughput (the "with sparsity" figures
//    are halved); GeForce cards are quoted with FP32 accumulate. Cards without bf16
//    (T4, V100) carry their fp16 figure. Apple: GPU FP32 TFLOPS (the GPU runs fp16 at
//    the same rate), from Apple's published numbers.
//  - reported_bytes: the "total capacity of X GiB" that PyTorch prints in its out-of-memory
//    message on that card (torch.cuda.mem_get_info total), as quoted in public GitHub issues;
//    it moves by a few MiB between drivers, so it is rounded to the MiB and only filled where
//    a quote was found.
#include "budget/gpus.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>

namespace kvb {

namespace {

constexpr int64_t kGiB = int64_t(1) << 30;
constexpr double TB = 1e12;
constexpr double TF = 1e12;

// "23.64 GiB" as PyTorch prints it, to bytes rounded to the MiB.
int64_t torch_gib(double gib) {
    return int64_t(std::llround(gib * 1024.0)) * (int64_t(1) << 20);
}

// Plain pointers and an initializer_list of them: each of the ~50 rows below is then a
// handful of constants, not std::string and std::vector temporaries built at the call
// (that was ~10 KB of the page's calculator module).
Gpu gpu(const char* id, const char* name, const char* vendor, int64_t gib, double bw, double flops,
        const std::string& source, std::initializer_list<const char*> aliases = {}, int64_t reported = 0) {
    Gpu g;
    g.id = id;
    g.name = name;
    g.vendor = vendor;
    g.memory_bytes = gib * kGiB;
    g.bandwidth_bytes_per_s = bw;
    g.bf16_flops = flops;
    g.source = source;
    g.aliases.assign(aliases.begin(), aliases.end());
    g.reported_bytes = reported;
    return g;
}

Gpu apple(const char* id, const char* name, int64_t gib, double bw, double flops,
          std::initializer_list<const char*> aliases, const char* note = "") {
    Gpu g = gpu(id, name, "apple", gib, bw, flops,
                std::string("Apple tech specs (unified memory bandwidth, GPU FP32 TFLOPS") + note +
                    "); Metal may wire 2/3 of RAM up to 32 GB, 3/4 above (recommendedMaxWorkingSetSize; raise with "
                    "sysctl iogpu.wired_limit_mb)",
                aliases);
    g.unified_memory = true;
    g.gpu_usable_fraction = double(apple_wired_bytes(g.memory_bytes)) / double(g.memory_bytes);
    return g;
}

std::vector<Gpu> build() {
    const std::string nv_geforce =
        "NVIDIA GeForce spec page / Ada-Blackwell-Ampere whitepaper (dense FP16/BF16 tensor, FP32 accumulate)";
    const std::string nv_dc = "NVIDIA datasheet (dense BF16 tensor, sparsity halved)";
    const std::string nv_ws = "NVIDIA workstation datasheet";
    const std::string amd_dc = "AMD Instinct datasheet (peak BF16 dense)";
    const std::string amd_rx = "AMD Radeon spec page (peak FP16/BF16 WMMA)";
    std::vector<Gpu> v;
    // Consumer NVIDIA
    v.push_back(gpu("rtx-3060-12gb", "NVIDIA GeForce RTX 3060 12GB", "nvidia", 12, 0.360 * TB, 25.5 * TF, nv_geforce,
                    {"rtx-3060", "3060"}));
    v.push_back(
        gpu("rtx-3080", "NVIDIA GeForce RTX 3080 10GB", "nvidia", 10, 0.760 * TB, 59.5 * TF, nv_geforce, {"3080"}));
    // reported: vLLM's "total_gpu_memory=23.58GiB" (vllm-project/vllm#10517, PR #14447)
    v.push_back(gpu("rtx-3090", "NVIDIA GeForce RTX 3090", "nvidia", 24, 0.936 * TB, 71.0 * TF, nv_geforce, {"3090"},
                    torch_gib(23.58)));
    v.push_back(gpu("rtx-3090-ti", "NVIDIA GeForce RTX 3090 Ti", "nvidia", 24, 1.008 * TB, 80.0 * TF, nv_geforce,
                    {"3090-ti", "3090ti"}));
    v.push_back(gpu("rtx-4060-ti-16gb", "NVIDIA GeForce RTX 4060 Ti 16GB", "nvidia", 16, 0.288 * TB, 44.1 * TF,
                    nv_geforce, {"rtx-4060-ti", "4060-ti"}));
    v.push_back(gpu("rtx-4070-ti-super", "NVIDIA GeForce RTX 4070 Ti SUPER", "nvidia", 16, 0.672 * TB, 88.2 * TF,
                    nv_geforce, {"4070-ti-super"}));
    v.push_back(gpu("rtx-4080", "NVIDIA GeForce RTX 4080", "nvidia", 16, 0.7168 * TB, 97.5 * TF, nv_geforce,
                    {"4080", "rtx-4080-super"}));
    // reported: "GPU 0 has a total capacity of 23.64 GiB" (3DTopia/Phidias-Diffusion#8, ali-vilab/VGen#104)
    v.push_back(gpu("rtx-4090", "NVIDIA GeForce RTX 4090", "nvidia", 24, 1.008 * TB, 165.2 * TF, nv_geforce, {"4090"},
                    torch_gib(23.64)));
    v.push_back(gpu("rtx-5080", "NVIDIA GeForce RTX 5080", "nvidia", 16, 0.960 * TB, 112.6 * TF, nv_geforce, {"5080"}));
    // reported: "total capacity of 31.37 GiB" (Wan-Video/Wan2.1#465)
    v.push_back(gpu("rtx-5090", "NVIDIA GeForce RTX 5090", "nvidia", 32, 1.792 * TB, 209.5 * TF, nv_geforce, {"5090"},
                    torch_gib(31.37)));
    // Workstation NVIDIA
    v.push_back(gpu("rtx-a6000", "NVIDIA RTX A6000", "nvidia", 48, 0.768 * TB, 154.8 * TF, nv_ws, {"a6000"}));
    v.push_back(gpu("rtx-6000-ada", "NVIDIA RTX 6000 Ada Generation", "nvidia", 48, 0.960 * TB, 364.2 * TF, nv_ws,
                    {"6000-ada"}));
    v.push_back(gpu("rtx-pro-6000", "NVIDIA RTX PRO 6000 Blackwell", "nvidia", 96, 1.792 * TB, 503.8 * TF, nv_ws,
                    {"pro-6000", "rtx-pro-6000-blackwell"}));
    // Datacenter NVIDIA
    // reported: "total capacity of 14.75 GiB" (hpcaitech/Open-Sora#697, Colab T4); T4 has no bf16: fp16 figure.
    v.push_back(gpu("t4", "NVIDIA T4", "nvidia", 16, 0.320 * TB, 65.0 * TF, nv_dc + "; no bf16, fp16 figure",
                    {"tesla-t4"}, torch_gib(14.75)));
    v.push_back(gpu("v100-32gb", "NVIDIA V100 SXM2 32GB", "nvidia", 32, 0.900 * TB, 125.0 * TF,
                    nv_dc + "; no bf16, fp16 figure", {"v100"}));
    v.push_back(gpu("a10", "NVIDIA A10", "nvidia", 24, 0.600 * TB, 125.0 * TF, nv_dc));
    v.push_back(gpu("a10g", "NVIDIA A10G (AWS g5)", "nvidia", 24, 0.600 * TB, 70.0 * TF,
                    "AWS g5 instance page (A10G: 24 GB, 600 GB/s); tensor figure from AWS"));
    v.push_back(gpu("l4", "NVIDIA L4", "nvidia", 24, 0.300 * TB, 121.0 * TF, nv_dc));
    // reported: L40 "total capacity of 44.40 GiB" (QwenLM/Qwen3-VL#2097)
    v.push_back(gpu("l40", "NVIDIA L40", "nvidia", 48, 0.864 * TB, 181.05 * TF, nv_dc, {}, torch_gib(44.40)));
    v.push_back(gpu("l40s", "NVIDIA L40S", "nvidia", 48, 0.864 * TB, 362.05 * TF, nv_dc));
    // reported: "total capacity of 39.50 GiB" (TianheWu/CoSeR#10)
    v.push_back(gpu("a100-40gb", "NVIDIA A100 40GB (SXM4)", "nvidia", 40, 1.555 * TB, 312.0 * TF, nv_dc, {"a100-40g"},
                    torch_gib(39.50)));
    // reported: "total capacity of 79.25 GiB" (HiDream-ai/VAREdit#6, levihsu/OOTDiffusion#235)
    v.push_back(gpu("a100-80gb", "NVIDIA A100 80GB SXM4", "nvidia", 80, 2.039 * TB, 312.0 * TF, nv_dc,
                    {"a100", "a100-80g", "a100-sxm"}, torch_gib(79.25)));
    v.push_back(
        gpu("a100-80gb-pcie", "NVIDIA A100 80GB PCIe", "nvidia", 80, 1.935 * TB, 312.0 * TF, nv_dc, {"a100-pcie"}));
    // reported: vLLM's "total_gpu_memory 79.22GiB" on H100 80GB (vllm-project/vllm PR #10511, PR #12126)
    v.push_back(gpu("h100-sxm", "NVIDIA H100 SXM5 80GB", "nvidia", 80, 3.35 * TB, 989.4 * TF, nv_dc,
                    {"h100", "h100-80gb", "h100-sxm5"}, torch_gib(79.22)));
    v.push_back(gpu("h100-pcie", "NVIDIA H100 PCIe 80GB", "nvidia", 80, 2.0 * TB, 756.0 * TF, nv_dc));
    v.push_back(gpu("h100-nvl", "NVIDIA H100 NVL 94GB", "nvidia", 94, 3.9 * TB, 835.0 * TF, nv_dc));
    v.push_back(
        gpu("h200", "NVIDIA H200 SXM 141GB", "nvidia", 141, 4.8 * TB, 989.4 * TF, nv_dc, {"h200-sxm", "h200-141gb"}));
    // The export models sold in China: H800 and A800 are the H100 SXM5 and A100 80GB SXM4 silicon with less NVLink
    // bandwidth and (H800) FP64, the memory, its bandwidth and the bf16 tensor throughput unchanged; H20 is a Hopper
    // with 96 GB HBM3 at 4.0 TB/s and 148 dense FP16/BF16 TFLOPS. Figures from spec summaries (aiwiki.ai's H800 and
    // A800 pages, willitrunai.com's H20 page), not NVIDIA's datasheets. No PyTorch total was found quoted for any.
    v.push_back(gpu("h800", "NVIDIA H800 SXM5 80GB", "nvidia", 80, 3.35 * TB, 989.4 * TF, nv_dc, {"h800-sxm"}));
    v.push_back(gpu("a800-80gb", "NVIDIA A800 80GB SXM4", "nvidia", 80, 2.039 * TB, 312.0 * TF, nv_dc, {"a800"}));
    v.push_back(gpu("h20", "NVIDIA H20 96GB", "nvidia", 96, 4.0 * TB, 148.0 * TF, nv_dc, {"h20-96gb"}));
    v.push_back(gpu("b200", "NVIDIA B200 180GB", "nvidia", 180, 8.0 * TB, 2250.0 * TF,
                    nv_dc + " (HGX B200 per-GPU figures)", {"b200-180gb"}));
    // AMD
    v.push_back(gpu("mi210", "AMD Instinct MI210", "amd", 64, 1.6384 * TB, 181.0 * TF, amd_dc));
    // One MI250 module is two GCDs that ROCm (and vLLM) expose as two 64 GB devices: the entry is one GCD.
    v.push_back(gpu("mi250", "AMD Instinct MI250 (one of its two GCDs)", "amd", 64, 1.6384 * TB, 181.0 * TF,
                    amd_dc + "; per-GCD half of the 128 GB / 3.2768 TB/s / 362.1 TFLOPS module", {"mi250x"}));
    v.push_back(gpu("mi300x", "AMD Instinct MI300X", "amd", 192, 5.3 * TB, 1307.4 * TF, amd_dc));
    v.push_back(gpu("mi325x", "AMD Instinct MI325X", "amd", 256, 6.0 * TB, 1307.4 * TF, amd_dc));
    v.push_back(gpu("rx-7900-xtx", "AMD Radeon RX 7900 XTX", "amd", 24, 0.960 * TB, 122.8 * TF, amd_rx,
                    {"7900-xtx", "7900xtx"}));
    v.push_back(gpu("rx-7900-xt", "AMD Radeon RX 7900 XT", "amd", 20, 0.800 * TB, 103.0 * TF, amd_rx, {"7900-xt"}));
    v.push_back(gpu("w7900", "AMD Radeon PRO W7900", "amd", 48, 0.864 * TB, 122.6 * TF, amd_rx, {"radeon-pro-w7900"}));
    // Apple silicon (unified memory): one machine for each RAM size people buy (16 to 512 GB).
    // Apple's "16GB" is 16 GiB of DRAM (Metal's 2/3 limit on it is 10922.67 MiB). FP32 TFLOPS of
    // the binned GPUs Apple does not quote are scaled from the full chip by core count.
    const char* per_core = ", scaled by GPU cores";
    v.push_back(
        apple("m4-16gb", "Apple M4 16GB (10-core GPU)", 16, 0.120 * TB, 4.6 * TF, {"m4", "mac-16gb"}, per_core));
    v.push_back(apple("m4-pro-24gb", "Apple M4 Pro 24GB (20-core GPU)", 24, 0.273 * TB, 9.2 * TF,
                      {"mac-24gb", "m4-pro-24"}, per_core));
    v.push_back(
        apple("m4-32gb", "Apple M4 32GB (10-core GPU)", 32, 0.120 * TB, 4.6 * TF, {"mac-32gb", "m4-32"}, per_core));
    v.push_back(apple("m4-max-36gb", "Apple M4 Max 36GB (32-core GPU)", 36, 0.410 * TB, 14.7 * TF,
                      {"mac-36gb", "m4-max-36"}, per_core));
    v.push_back(apple("m4-pro-48gb", "Apple M4 Pro 48GB (20-core GPU)", 48, 0.273 * TB, 9.2 * TF,
                      {"mac-48gb", "m4-pro-48"}, per_core));
    v.push_back(apple("m1-max-64gb", "Apple M1 Max 64GB", 64, 0.400 * TB, 10.4 * TF, {"m1-max"}));
    v.push_back(
        apple("m4-pro-64gb", "Apple M4 Pro 64GB (20-core GPU)", 64, 0.273 * TB, 9.2 * TF, {"m4-pro", "mac-64gb"}));
    v.push_back(apple("m2-max-96gb", "Apple M2 Max 96GB", 96, 0.400 * TB, 13.6 * TF, {"m2-max", "mac-96gb"}));
    v.push_back(apple("m3-max-128gb", "Apple M3 Max 128GB (40-core GPU)", 128, 0.400 * TB, 16.4 * TF, {"m3-max"}));
    v.push_back(
        apple("m4-max-128gb", "Apple M4 Max 128GB (40-core GPU)", 128, 0.546 * TB, 18.4 * TF, {"m4-max", "mac-128gb"}));
    v.push_back(apple("m2-ultra-192gb", "Apple M2 Ultra 192GB", 192, 0.800 * TB, 27.2 * TF, {"m2-ultra", "mac-192gb"}));
    v.push_back(apple("m3-ultra-512gb", "Apple M3 Ultra 512GB", 512, 0.819 * TB, 28.4 * TF, {"m3-ultra", "mac-512gb"}));
    // NVIDIA GB10 (DGX Spark): unified LPDDR5x, no macOS limit.
    {
        Gpu g = gpu(
            "dgx-spark", "NVIDIA DGX Spark (GB10) 128GB", "nvidia", 128, 0.273 * TB, 62.5 * TF,
            "NVIDIA DGX Spark datasheet (unified LPDDR5x); bf16 dense estimated as 1/8 of the quoted sparse FP4 PFLOP",
            {"gb10", "spark"});
        g.unified_memory = true;
        v.push_back(g);
    }
    // Compute capability per NVIDIA entry (developer.nvidia.com/cuda-gpus).
    const std::pair<const char*, int> cc[] = {{"rtx-3060-12gb", 86},
                                              {"rtx-3080", 86},
                                              {"rtx-3090", 86},
                                              {"rtx-3090-ti", 86},
                                              {"rtx-4060-ti-16gb", 89},
                                              {"rtx-4070-ti-super", 89},
                                              {"rtx-4080", 89},
                                              {"rtx-4090", 89},
                                              {"rtx-5080", 120},
                                              {"rtx-5090", 120},
                                              {"rtx-a6000", 86},
                                              {"rtx-6000-ada", 89},
                                              {"rtx-pro-6000", 120},
                                              {"t4", 75},
                                              {"v100-32gb", 70},
                                              {"a10", 86},
                                              {"a10g", 86},
                                              {"l4", 89},
                                              {"l40", 89},
                                              {"l40s", 89},
                                              {"a100-40gb", 80},
                                              {"a100-80gb", 80},
                                              {"a100-80gb-pcie", 80},
                                              {"h100-sxm", 90},
                                              {"h100-pcie", 90},
                                              {"h100-nvl", 90},
                                              {"h200", 90},
                                              {"h800", 90},
                                              {"a800-80gb", 80},
                                              {"h20", 90},
                                              {"b200", 100},
                                              {"dgx-spark", 121}};
    for (Gpu& g : v)
        for (const auto& e : cc)
            if (g.id == e.first) g.compute_capability = e.second;
    return v;
}

std::string normalize(const std::string& s) {
    std::string out;
    for (char c : s) {
        unsigned char u = static_cast<unsigned char>(c);
        if (c == ' ' || c == '_')
            out += '-';
        else
            out += static_cast<char>(std::tolower(u));
    }
    for (const char* prefix : {"nvidia-", "geforce-", "amd-", "instinct-", "radeon-", "apple-", "tesla-"}) {
        std::string p(prefix);
        if (out.rfind(p, 0) == 0 && out.size() > p.size()) out = out.substr(p.size());
    }
    // "rtx4090" -> "rtx-4090"
    if (out.rfind("rtx", 0) == 0 && out.size() > 3 && std::isdigit(static_cast<unsigned char>(out[3])))
        out.insert(3, "-");
    return out;
}

}  // namespace

int64_t Gpu::total_bytes() const {
    if (reported_bytes > 0) return reported_bytes;
    if (unified_memory && vendor == "apple") return apple_wired_bytes(memory_bytes);
    return memory_bytes;
}

int64_t apple_wired_bytes(int64_t ram_bytes, int64_t wired_limit_mb) {
    if (ram_bytes <= 0) return 0;
    if (wired_limit_mb > 0) return wired_limit_mb * (int64_t(1) << 20);
    // 2/3 and 3/4 of a whole number of MiB, as Metal reports them (10922.67 MiB = 16 GiB * 2/3)
    return ram_bytes <= 32 * kGiB ? ram_bytes / 3 * 2 : ram_bytes / 4 * 3;
}

const std::vector<Gpu>& gpu_catalog() {
    static const std::vector<Gpu> catalog = build();
    return catalog;
}

const Gpu* find_gpu(const std::string& id) {
    const std::string key = normalize(id);
    if (key.empty()) return nullptr;
    for (const Gpu& g : gpu_catalog()) {
        if (g.id == key) return &g;
    }
    for (const Gpu& g : gpu_catalog()) {
        for (const std::string& a : g.aliases)
            if (a == key || normalize(a) == key) return &g;
    }
    // "rtx-4090" typed as "4090": try the id without its "rtx-" / "rx-" prefix.
    for (const Gpu& g : gpu_catalog()) {
        for (const char* prefix : {"rtx-", "rx-"}) {
            std::string p(prefix);
            if (g.id.rfind(p, 0) == 0 && g.id.substr(p.size()) == key) return &g;
        }
    }
    return nullptr;
}

}  // namespace kvb
