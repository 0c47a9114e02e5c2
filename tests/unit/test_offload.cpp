// llama.cpp partial offload (-ngl) and the Mac's unified memory: which tensors and KV
// cells go to the GPU, what stays in system RAM, the most layers that fit, and what
// Metal lets the GPU wire. Placement rules: llama_model_base::load_tensors in current
// builds (slot n_layer is the output layer, i_gpu_start = n_layer + 1 - ngl: the output
// layer first, then the last ngl - 1 layers; the input layer on the CPU), llama_kv_cache
// (a layer's cells on its layer's device unless --no-kv-offload).
#include <doctest/doctest.h>

#include "base/units.h"
#include "budget/budget.h"
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
    CHECK(r.per_gpu.total_bytes == 11544878129LL);
    REQUIRE(r.notes.back().code == "mac_wired_raise");
    CHECK(render_english(r.notes.back()) ==
          "sudo sysctl iogpu.wired_limit_mb=11011 lets the GPU wire the 10.75 GiB this needs, leaving macOS 5.25 GiB "
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
