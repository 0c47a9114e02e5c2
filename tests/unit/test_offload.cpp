// llama.cpp partial offload (-ngl) and the Mac's unified memory: which tensors and KV
// cells go to the GPU, what stays in system RAM, the most layers that fit, and what
// Metal lets the GPU wire. Placement rules: llama_model_base::load_tensors in current
// builds (slot n_layer is the output layer, i_gpu_start = n_layer + 1 - ngl: the output
// layer first, then the last ngl - 1 layers; the input layer on the CPU), llama_kv_cache
// (a layer's cells on its layer's device unless --no-kv-offload).
#include <doctest/doctest.h>

#include "base/units.h"
#include "budget/budget.h"
#include "budget/budget_steps.h"
#include "budget/gpus.h"
#include "fixtures.h"
#include "gguf_builder.h"
#include "model/gguf.h"
#include "model/gguf_spec.h"

using namespace kvb;
using kvb::test::fixture;
using kvb::test::GgufBuilder;
namespace gt = kvb::test::ggml;

namespace {

// A 4-layer Llama in f16 whose every byte is easy to add up:
//   layer: attn_norm 1,024 + q 131,072 + k 65,536 + v 65,536 + o 131,072 + ffn_norm 1,024
//          + gate/up/down 3 x 262,144 = 1,181,696
//   token_embd 524,288; output_norm 1,024; output 524,288 (absent when tied)
//   KV (f16): 2 heads x 64 x 2 (K and V) x 2 bytes = 512 bytes per cell per layer
constexpr int64_t kLayer = 1181696, kEmbd = 524288, kOutNorm = 1024, kOut = 524288, kCell = 512;

ModelSpec tiny(bool tied = false) {
    GgufBuilder b;
    b.str("general.architecture", "llama")
        .u32("llama.block_count", 4)
        .u32("llama.context_length", 4096)
        .u32("llama.embedding_length", 256)
        .u32("llama.feed_forward_length", 512)
        .u32("llama.attention.head_count", 4)
        .u32("llama.attention.head_count_kv", 2)
        .u32("llama.vocab_size", 1024)
        .f32("llama.rope.freq_base", 10000.0f)
        .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
        .u32("general.file_type", 1);
    b.tensor("token_embd.weight", {256, 1024}, gt::F16).tensor("output_norm.weight", {256}, gt::F32);
    if (!tied) b.tensor("output.weight", {256, 1024}, gt::F16);
    for (int il = 0; il < 4; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        b.tensor(p + "attn_norm.weight", {256}, gt::F32)
            .tensor(p + "attn_q.weight", {256, 256}, gt::F16)
            .tensor(p + "attn_k.weight", {256, 128}, gt::F16)
            .tensor(p + "attn_v.weight", {256, 128}, gt::F16)
            .tensor(p + "attn_output.weight", {256, 256}, gt::F16)
            .tensor(p + "ffn_norm.weight", {256}, gt::F32)
            .tensor(p + "ffn_gate.weight", {256, 512}, gt::F16)
            .tensor(p + "ffn_up.weight", {256, 512}, gt::F16)
            .tensor(p + "ffn_down.weight", {512, 256}, gt::F16);
    }
    auto bytes = b.bytes();
    auto p = parse_gguf(bytes.data(), bytes.size(), "tiny.gguf");
    REQUIRE_MESSAGE(p.ok(), p.error.message);
    auto m = spec_from_gguf(p.header, "tiny.gguf");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
    return m.value();
}

BudgetInputs inputs(int64_t ngl, int64_t gpu_bytes = 64 * MiB) {
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = gpu_bytes;
    in.context = 4096;
    in.n_gpu_layers = ngl;
    in.activation_bytes = 0;  // only weights and KV: the sums below stay exact
    in.overhead_bytes = 0;
    return in;
}

BudgetResult run(const ModelSpec& m, const BudgetInputs& in) {
    auto r = compute_budget(m, in);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

}  // namespace

TEST_CASE("GGUF tensors by llama.cpp layer: blocks, input layer, output layer") {
    ModelSpec m = tiny();
    REQUIRE(m.gguf->block_bytes.size() == 4);
    for (int64_t b : m.gguf->block_bytes) CHECK(b == kLayer);
    CHECK(m.gguf->input_bytes == kEmbd);
    CHECK(m.gguf->output_bytes == kOutNorm + kOut);
    CHECK_FALSE(m.gguf->tied_output);
    CHECK(m.gguf->tensor_bytes == 4 * kLayer + kEmbd + kOutNorm + kOut);
    CHECK(tiny(true).gguf->tied_output);
}

TEST_CASE("-ngl 2 of 4: the output layer, the last layer and its KV on the GPU, the rest in RAM") {
    auto r = run(tiny(), inputs(2));
    const LlamaOffload& o = r.offload;
    CHECK(o.active);
    CHECK(o.n_layer == 4);
    CHECK(o.n_gpu_layers == 2);
    CHECK(o.output_on_gpu);
    CHECK_FALSE(o.estimated);
    CHECK(o.gpu_weights_bytes == kLayer + kOutNorm + kOut);
    CHECK(o.cpu_weights_bytes == 3 * kLayer + kEmbd);
    CHECK(o.gpu_kv_bytes == 1 * 4096 * kCell);
    CHECK(o.cpu_kv_bytes == 3 * 4096 * kCell);
    CHECK(o.ram_need_bytes == 3 * kLayer + kEmbd + 3 * 4096 * kCell);
    CHECK(r.per_gpu.weights_bytes == kLayer + kOutNorm + kOut);
    CHECK(r.per_gpu.kv_bytes == 4096 * kCell);
    CHECK(r.per_gpu.total_bytes == kLayer + kOutNorm + kOut + 4096 * kCell);
    CHECK(r.fits);
    CHECK(r.command == "llama-server -m tiny.gguf -c 4096 -np 1 -ngl 2");
}

TEST_CASE("-ngl n_layer leaves block 0 on the CPU; n_layer + 1 is full offload; the input layer never moves") {
    auto four = run(tiny(), inputs(4));
    CHECK(four.offload.output_on_gpu);
    CHECK(four.offload.gpu_weights_bytes == 3 * kLayer + kOutNorm + kOut);
    CHECK(four.offload.cpu_weights_bytes == kLayer + kEmbd);
    CHECK(four.offload.cpu_kv_bytes == 4096 * kCell);
    auto five = run(tiny(), inputs(99));
    CHECK(five.offload.n_gpu_layers == 5);  // clamped to n_layer + 1
    CHECK(five.offload.gpu_weights_bytes == 4 * kLayer + kOutNorm + kOut);
    CHECK(five.offload.cpu_weights_bytes == kEmbd);
    CHECK(five.offload.cpu_kv_bytes == 0);
    CHECK(five.command == "llama-server -m tiny.gguf -c 4096 -np 1 -ngl 5");
    // Tied embeddings: the output layer holds its own copy of token_embd (TENSOR_DUPLICATED).
    auto tied = run(tiny(true), inputs(99));
    CHECK(tied.offload.gpu_weights_bytes == 4 * kLayer + kOutNorm + kEmbd);
    CHECK(tied.offload.cpu_weights_bytes == kEmbd);
    auto zero = run(tiny(), inputs(0));
    CHECK_FALSE(zero.offload.output_on_gpu);
    CHECK(zero.offload.gpu_weights_bytes == 0);
    CHECK(zero.offload.gpu_kv_bytes == 0);
    CHECK(zero.offload.cpu_weights_bytes == 4 * kLayer + kEmbd + kOutNorm + kOut);
    CHECK(zero.per_gpu.total_bytes == 0);
}

TEST_CASE("--no-kv-offload: every layer's cells in RAM") {
    BudgetInputs in = inputs(99);
    in.no_kv_offload = true;
    auto r = run(tiny(), in);
    CHECK_FALSE(r.offload.kv_offload);
    CHECK(r.offload.gpu_kv_bytes == 0);
    CHECK(r.offload.cpu_kv_bytes == 4 * 4096 * kCell);
    CHECK(r.per_gpu.kv_bytes == 0);
    CHECK(r.command == "llama-server -m tiny.gguf -c 4096 -np 1 -ngl 5 --no-kv-offload");
}

TEST_CASE("the most layers that fit the GPU, and the RAM budget") {
    // -ngl k holds the output layer (525,312 bytes) and k - 1 layers with their 4,096 cells
    // (3,278,848 bytes each): -ngl 3 is 7,083,008 bytes, -ngl 4 is 10,361,856, over 10 MB.
    auto all = run(tiny(), inputs(-1, 10000000));
    CHECK_FALSE(all.offload.active);
    CHECK_FALSE(all.fits);
    CHECK(all.offload.max_gpu_layers == 3);
    REQUIRE_FALSE(all.notes.empty());
    CHECK(all.notes.back().code == "ngl_fits");
    // In RAM: 2 layers + token_embd (2,887,680) and 2 layers of cells (4,194,304) = 6.75 MiB.
    CHECK(render_english(all.notes.back()) ==
          "-ngl 3 fits: the output layer and the last 2 of 4 layers on the GPU, 6.75 MiB of weights and KV in system "
          "RAM (slower)");
    auto three = run(tiny(), inputs(3, 10000000));
    CHECK(three.fits);
    CHECK(three.per_gpu.total_bytes == 7083008);
    CHECK(three.offload.max_gpu_layers == 3);
    // RAM too small for what stays on the CPU: 3 layers + token_embd (4,069,376) and 3 layers of cells (6,291,456).
    BudgetInputs in = inputs(2);
    in.ram_bytes = 8000000;
    auto ram = run(tiny(), in);
    CHECK_FALSE(ram.offload.ram_fits);
    CHECK_FALSE(ram.fits);
    CHECK(ram.verdict_reason.code == "nofit_ram");
    CHECK(render_english(ram.verdict_reason) ==
          "llama.cpp would need 9.88 MiB of system RAM for what stays on the CPU (weights 3.88 MiB, KV 6.00 MiB) but "
          "has 7.63 MiB");
    // The longest context stops where RAM runs out: 3,930,624 bytes left for 3 layers of
    // 512-byte cells hold 2,559 cells, 2,304 after llama.cpp's padding to 256.
    CHECK(ram.max_context == 2304);
}

TEST_CASE("a config's layers are split by parameter shares, marked estimated") {
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4060-ti-16gb";
    in.weights = "Q4_K_M";
    in.context = 8192;
    in.n_gpu_layers = 16;
    auto r = run(fixture("meta-llama/Llama-3.1-8B"), in);
    CHECK(r.offload.estimated);
    CHECK(r.offload.n_layer == 32);
    CHECK(r.offload.gpu_weights_bytes + r.offload.cpu_weights_bytes == r.weights.bytes);
    // -ngl 16: the output layer and 15 layers; 8,192 cells x 8 heads x 128 x K,V x f16 per layer
    CHECK(r.offload.gpu_kv_bytes == 15LL * 8192 * 8 * 128 * 2 * 2);
    CHECK(r.offload.cpu_kv_bytes == 17LL * 8192 * 8 * 128 * 2 * 2);
}

TEST_CASE("Mac: what Metal lets the GPU wire (2/3 up to 32 GiB, 3/4 above) and iogpu.wired_limit_mb") {
    // llama.cpp's ggml_metal_init: 16 GiB -> 10922.67 MiB, 32 GiB -> 21845.34 MiB, 36 GiB -> 28991.03 MB (27 GiB),
    // 64 GiB -> 49152.00 MiB (github.com/abetlen/llama-cpp-python/issues/687, ollama/ollama#434,
    // ggml-org/llama.cpp#1870; the 36 GiB M4 Max line in a public llama.cpp walkthrough).
    CHECK(apple_wired_bytes(16 * GiB) == 11453246122LL);  // 10922.67 MiB
    CHECK(apple_wired_bytes(32 * GiB) == 22906492244LL);  // 21845.33 MiB
    CHECK(apple_wired_bytes(36 * GiB) == 27 * GiB);
    CHECK(apple_wired_bytes(64 * GiB) == 48 * GiB);
    CHECK(apple_wired_bytes(128 * GiB, 114688) == 112 * GiB);  // sudo sysctl iogpu.wired_limit_mb=114688
    for (const char* id : {"m4-16gb", "m4-pro-24gb", "m4-32gb", "m4-max-36gb", "m4-pro-48gb", "m4-pro-64gb",
                           "m2-max-96gb", "m4-max-128gb", "m2-ultra-192gb", "m3-ultra-512gb"}) {
        CAPTURE(id);
        const Gpu* g = find_gpu(id);
        REQUIRE(g);
        CHECK(g->unified_memory);
        CHECK(g->total_bytes() == apple_wired_bytes(g->memory_bytes));
    }
    CHECK(find_gpu("mac-24gb") == find_gpu("m4-pro-24gb"));

    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "m4-16gb";
    in.weights = "Q4_K_M";
    in.context = 40960;
    auto r = run(fixture("Qwen/Qwen3-8B"), in);
    CHECK(r.gpu_total_bytes == 11453246122LL);
    CHECK(r.mac_ram_bytes == 16 * GiB);
    CHECK(render_english(r.notes.front()) ==
          "unified memory: Metal lets the GPU wire 10.67 GiB of the 16.00 GiB RAM by default (2/3); sudo sysctl "
          "iogpu.wired_limit_mb=N raises it");
    // A custom size on a Mac is its RAM ("24GB" = 24 GiB) and keeps the rule.
    in.gpu_memory_bytes = 24000000000LL;
    auto c = run(fixture("Qwen/Qwen3-8B"), in);
    CHECK(c.mac_ram_bytes == 24 * GiB);
    CHECK(c.gpu_total_bytes == 24 * GiB / 3 * 2);
    CHECK(c.gpu_name == "Apple M4 16GB (10-core GPU) (RAM 24.00 GiB)");
}

TEST_CASE("Mac: a context that does not fit under the default limit gets the sysctl that makes it fit") {
    // Qwen3-8B Q4_K_M at 40,960 tokens on a 16 GB Mac: 11,926,437,888 bytes against Metal's 10.67 GiB.
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "m4-16gb";
    in.weights = "Q4_K_M";
    in.context = 40960;
    auto r = run(fixture("Qwen/Qwen3-8B"), in);
    REQUIRE_FALSE(r.fits);
    CHECK(r.per_gpu.total_bytes == 11576377344LL);
    REQUIRE(r.notes.back().code == "mac_wired_raise");
    CHECK(render_english(r.notes.back()) ==
          "sudo sysctl iogpu.wired_limit_mb=11041 lets the GPU wire the 10.78 GiB this needs, leaving macOS 5.22 GiB "
          "of 16.00 GiB (until reboot)");
    // With that limit in force, the same answer fits.
    in.wired_limit_mb = 11374;
    auto raised = run(fixture("Qwen/Qwen3-8B"), in);
    CHECK(raised.fits);
    CHECK(raised.gpu_total_bytes == 11374 * MiB);
    CHECK(raised.notes.front().code == "mac_wired_set");
    // Q8_0 needs 14.54 GiB: more than a 16 GB Mac can give its GPU and keep macOS running.
    in.wired_limit_mb = 0;
    in.weights = "Q8_0";
    auto q8 = run(fixture("Qwen/Qwen3-8B"), in);
    CHECK(render_english(q8.notes.back()) ==
          "this needs 13.92 GiB of GPU memory: too much for a Mac with 16.00 GiB RAM even with a raised "
          "iogpu.wired_limit_mb");
}

// llama.cpp's automatic fit (--fit on, the default): common_params_fit_impl in
// common/fit.cpp. The tiny model with 1 MiB kept free (-fitt 1) and -fitc 256: every layer
// is 1,181,696 bytes of weights + 2,048 bytes of KV per cell (4 x 512 bytes over 4 layers
// in all), the output layer 525,312; no compute buffer or runtime (both set to 0).
namespace {

BudgetInputs fit_inputs(int64_t gpu_bytes, int64_t ctx = 0, int64_t ngl = -1) {
    BudgetInputs in = inputs(ngl, gpu_bytes);
    in.context = ctx;
    in.fit_target_mb = 1;
    in.fit_ctx = 256;
    return in;
}

}  // namespace

TEST_CASE("--fit: enough memory, nothing changes (the training context, every layer)") {
    // 4 x 1,181,696 + 525,312 + 4,096 x 2,048 = 13,640,704 bytes of 64 MiB.
    auto r = run(tiny(), fit_inputs(64 * MiB));
    const LlamaFit& f = r.fit;
    CHECK(f.outcome == "unchanged");
    CHECK(f.projected_bytes == 13640704);
    CHECK(f.n_ctx == 4096);
    CHECK(f.n_gpu_layers == 5);
    CHECK(f.flags == "-c 4096 -ngl 5");
    CHECK(f.log_lines == std::vector<std::string>{
                             "common_params_fit_impl: projected to use 13 MiB of device memory vs. 64 MiB of free "
                             "device memory",
                             "common_params_fit_impl: will leave 50 >= 1 MiB of free device memory, no changes needed",
                             "common_fit_params: successfully fit params to free device memory"});
    for (const Message& n : r.notes) CHECK(n.code.rfind("llamacpp_fit", 0) != 0);
}

TEST_CASE("--fit: no -c, the context shrinks linearly between -fitc and the training context") {
    // 10,000,000 bytes free, 8,951,424 allowed: 5,776,384 at 256 cells, 13,640,704 at 4,096;
    // 256 + 3,840 x 3,175,040 / 7,864,320 = 1,806, rounded down to 1,792 (8,922,112 bytes).
    auto r = run(tiny(), fit_inputs(10000000));
    const LlamaFit& f = r.fit;
    CHECK(f.outcome == "context");
    CHECK(f.n_ctx == 1792);
    CHECK(f.context == 1792);
    CHECK(f.n_gpu_layers == 5);
    CHECK(f.used_bytes == 8922112);
    CHECK(f.free_bytes == 10000000);
    CHECK(f.target_bytes == MiB);
    CHECK(f.flags == "-c 1792 -ngl 5");
    CHECK(f.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected to use 13 MiB of device memory vs. 9 MiB of free device memory",
              "common_params_fit_impl: cannot meet free memory target of 1 MiB, need to reduce device memory by 4 MiB",
              "common_params_fit_impl: context size reduced from 4096 to 1792 -> need 4 MiB less memory in total",
              "common_params_fit_impl: entire model can be fit by reducing context",
              "common_fit_params: successfully fit params to free device memory"});
    REQUIRE_FALSE(r.notes.empty());
    bool said = false;
    for (const Message& n : r.notes)
        if (n.code == "llamacpp_fit_context") {
            said = true;
            CHECK(n.param("ctx") == "1,792");
            CHECK(n.param("flags") == "-c 1792 -ngl 5");
        }
    CHECK(said);
    // Two sequences (-np 2, one stream each): fitting starts from 2 x 4,096 cells and the
    // context per sequence is half the cells (ggml-org/llama.cpp#27496).
    BudgetInputs two = fit_inputs(10000000);
    two.seqs = 2;
    auto r2 = run(tiny(), two);
    CHECK(r2.fit.outcome == "context");
    CHECK(r2.fit.log_lines[2].find("context size reduced from 8192 to ") != std::string::npos);
    CHECK(r2.fit.context == r2.fit.n_ctx / 2);
    // From -fitc x 2 = 512 cells (n_ctx_min_total): 512 + 7,680 x 2,650,752 / 15,728,640 =
    // 1,806, rounded down to a multiple of 256 x 2 streams: 1,536.
    CHECK(r2.fit.n_ctx == 1536);
}

TEST_CASE("--fit: even -fitc does not fit, so it keeps -fitc and fills layers back to front") {
    // 5,000,000 free, 3,951,424 allowed. At 256 cells -ngl k holds the output layer and k - 1
    // layers of 1,312,768 bytes: -ngl 3 is 3,150,848, -ngl 4 is 4,463,616.
    auto r = run(tiny(), fit_inputs(5000000));
    const LlamaFit& f = r.fit;
    CHECK(f.outcome == "layers");
    CHECK(f.n_ctx == 256);
    CHECK(f.n_gpu_layers == 3);
    CHECK(f.used_bytes == 3150848);
    CHECK(f.flags == "-c 256 -ngl 3");
    CHECK(f.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected to use 13 MiB of device memory vs. 4 MiB of free device memory",
              "common_params_fit_impl: cannot meet free memory target of 1 MiB, need to reduce device memory by 9 MiB",
              "common_params_fit_impl: context size reduced from 4096 to 256 -> need 7 MiB less memory in total",
              "common_params_fit_impl: filling dense layers back-to-front:",
              "common_params_fit_impl:   - GPU0:  3 layers,      3 MiB used,      1 MiB free",
              "common_fit_params: successfully fit params to free device memory"});
    // -c given: the context stays, only the layers move: at 2,048 cells a layer is 2,230,272
    // bytes, -ngl 4 is 7,216,128 of the 8,951,424 allowed.
    auto c = run(tiny(), fit_inputs(10000000, 2048));
    CHECK(c.fit.outcome == "layers");
    CHECK(c.fit.n_ctx == 2048);
    CHECK(c.fit.n_gpu_layers == 4);
    CHECK(c.fit.log_lines[2] == "common_params_fit_impl: context size set by user to 2048 -> no change");
}

TEST_CASE("--fit: -ngl given, llama.cpp stops fitting (and the context it had reduced stays at -fitc)") {
    auto r = run(tiny(), fit_inputs(1000000, 0, 2));
    CHECK(r.fit.outcome == "failed");
    CHECK(r.fit.n_gpu_layers == 2);
    CHECK(r.fit.n_ctx == 256);
    CHECK(r.fit.log_lines.back() ==
          "common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 2, "
          "abort");
    bool said = false;
    for (const Message& n : r.notes) said = said || n.code == "llamacpp_fit_failed";
    CHECK(said);
}

namespace {
ModelSpec tiny_moe();
}  // namespace

TEST_CASE("--fit on 2 GPUs: per-device targets, context over the sum less half a layer per device, -ts") {
    // llama_model::load_tensors' default split of 5 slots over 2 equal devices: slot j / 5
    // below 0.5 on GPU0 (layers 0-2), the rest on GPU1 (layer 3 and the output layer).
    CHECK(budget_steps::llamacpp_even_split(2, 5) == std::vector<int64_t>{3, 2});
    CHECK(budget_steps::llamacpp_even_split(2, 33) == std::vector<int64_t>{17, 16});
    // 2 x 64 MiB: GPU0 3 x 1,181,696 + 3 x 2,097,152 KV = 9,836,544, GPU1 1,707,008 +
    // 2,097,152 = 3,804,160; both keep 1 MiB free.
    BudgetInputs two = fit_inputs(64 * MiB);
    two.gpu_count = 2;
    auto ok = run(tiny(), two);
    CHECK(ok.fit.outcome == "unchanged");
    CHECK(ok.fit.projected_bytes == 13640704);
    CHECK(ok.fit.device_layers == std::vector<int64_t>{3, 2});
    CHECK(ok.fit.flags == "-c 4096 -ngl 5");
    CHECK(ok.fit.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected memory use with initial parameters [MiB]:",
              "common_params_fit_impl:   - GPU0:     64 total,      9 used,     54 free vs. target of      1",
              "common_params_fit_impl:   - GPU1:     64 total,      3 used,     60 free vs. target of      1",
              "common_params_fit_impl: projected to use 13 MiB of device memory vs. 128 MiB of free device memory",
              "common_params_fit_impl: targets for free memory can be met on all devices, no changes needed",
              "common_fit_params: successfully fit params to free device memory"});

    // 2 x 5,000,000 bytes, 3,951,424 allowed on each. Step 2: the summed target 7,902,848 less
    // (2 + 1) x 1,313,024 / 2 (5,252,096 bytes of weights over 4 layers) = 5,933,312; at 256
    // cells 5,776,384, at 4,096 13,640,704: 256 + 3,840 x 156,928 / 7,864,320 = 332, rounded
    // down to 256. Step 3, GPU1 first: all 5 slots 5,776,384 (over); false position 3
    // (output + layers 3, 2: 3,150,848, fits), then 4 (4,463,616, over). GPU0: the 2 left,
    // 2,625,536, fit.
    two.gpu_memory_bytes = 5000000;
    auto m = run(tiny(), two);
    const LlamaFit& f = m.fit;
    CHECK(f.outcome == "layers");
    CHECK(f.n_ctx == 256);
    CHECK(f.n_gpu_layers == 5);
    CHECK(f.device_layers == std::vector<int64_t>{2, 3});
    CHECK(f.used_bytes == 5776384);
    CHECK(f.flags == "-c 256 -ngl 5 -ts 2,3");
    CHECK(f.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected memory use with initial parameters [MiB]:",
              "common_params_fit_impl:   - GPU0:      4 total,      9 used,     -4 free vs. target of      1",
              "common_params_fit_impl:   - GPU1:      4 total,      3 used,      1 free vs. target of      1",
              "common_params_fit_impl: projected to use 13 MiB of device memory vs. 9 MiB of free device memory",
              "common_params_fit_impl: cannot meet free memory targets on all devices, need to use 5 MiB less in total",
              "common_params_fit_impl: context size reduced from 4096 to 256 -> need 7 MiB less memory in total",
              "common_params_fit_impl: entire model should be fit across devices by reducing context",
              "common_params_fit_impl: filling dense layers back-to-front:",
              "common_params_fit_impl:   - GPU1:  3 layers,      3 MiB used,      1 MiB free",
              "common_params_fit_impl:   - GPU0:  2 layers,      2 MiB used,      2 MiB free",
              "common_fit_params: successfully fit params to free device memory"});
    bool said = false;
    for (const Message& n : m.notes)
        if (n.code == "llamacpp_fit_devices") {
            said = true;
            CHECK(n.param("ts") == "2,3");
        }
    CHECK(said);
}

TEST_CASE("--fit on 2 GPUs with different memory: the default split and the targets follow each one's free memory") {
    // 4,000,000 and 8,000,000 bytes (--gpu-memory 4000000,8000000), 1 MiB kept free on each:
    // targets 2,951,424 and 6,951,424. llama_model::load_tensors splits by free memory: shares
    // 1/3 and 1, slots j / 5 = 0, 0.2 on GPU0, 0.4, 0.6, 0.8 on GPU1, so {2, 3}.
    CHECK(budget_steps::llamacpp_free_split({4000000, 8000000}, 5) == std::vector<int64_t>{2, 3});
    BudgetInputs in = fit_inputs(0);
    in.gpu_memory_bytes = 0;
    in.gpu_count = 2;
    in.gpu_memory_each = {4000000, 8000000};
    auto r = run(tiny(), in);
    const LlamaFit& f = r.fit;
    // At 4,096 cells GPU0 holds 2 x 1,181,696 + 2 x 2,097,152 = 6,557,696 (-2,557,696 free),
    // GPU1 2 layers + the output layer 525,312 + their KV = 7,083,008 (916,992 free): 3,737,856
    // short of the two targets. Step 2: 12,000,000 - 2 MiB - 3 x 1,313,024 / 2 = 7,933,312 to
    // use; at 256 cells 5,776,384: 256 + 3,840 x 2,156,928 / 7,864,320 = 1,309, down to 1,280.
    // Step 3 at 1,280 cells (655,360 KV per layer): GPU1, all 5 slots 7,873,536 (over), step
    // 5 x 6,951,424 / 7,873,536 = 4: 6,036,480, fits. GPU0: layer 0, 1,837,056, fits.
    CHECK(f.outcome == "layers");
    CHECK(f.n_ctx == 1280);
    CHECK(f.device_layers == std::vector<int64_t>{1, 4});
    CHECK(f.device_free == std::vector<int64_t>{4000000, 8000000});
    CHECK(f.device_used == std::vector<int64_t>{1837056, 6036480});
    CHECK(f.used_bytes == 7873536);
    CHECK(f.free_bytes == 12000000);
    CHECK(f.flags == "-c 1280 -ngl 5 -ts 1,4");
    CHECK(f.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected memory use with initial parameters [MiB]:",
              "common_params_fit_impl:   - GPU0:      3 total,      6 used,     -2 free vs. target of      1",
              "common_params_fit_impl:   - GPU1:      7 total,      6 used,      0 free vs. target of      1",
              "common_params_fit_impl: projected to use 13 MiB of device memory vs. 11 MiB of free device memory",
              "common_params_fit_impl: cannot meet free memory targets on all devices, need to use 3 MiB less in total",
              "common_params_fit_impl: context size reduced from 4096 to 1280 -> need 5 MiB less memory in total",
              "common_params_fit_impl: entire model should be fit across devices by reducing context",
              "common_params_fit_impl: filling dense layers back-to-front:",
              "common_params_fit_impl:   - GPU1:  4 layers,      5 MiB used,      1 MiB free",
              "common_params_fit_impl:   - GPU0:  1 layers,      1 MiB used,      2 MiB free",
              "common_fit_params: successfully fit params to free device memory"});
    // The rest of the budget takes the smaller GPU for both, and says so.
    CHECK(r.gpu_total_bytes == 4000000);
    bool said = false;
    for (const Message& n : r.notes)
        if (n.code == "gpus_uneven") {
            said = true;
            CHECK(n.param("min") == "3.81 MiB");
        }
    CHECK(said);
    // A compute buffer of 500,000 bytes on 2,000,000 + 64 MiB: the large card takes all 5
    // slots at 4,096 cells (4 x 1,181,696 + 525,312 + 4 x 2,097,152 + 500,000 = 14,140,704);
    // the first device keeps its compute buffer with no layers, as llama.cpp#25487's ROCm0.
    BudgetInputs c = in;
    c.gpu_memory_each = {2000000, 64 * MiB};
    c.activation_bytes = 500000;
    auto rc = run(tiny(), c);
    CHECK(rc.fit.device_layers == std::vector<int64_t>{0, 5});
    CHECK(rc.fit.device_used == std::vector<int64_t>{500000, 14140704});
    CHECK(rc.fit.flags == "-c 4096 -ngl 5 -ts 0,5");
    // Past llama.cpp's 16 devices the split is not predicted, and the answer says so.
    BudgetInputs many = fit_inputs(1000000);
    many.gpu_count = 17;
    auto rm = run(tiny(), many);
    CHECK(rm.fit.outcome == "not_predicted");
    bool multi = false;
    for (const Message& n : rm.notes)
        if (n.code == "llamacpp_fit_multi") {
            multi = true;
            CHECK(render_english(n) ==
                  "with 17 GPUs, more than the 16 devices llama.cpp splits a model over, kvbudget does not predict the "
                  "layers its automatic fit gives each device; -c and -ngl (and -ts) fix them");
        }
    CHECK(multi);
    // One size per GPU, or a refusal naming the mismatch.
    in.gpu_count = 3;
    auto bad = compute_budget(tiny(), in);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message == "--gpu-memory lists 2 sizes but there are 3 GPUs: give one size per GPU");
}

namespace {

// The same 4 layers as a MoE (llama arch with llama.expert_count, as Mixtral's GGUFs): per
// layer 399,360 bytes of attention, norms and the f32 router (ffn_gate_inp 4,096) plus 3
// expert tensors of 1,048,576 (4 experts x 256 x 512 f16) = 3,545,088; output 525,312.
ModelSpec tiny_moe() {
    GgufBuilder b;
    b.str("general.architecture", "llama")
        .u32("llama.block_count", 4)
        .u32("llama.context_length", 4096)
        .u32("llama.embedding_length", 256)
        .u32("llama.feed_forward_length", 512)
        .u32("llama.expert_count", 4)
        .u32("llama.expert_used_count", 2)
        .u32("llama.attention.head_count", 4)
        .u32("llama.attention.head_count_kv", 2)
        .u32("llama.vocab_size", 1024)
        .f32("llama.rope.freq_base", 10000.0f)
        .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
        .u32("general.file_type", 1);
    b.tensor("token_embd.weight", {256, 1024}, gt::F16)
        .tensor("output_norm.weight", {256}, gt::F32)
        .tensor("output.weight", {256, 1024}, gt::F16);
    for (int il = 0; il < 4; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        b.tensor(p + "attn_norm.weight", {256}, gt::F32)
            .tensor(p + "attn_q.weight", {256, 256}, gt::F16)
            .tensor(p + "attn_k.weight", {256, 128}, gt::F16)
            .tensor(p + "attn_v.weight", {256, 128}, gt::F16)
            .tensor(p + "attn_output.weight", {256, 256}, gt::F16)
            .tensor(p + "ffn_norm.weight", {256}, gt::F32)
            .tensor(p + "ffn_gate_inp.weight", {256, 4}, gt::F32)
            .tensor(p + "ffn_gate_exps.weight", {256, 512, 4}, gt::F16)
            .tensor(p + "ffn_up_exps.weight", {256, 512, 4}, gt::F16)
            .tensor(p + "ffn_down_exps.weight", {512, 256, 4}, gt::F16);
    }
    auto bytes = b.bytes();
    auto p = parse_gguf(bytes.data(), bytes.size(), "moe.gguf");
    REQUIRE_MESSAGE(p.ok(), p.error.message);
    auto m = spec_from_gguf(p.header, "moe.gguf");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
    return m.value();
}

}  // namespace

TEST_CASE("--fit, MoE: the FFN tensors common/fit.cpp's patterns move, by layer") {
    ModelSpec m = tiny_moe();
    REQUIRE(m.gguf->block_ffn.size() == 4);
    const GgufWeights::BlockFfn& f = m.gguf->block_ffn[2];
    CHECK(f.exps == 3145728);   // ffn_(up|down|gate_up|gate)_(ch|)exps
    CHECK(f.ffn == 3149824);    // ffn_(gate|up|gate_up|down).*: the router too
    CHECK(f.no_up == 2101248);  // ffn_(gate|gate_up|down).*
    CHECK(f.down == 1048576);   // ffn_down.*
    CHECK(m.gguf->block_bytes[2] == 3545088);
}

TEST_CASE("--fit, MoE on one GPU: dense-only layers back to front, then full layers front to back") {
    // 12 MiB free, 11,534,336 allowed. At -fitc 256 every layer whole needs 4 x 3,545,088 +
    // 525,312 + 4 x 131,072 KV = 15,229,952: the context stays at 256.
    // Experts all in RAM: 4 x 399,360 + 525,312 + 524,288 = 2,647,040, a surplus of 8,887,296.
    // Step 3, slots 0..4 with the last 4 partial: set_ngl_tensor_split_tbo keeps the lowest GPU
    // slot (layer 0) whole and marks the output slot partial, so 5,792,768 fit at once.
    // Step 4 by false position from 1 to 5 whole slots: step 4 x 5,741,568 / 9,437,184 = 2
    // (3 whole, 12,084,224: over), then 1 (2 whole: layers 2 and 3 partial, 8,938,496: fits).
    // The first partial layer (2) then keeps its up experts (UP, 9,982,976 < target) and its
    // gate experts too (GATE: only ffn_down.* in RAM, 11,035,648 < target).
    auto r = run(tiny_moe(), fit_inputs(12 * MiB));
    const LlamaFit& f = r.fit;
    CHECK(f.outcome == "layers");
    CHECK(f.n_ctx == 256);
    CHECK(f.n_gpu_layers == 5);
    CHECK(f.overflow_layers == 3);
    CHECK(f.used_bytes == 11035648);
    CHECK(
        f.flags ==
        "-c 256 -ngl 5 -ot \"blk\\.2\\.ffn_down.*=CPU\" -ot \"blk\\.(3)\\.ffn_(up|down|gate_up|gate)_(ch|)exps=CPU\"");
    CHECK(f.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected to use 22 MiB of device memory vs. 12 MiB of free device memory",
              "common_params_fit_impl: cannot meet free memory target of 1 MiB, need to reduce device memory by 11 "
              "MiB",
              "common_params_fit_impl: context size reduced from 4096 to 256 -> need 7 MiB less memory in total",
              "common_params_fit_impl: with only dense weights in device memory there is a total surplus of 8 MiB",
              "common_params_fit_impl: filling dense-only layers back-to-front:",
              "common_params_fit_impl:   - GPU0:  5 layers,      5 MiB used,      6 MiB free",
              "common_params_fit_impl: converting dense-only layers to full layers and filling them front-to-back "
              "with overflow to next device/system memory:",
              "common_params_fit_impl:   - GPU0:  5 layers ( 3 overflowing),     10 MiB used,      1 MiB free",
              "common_fit_params: successfully fit params to free device memory"});
    bool said = false;
    for (const Message& n : r.notes)
        if (n.code == "llamacpp_fit_moe_layers") {
            said = true;
            CHECK(n.param("part") == "2");  // layers 2 and 3; the output slot has no experts
            CHECK(n.param("ngl") == "5");
        }
    CHECK(said);

    // 2 MiB free, 1,048,576 allowed: even the dense tensors alone are 1,598,464 over. Step 3
    // from 0 slots: step 5 x 1,048,576 / 5,792,768 -> 1 (the output layer, 525,312: fits),
    // then 1 more slot (layer 3 whole with the output, 4,201,472: over). No step 4.
    auto d = run(tiny_moe(), fit_inputs(2 * MiB));
    CHECK(d.fit.outcome == "layers");
    CHECK(d.fit.n_gpu_layers == 1);
    CHECK(d.fit.overflow_layers == 0);
    CHECK(d.fit.used_bytes == 525312);
    CHECK(d.fit.flags == "-c 256 -ngl 1");
    CHECK(d.fit.log_lines[3] ==
          "common_params_fit_impl: with only dense weights in device memory there is still a total deficit of 1 MiB");
    CHECK(d.fit.log_lines[5] == "common_params_fit_impl:   - GPU0:  1 layers,      0 MiB used,      1 MiB free");
    CHECK(d.fit.log_lines.size() == 7);
}

TEST_CASE("--fit, MoE on 2 GPUs: dense-only slots on the last GPU, then full layers front to back with overflow") {
    // 2 x 8 MiB, targets 7,340,032 each. A layer is 3,545,088 = 399,360 dense + 3,145,728 of
    // experts; the output layer 525,312; KV 512 bytes per cell and layer.
    // Step 1, split {3, 2} at 4,096 cells: GPU0 3 x 3,545,088 + 3 x 2,097,152 = 16,926,720,
    // GPU1 3,545,088 + 525,312 + 2,097,152 = 6,167,552: 8,414,208 short of the targets.
    // Step 2: the summed target less (2 + 1) x 3,676,416 / 6 (a MoE: a third of a layer) is
    // 12,841,856, below the 15,229,952 used at 256 cells, so -fitc.
    // Experts all in RAM at 256 cells: GPU0 1,591,296, GPU1 1,055,744, a surplus of 12,033,024.
    // Step 3: GPU1 takes all 5 slots dense-only (layer 0 whole): 5,792,768.
    // Step 4, GPU0: 4 full slots would be 14,704,640; false position 1 full (3,676,160, fits),
    // then 2 (7,352,320, over). One more layer with its up and gate experts kept, only ffn_down
    // on GPU1: GPU0 6,303,744, GPU1 5,780,480, both within. GPU1: layer 3 whole as well would
    // be 8,926,208 (over); layer 3 keeping its up experts, 6,824,960, fits; keeping its gate
    // experts too, 7,877,632, does not.
    BudgetInputs in = fit_inputs(8 * MiB);
    in.gpu_count = 2;
    auto r = run(tiny_moe(), in);
    const LlamaFit& f = r.fit;
    CHECK(f.outcome == "layers");
    CHECK(f.n_ctx == 256);
    CHECK(f.n_gpu_layers == 5);
    CHECK(f.overflow_layers == 3);
    CHECK(f.device_layers == std::vector<int64_t>{2, 3});
    CHECK(f.device_overflow == std::vector<int64_t>{1, 2});
    CHECK(f.device_used == std::vector<int64_t>{6303744, 6824960});
    CHECK(f.used_bytes == 13128704);
    CHECK(f.flags ==
          "-c 256 -ngl 5 -ts 2,3 -ot \"blk\\.1\\.ffn_down.*=CUDA1\" -ot \"blk\\.3\\.ffn_(gate|gate_up|down).*=CPU\"");
    CHECK(f.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected memory use with initial parameters [MiB]:",
              "common_params_fit_impl:   - GPU0:      8 total,     16 used,     -8 free vs. target of      1",
              "common_params_fit_impl:   - GPU1:      8 total,      5 used,      2 free vs. target of      1",
              "common_params_fit_impl: projected to use 22 MiB of device memory vs. 16 MiB of free device memory",
              "common_params_fit_impl: cannot meet free memory targets on all devices, need to use 8 MiB less in total",
              "common_params_fit_impl: context size reduced from 4096 to 256 -> need 7 MiB less memory in total",
              "common_params_fit_impl: with only dense weights in device memory there is a total surplus of 11 MiB",
              "common_params_fit_impl: filling dense-only layers back-to-front:",
              "common_params_fit_impl:   - GPU1:  5 layers,      5 MiB used,      2 MiB free",
              "common_params_fit_impl:   - GPU0:  0 layers,      0 MiB used,      8 MiB free",
              "common_params_fit_impl: converting dense-only layers to full layers and filling them front-to-back "
              "with overflow to next device/system memory:",
              "common_params_fit_impl:   - GPU0:  2 layers ( 1 overflowing),      6 MiB used,      1 MiB free",
              "common_params_fit_impl:   - GPU1:  3 layers ( 2 overflowing),      6 MiB used,      1 MiB free",
              "common_fit_params: successfully fit params to free device memory"});
    bool said = false;
    for (const Message& n : r.notes)
        if (n.code == "llamacpp_fit_moe_devices") {
            said = true;
            CHECK(n.param("ts") == "2,3");
            CHECK(n.param("part") == "2");  // layers 1 and 3; GPU1's output slot has no experts
        }
    CHECK(said);
}

TEST_CASE("--fit, MoE from a config: expert bytes estimated from the experts and FFN sizes") {
    // Qwen3-30B-A3B in bf16: every tensor at 2 bytes, so a layer's routed experts are
    // 128 x 3 x 2,048 x 768 x 2 = 1,207,959,552 bytes, ffn_down_exps a third of that, and
    // the router (ffn_gate_inp, 2,048 x 128) 524,288 more for the fractions that match it.
    ModelSpec m = fixture("Qwen/Qwen3-30B-A3B");
    auto fmt = weight_format("bf16", m);
    REQUIRE(fmt.ok());
    auto w = weight_bytes(m, fmt.value());
    REQUIRE(w.ok());
    auto lw = budget_steps::llamacpp_layer_weights(m, w.value());
    REQUIRE(lw.ok());
    CHECK(lw->estimated);
    REQUIRE(lw->ffn.size() == 48);
    CHECK(lw->ffn[7].exps == 1207959552);
    CHECK(lw->ffn[7].ffn == 1207959552 + 524288);
    CHECK(lw->ffn[7].no_up == 805306368 + 524288);
    CHECK(lw->ffn[7].down == 402653184);
    // On a 12 GB card at Q4_K_M and 32,768 tokens the fit now runs (no "not predicted"): every
    // slot on the GPU, the experts of layers 19-47 and the down projections of layer 18 in system
    // RAM (31 partial slots with the output slot), and the answer says its expert bytes come from
    // the config (each tensor at its Q4_K_M type: ffn_down_exps is Q6_K on the use_more_bits layers).
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "rtx-3060-12gb";
    in.context = 32768;
    auto r = run(m, in);
    CHECK(r.fit.outcome == "layers");
    CHECK(r.fit.n_gpu_layers == 49);
    CHECK(r.fit.overflow_layers == 31);
    CHECK(r.fit.flags.rfind("-c 32768 -ngl 49 -ot \"blk\\.18\\.ffn_down.*=CPU\" -ot \"blk\\.(19|20|21|", 0) == 0);
    // With neither -c nor -ngl it keeps -fitc (4,096) and the same kind of split.
    CHECK(r.fit_default.n_ctx == 4096);
    CHECK(r.fit_default.outcome == "layers");
    bool said = false;
    for (const Message& n : r.notes) said = said || n.code == "llamacpp_fit_estimated";
    CHECK(said);
}

TEST_CASE("--fit with -c given: the answer also carries llama-server's own choice with neither -c nor -ngl") {
    // -c 2048 at 10,000,000 bytes: the asked context keeps every layer (step 3 by layers), while
    // with no -c the context shrinks to 1,792 tokens and every layer stays (the test above).
    auto r = run(tiny(), fit_inputs(10000000, 2048));
    CHECK(r.fit.outcome == "layers");
    CHECK(r.fit.n_ctx == 2048);
    CHECK(r.fit_default.outcome == "context");
    CHECK(r.fit_default.n_ctx == 1792);
    CHECK(r.fit_default.n_gpu_layers == 5);
    CHECK(r.fit_default.flags == "-c 1792 -ngl 5");
    // With neither given, both are the same choice.
    auto d = run(tiny(), fit_inputs(10000000));
    CHECK(d.fit_default.flags == d.fit.flags);
    CHECK(d.fit_default.log_lines == d.fit.log_lines);
}

TEST_CASE("--fit on a Mac: Metal's free memory is the whole wired limit") {
    // recommendedMaxWorkingSetSize of a 16 GiB Mac, 2/3 of its RAM: 11,453,246,122 bytes.
    BudgetInputs in = fit_inputs(0);
    in.gpu_memory_bytes = 0;
    in.gpu = "m4-16gb";
    in.overhead_bytes = -1;  // the runtime estimate stays out of Metal's free memory
    auto r = run(tiny(), in);
    CHECK(r.fit.free_bytes == 11453246122);
    CHECK(r.fit.outcome == "unchanged");
    in.gpu = "rtx-4090";  // a discrete GPU's free memory is what the CUDA context leaves
    auto d = run(tiny(), in);
    CHECK(d.fit.free_bytes == d.requested_bytes - 512 * MiB);
}

TEST_CASE("--fit lines as public llama-server logs print them") {
    using budget_steps::FitArgs;
    // Build 8586 (64ac9ab66), RTX 4070, Qwen3.5-27B.Q4_K_S, -c 131072 -ngl 26 (bytes chosen
    // within the printed MiB): "projected to use 11138 MiB ... vs. 10372 MiB", "need to reduce
    // device memory by 1790 MiB", "context size set by user", "n_gpu_layers already set".
    FitArgs a;
    a.free_bytes = 10372 * MiB + 100;
    a.target_bytes = 1024 * MiB;
    a.n_ctx_user = 131072;
    a.n_ctx_train = 262144;
    a.n_ctx_min = 4096;
    a.ngl_user = 26;
    a.n_layer = 64;
    auto f = budget_steps::llamacpp_fit(a, [](int64_t, int64_t) { return 11138 * MiB + 900000; });
    CHECK(f.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected to use 11138 MiB of device memory vs. 10372 MiB of free device "
              "memory",
              "common_params_fit_impl: cannot meet free memory target of 1024 MiB, need to reduce device memory by "
              "1790 MiB",
              "common_params_fit_impl: context size set by user to 131072 -> no change",
              "common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 26, "
              "abort"});
    // Build 8477 (ec2b787eb), Vulkan0 Radeon GFX1201, Qwen3.5-27B-UD-Q5_K_XL, -fitt 400:
    // "projected to use 35754 MiB ... vs. 30733 MiB", "need to reduce device memory by 5420
    // MiB", "context size reduced from 262144 to 177152 -> need 5421 MiB less memory in
    // total". Linear use of 66,884 bytes per cell reproduces all three.
    FitArgs v;
    v.free_bytes = 30733 * MiB + 943718;
    v.target_bytes = 400 * MiB;
    v.n_ctx_train = 262144;
    v.n_ctx_min = 4096;
    v.n_layer = 64;
    const int64_t full = 35754 * MiB + 524288;
    auto g = budget_steps::llamacpp_fit(v, [&](int64_t n_ctx, int64_t) { return full - (262144 - n_ctx) * 66884; });
    CHECK(g.outcome == "context");
    CHECK(g.n_ctx == 177152);
    CHECK(g.log_lines ==
          std::vector<std::string>{
              "common_params_fit_impl: projected to use 35754 MiB of device memory vs. 30733 MiB of free device "
              "memory",
              "common_params_fit_impl: cannot meet free memory target of 400 MiB, need to reduce device memory by "
              "5420 MiB",
              "common_params_fit_impl: context size reduced from 262144 to 177152 -> need 5421 MiB less memory in "
              "total",
              "common_params_fit_impl: entire model can be fit by reducing context",
              "common_fit_params: successfully fit params to free device memory"});
}

TEST_CASE("decode bound with layers on the CPU: GPU bytes at GPU bandwidth, then CPU bytes at RAM bandwidth") {
    // -ngl 2 on a 1,000 GB/s GPU: the GPU reads the output layer and one layer (1,707,008
    // bytes) and that layer's KV; the CPU reads 3 layers (3,545,088; token_embd is one row
    // per token) and their KV at 100 GB/s.
    BudgetInputs in = inputs(2);
    in.gpu_memory_bytes = 0;
    in.gpu = "rtx-4090";
    in.ram_bandwidth_bytes_per_s = 100e9;
    auto r = run(tiny(), in);
    const DecodeBound& d = r.decode;
    CHECK(r.offload.cpu_read_weights_bytes == 3 * kLayer);
    CHECK(d.weight_bytes_per_token == kLayer + kOutNorm + kOut);
    CHECK(d.cpu_weight_bytes_per_token == 3 * kLayer);
    CHECK(d.kv_bytes_per_token + d.cpu_kv_bytes_per_token == 4 * 4096 * kCell);
    CHECK(d.cpu_kv_bytes_per_token == 3 * 4096 * kCell);
    CHECK(d.ram_bandwidth_bytes_per_s == 100e9);
    CHECK_FALSE(d.ram_bandwidth_assumed);
    const double bw = d.bandwidth_bytes_per_s;
    const double t =
        double(kLayer + kOutNorm + kOut + 4096 * kCell) / bw + double(3 * kLayer + 3 * 4096 * kCell) / 100e9;
    CHECK(d.tokens_per_s_single == doctest::Approx(1.0 / t));
    // Without --ram-bandwidth: dual-channel DDR5-5600, said to be an assumption.
    in.ram_bandwidth_bytes_per_s = 0;
    auto a = run(tiny(), in);
    CHECK(a.decode.ram_bandwidth_bytes_per_s == 89.6e9);
    CHECK(a.decode.ram_bandwidth_assumed);
    CHECK(a.decode.tokens_per_s_single < r.decode.tokens_per_s_single);
    // Every layer on the GPU: nothing read from RAM, the bound as before.
    auto all = run(tiny(), inputs(-1, 64 * MiB));
    CHECK(all.decode.ram_bandwidth_bytes_per_s == 0);
    CHECK(all.decode.cpu_weight_bytes_per_token == 0);
}

// With no -ngl, --fit's own placement is what the decode step reads from: the layers (a MoE: the routed experts) it
// left in system RAM come at RAM bandwidth, exactly as the same placement asked for with -ngl.
TEST_CASE("decode bound under --fit's placement: what it left in system RAM is read from system RAM") {
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 8192;
    const ModelSpec& llama = fixture("meta-llama/Llama-3.1-70B");
    auto fit = compute_budget(llama, in);
    REQUIRE(fit.ok());
    REQUIRE(fit->fit.outcome == "layers");
    CHECK(fit->fit.n_gpu_layers == 42);
    in.n_gpu_layers = 42;
    auto asked = compute_budget(llama, in);
    REQUIRE(asked.ok());
    const DecodeBound &d = fit->decode, &e = asked->decode;
    CHECK(d.cpu_weight_bytes_per_token == e.cpu_weight_bytes_per_token);
    CHECK(d.cpu_weight_bytes_per_token == 19985727488);
    CHECK(d.weight_bytes_per_token == e.weight_bytes_per_token);
    CHECK(d.cpu_kv_bytes_per_token == e.cpu_kv_bytes_per_token);
    CHECK(d.ram_bandwidth_bytes_per_s == 89.6e9);
    CHECK(d.tokens_per_s_single == doctest::Approx(3.8346).epsilon(1e-4));

    // GLM-4.5-Air: --fit keeps every layer on the GPU and the routed experts of 37 in system RAM. A step reads 8 of
    // their 128 experts, so the RAM's share is the routed share of those bytes, and the two sides add up to the
    // active weights.
    in.n_gpu_layers = -1;
    in.context = 32768;
    auto glm = compute_budget(fixture("zai-org/GLM-4.5-Air"), in);
    REQUIRE(glm.ok());
    REQUIRE(glm->fit.outcome == "layers");
    CHECK(glm->fit.overflow_layers == 38);
    const DecodeBound& g = glm->decode;
    CHECK(g.cpu_weight_bytes_per_token == 3319252992);
    CHECK(g.weight_bytes_per_token + g.cpu_weight_bytes_per_token == glm->weights.active_bytes);
    CHECK(g.cpu_kv_bytes_per_token == 0);
    CHECK(g.tokens_per_s_single == doctest::Approx(20.831).epsilon(1e-4));
}

TEST_CASE("CLI: --fit-target / --fit-ctx / --ram-bandwidth, and the lines budget prints") {
    const std::string cfg = std::string(KVB_FIXTURES) + "/configs/meta-llama--Llama-3.1-8B.json";
    // 8 GiB, no -c: 4.6 GiB of Q4_K_M weights on the GPU plus 128 KiB of KV per token; from
    // 131,072 tokens (21,053 MiB) down to 15,872 (7,680 MiB free, 1,024 kept).
    auto r = kvb::test::run_cli("budget " + cfg + " --engine llamacpp --gpu-memory 8GiB --weights Q4_K_M");
    REQUIRE_MESSAGE(r.status == 0, r.out);
    CHECK(r.out.find("  --fit (default on)    context: -c 15872 -ngl 33 (15,872 tokens x 1, 6.50 GiB of 7.50 GiB "
                     "free, keeps 1.00 GiB)\n"
                     "  llama.cpp: common_params_fit_impl: projected to use 21053 MiB of device memory vs. 7680 MiB of "
                     "free device memory\n") != std::string::npos);
    CHECK(r.out.find("context size reduced from 131072 to 15872 -> need 14400 MiB less memory in total") !=
          std::string::npos);
    // A tighter target and a larger minimum: -fitt 2048 keeps more free, so a smaller context.
    auto t = kvb::test::run_cli("budget " + cfg +
                                " --engine llamacpp --gpu-memory 8GiB --weights Q4_K_M -fitt 2048 -fitc 8192 --json");
    REQUIRE(t.status == 0);
    CHECK(t.out.find("\"fit_target_mb\":2048") != std::string::npos);
    CHECK(t.out.find("\"fit_ctx\":8192") != std::string::npos);
    CHECK(t.out.find("\"target_bytes\":2147483648") != std::string::npos);
    // The CPU's layers at 60 GB/s.
    auto d = kvb::test::run_cli("budget " + cfg +
                                " --engine llamacpp --gpu rtx-4090 --weights Q4_K_M --ngl 20 --max-model-len 8192 "
                                "--ram-bandwidth 60");
    REQUIRE(d.status == 0);
    CHECK(d.out.find("  of which from system RAM: 1.59 GiB of weights + 416.00 MiB of KV per token at 60 GB/s\n") !=
          std::string::npos);
    // llama.cpp's flags only with --engine llamacpp; the bandwidth must be a number.
    auto v = kvb::test::run_cli("budget " + cfg + " --gpu h100 --fit-target 1");
    CHECK(v.status == 2);
    CHECK(v.out ==
          "kvbudget: error: --ngl, --ram, --no-kv-offload, --hf, --fit-target, --fit-ctx and --ram-bandwidth are "
          "llama.cpp's; add --engine llamacpp\n");
    auto x = kvb::test::run_cli("budget " + cfg + " --engine llamacpp --gpu h100 --ram-bandwidth fast");
    CHECK(x.status == 1);
    CHECK(x.out == "kvbudget: error: --ram-bandwidth must be a positive number of GB/s, got 'fast'\n");
    auto big = kvb::test::run_cli("budget " + cfg + " --engine llamacpp --gpu h100 --ram-bandwidth 1e9");
    CHECK(big.status == 1);
    CHECK(big.out == "kvbudget: error: --ram-bandwidth must be between 0 and 100,000 GB/s, got 1e+18 bytes/s\n");
}
