// Ideal KV (no engine rounding): the seed articles' numbers.
#include <doctest/doctest.h>

#include "base/units.h"
#include "fixtures.h"
#include "kv/kv.h"

using namespace kvb;
using kvb::test::fixture;

namespace {
KvDtypes vllm(const ModelSpec& m, const std::string& t = "auto") {
    return uniform_kv_dtypes(m, vllm_kv_type(t, m.dtype).value());
}
KvDtypes llamacpp(const ModelSpec& m, const std::string& t) {
    KvDtypes d = uniform_kv_dtypes(m, llamacpp_kv_type(t).value());
    d.conv_state_bytes = d.ssm_state_bytes = 4;
    return d;
}
}  // namespace

TEST_CASE("Llama-3.1-8B: 128 KiB per token, 16 GiB at 131,072 tokens, MHA 512 KiB") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    CHECK(ideal_kv(m, vllm(m)).bytes_per_token == 131072);
    CHECK(kv_bytes_at(m, vllm(m), 131072, 1).value() == 16 * GiB);
    CHECK(ideal_kv(with_kv_heads(m, 0), vllm(m)).bytes_per_token == 512 * KiB);
    CHECK(ideal_kv(m, vllm(m, "fp8")).bytes_per_token == 65536);
    CHECK(ideal_kv(m, llamacpp(m, "q8_0")).bytes_per_token == 69632);
    CHECK(ideal_kv(m, llamacpp(m, "q5_1")).bytes_per_token == 49152);
    CHECK(ideal_kv(m, llamacpp(m, "q5_0")).bytes_per_token == 45056);
    CHECK(ideal_kv(m, llamacpp(m, "q4_1")).bytes_per_token == 40960);
    CHECK(ideal_kv(m, llamacpp(m, "q4_0")).bytes_per_token == 36864);
    CHECK(ideal_kv(m, llamacpp(m, "iq4_nl")).bytes_per_token == 36864);
}

TEST_CASE("Qwen3-8B: 147,456 B per token and the seed article's context table") {
    ModelSpec m = fixture("Qwen/Qwen3-8B");
    KvDtypes d = vllm(m);
    CHECK(ideal_kv(m, d).bytes_per_token == 147456);
    CHECK(format_bytes(kv_bytes_at(m, d, 1024, 1).value()) == "144.00 MiB");
    CHECK(format_bytes(kv_bytes_at(m, d, 8192, 1).value()) == "1.13 GiB");
    CHECK(format_bytes(kv_bytes_at(m, d, 32768, 1).value()) == "4.50 GiB");
    CHECK(format_bytes(kv_bytes_at(m, d, 40960, 1).value()) == "5.63 GiB");
    CHECK(ideal_kv(with_kv_heads(m, 0), d).bytes_per_token == 576 * KiB);
    CHECK(ideal_kv(with_kv_heads(m, 1), d).bytes_per_token == 18 * KiB);
    CHECK(ideal_kv(m, vllm(m, "fp8")).bytes_per_token == 147456 / 2);
    CHECK(ideal_kv(m, llamacpp(m, "q8_0")).bytes_per_token == 78336);
    CHECK(ideal_kv(m, llamacpp(m, "q4_0")).bytes_per_token == 41472);
}

TEST_CASE("Qwen3.5-9B geometry (32 layers, full attention every 4th, 4 KV heads x 256): 32 KiB per token") {
    // The 9B's published shape, written out here as a synthetic config; the real
    // Qwen3.5-27B file is checked below with its own numbers.
    std::string layer_types;
    for (int i = 0; i < 32; ++i)
        layer_types += std::string(i ? "," : "") + ((i + 1) % 4 ? "\"linear_attention\"" : "\"full_attention\"");
    auto m = parse_config(R"({"model_type":"qwen3_5","text_config":{"model_type":"qwen3_5_text","num_hidden_layers":32,
        "num_attention_heads":16,"num_key_value_heads":4,"head_dim":256,"hidden_size":4096,"full_attention_interval":4,
        "linear_conv_kernel_dim":4,"linear_key_head_dim":128,"linear_num_key_heads":16,"linear_value_head_dim":128,
        "linear_num_value_heads":32,"mamba_ssm_dtype":"float32","dtype":"bfloat16","layer_types":[)" +
                              layer_types + "]}}",
                          "Qwen/Qwen3.5-9B (shape)");
    REQUIRE(m);
    CHECK(ideal_kv(m.value(), vllm(m.value())).bytes_per_token == 32 * KiB);
    CHECK(ideal_kv(m.value(), vllm(m.value(), "fp8")).bytes_per_token == 16 * KiB);
}

TEST_CASE("Qwen3.5-27B: attention part and fixed state apart") {
    ModelSpec m = fixture("Qwen/Qwen3.5-27B");
    IdealKv kv = ideal_kv(m, vllm(m));
    CHECK(kv.bytes_per_token == 16 * 2 * 4 * 256 * 2);  // 65,536
    // Per linear layer: conv (4-1) x (2*16*128 + 48*128) bf16 + ssm 48*128*128 float32.
    int64_t per_layer = 3 * (2 * 16 * 128 + 48 * 128) * 2 + 48 * 128 * 128 * 4;
    CHECK(per_layer == 3'207'168);
    CHECK(kv.state_bytes_per_seq == 48 * per_layer);
}

TEST_CASE("Qwen3-Next state sizes: bf16 1,097,728 B per layer in vLLM, 98,304 + 2,097,152 in llama.cpp (f32)") {
    ModelSpec m = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    CHECK(layer_state_bytes(m.layers[0], vllm(m)) == 1'097'728);
    const auto& s = m.layers[0].state;
    CHECK(s.conv_elems() * 4 == 98'304);
    CHECK(s.ssm_elems() * 4 == 2'097'152);
    CHECK(ideal_kv(m, llamacpp(m, "f16")).state_bytes_per_seq == 36 * (98'304 + 2'097'152));
    CHECK(ideal_kv(m, vllm(m)).bytes_per_token == 24576);
}

TEST_CASE("MLA caches one latent row per layer: DeepSeek 576 values, the V2 shape gives 69,120 B/token") {
    ModelSpec v3 = fixture("deepseek-ai/DeepSeek-V3");
    CHECK(ideal_kv(v3, vllm(v3)).bytes_per_token == 61 * 576 * 2);
    // DeepSeek-V2 has the same attention with 60 layers.
    ModelSpec v2 = v3;
    v2.layers.resize(60);
    CHECK(ideal_kv(v2, vllm(v2)).bytes_per_token == 69120);
    CHECK(ideal_kv(v2, vllm(v2, "fp8")).bytes_per_token == 34560);
    CHECK(ideal_kv(v2, llamacpp(v2, "q8_0")).bytes_per_token == 36720);
}

TEST_CASE("sliding and chunked layers stop growing at the window") {
    ModelSpec m = fixture("openai/gpt-oss-20b");
    KvDtypes d = vllm(m);
    IdealKv kv = ideal_kv(m, d);
    CHECK(kv.bytes_per_token == 12 * 2048);
    CHECK(kv.windowed_bytes_per_token == 12 * 2048);
    CHECK(kv_bytes_at(m, d, 100, 1).value() == 24 * 2048 * 100);
    CHECK(kv_bytes_at(m, d, 10000, 1).value() == 12 * 2048 * 10000 + 12 * 2048 * 128);

    ModelSpec mistral = fixture("mistralai/Mistral-7B-v0.1");
    CHECK(ideal_kv(mistral, vllm(mistral)).bytes_per_token == 0);  // nothing grows past the window
    CHECK(kv_bytes_at(mistral, vllm(mistral), 32768, 1).value() == 4096 * int64_t(131072));
}

TEST_CASE("bytes at a context and a sequence count are exact in 64-bit, and overflow is an error") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    // 1M context x 10k sequences x 128 KiB = 1.31e18 B: fits in int64 exactly.
    CHECK(kv_bytes_at(m, vllm(m), 1'000'000, 10'000).value() == int64_t(131072) * 1'000'000 * 10'000);
    auto over = kv_bytes_at(m, vllm(m), int64_t(1) << 40, 1'000'000);
    REQUIRE_FALSE(over);
    CHECK(over.error().message ==
          "meta-llama/Llama-3.1-8B: KV cache for 1,000,000 sequences of 1,099,511,627,776 tokens exceeds 8 EiB");
}

TEST_CASE("crossover: the context at which KV overtakes the weights") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    int64_t weights = 16'060'522'496;  // 8,030,261,248 params in bf16
    int64_t c = crossover_context(m, vllm(m), weights, 1);
    CHECK(c == weights / 131072 + 1);
    CHECK(crossover_context(m, vllm(m), weights, 4) == (weights / 131072) / 4 + 1);
    ModelSpec mistral = fixture("mistralai/Mistral-7B-v0.1");
    CHECK(crossover_context(mistral, vllm(mistral), weights, 1) == 0);  // window-bounded: never
}

TEST_CASE("Nemotron-3-Ultra and 3.5-Lightning (layers_block_type configs): attention bytes and Mamba-2 state") {
    // Ultra: 12 attention layers x 2 KV heads x 128 x 2 (K, V) x 2 B = 12,288 B/token; 48 Mamba-2 layers, each
    // conv (4 - 1) x (256 x 64 + 2 x 8 x 128) bf16 + ssm 256 x 64 x 128 float32 (mamba_ssm_cache_dtype).
    ModelSpec ultra = fixture("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16");
    IdealKv u = ideal_kv(ultra, vllm(ultra));
    CHECK(u.bytes_per_token == 12'288);
    CHECK(3 * 18'432 * 2 + 256 * 64 * 128 * 4 == 8'499'200);
    CHECK(u.state_bytes_per_seq == 48 * 8'499'200);
    // Lightning: 6 attention layers, 23 Mamba-2 layers of 64 heads x 64.
    ModelSpec light = fixture("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4");
    IdealKv l = ideal_kv(light, vllm(light));
    CHECK(l.bytes_per_token == 6 * 1024);
    CHECK(l.state_bytes_per_seq == 23 * (3 * (4096 + 2 * 8 * 128) * 2 + 64 * 64 * 128 * 4));  // 23 x 2,134,016
}

TEST_CASE("LFM2.5-VL-1.6B (LFM2-1.2B text model): 12,288 B/token of attention, 10 x 8,192 B of conv state") {
    ModelSpec m = fixture("LiquidAI/LFM2.5-VL-1.6B");
    IdealKv v = ideal_kv(m, vllm(m));
    CHECK(v.bytes_per_token == 6 * 2 * 8 * 64 * 2);           // 12,288
    CHECK(v.state_bytes_per_seq == 10 * (3 - 1) * 2048 * 2);  // conv state in the model dtype: 81,920
    IdealKv l = ideal_kv(m, llamacpp(m, "f16"));
    CHECK(l.state_bytes_per_seq == 10 * (3 - 1) * 2048 * 4);  // llama.cpp's r_l in f32, s_l empty: 163,840
}
