// transformers' DynamicCache: MLA decompressed per head, sliding layers keep
// window - 1 tokens, hybrid caches keep conv (kernel-wide) and f32 recurrent state.
#include <doctest/doctest.h>

#include "base/units.h"
#include "engines/transformers_cache.h"
#include "fixtures.h"

using namespace kvb;
using kvb::test::fixture;

TEST_CASE("DeepSeek-V2 (60 MLA layers) is cached decompressed: 4,915,200 B/token") {
    ModelSpec m = kvb::test::mla("DeepSeek-V2 (hand-built)", 60, 128);
    auto c = transformers_cache(m);
    REQUIRE(c.ok());
    CHECK(c->bytes_per_token == 4915200);
    CHECK(transformers_cache_bytes(m, 1000, 2).value() == int64_t(4915200) * 2000);
    // The fixture DeepSeek-V3 parses to the same per-layer view (61 layers).
    CHECK(transformers_cache(fixture("deepseek-ai/DeepSeek-V3"))->bytes_per_token == 61 * 81920);
}

TEST_CASE("dense models: K and V per KV head, in the model's dtype") {
    CHECK(transformers_cache(fixture("meta-llama/Llama-3.1-8B"))->bytes_per_token == 131072);
    CHECK(transformers_cache(fixture("Qwen/Qwen3-8B"))->bytes_per_token == 147456);
    CHECK(transformers_cache(fixture("Qwen/Qwen3-8B"), "float32")->bytes_per_token == 2 * 147456);
    CHECK(transformers_cache_bytes(fixture("Qwen/Qwen3-8B"), 40960, 1).value() == int64_t(40960) * 147456);
}

TEST_CASE("sliding layers keep sliding_window - 1 tokens (DynamicSlidingWindowLayer)") {
    ModelSpec m = fixture("google/gemma-3-1b-it");  // 22 sliding (512) + 4 full, 1 KV head x 256, bf16
    auto c = transformers_cache(m);
    CHECK(c->bytes_per_token == 4 * 1024);
    CHECK(c->windowed_bytes_per_token == 22 * 1024);
    CHECK(transformers_cache_bytes(m, 100, 1).value() == 26 * 1024 * 100);
    CHECK(transformers_cache_bytes(m, 8192, 1).value() == int64_t(4) * 1024 * 8192 + int64_t(22) * 1024 * 511);
}

TEST_CASE("Qwen3-Next: conv state kernel-wide in bf16, recurrent state in f32") {
    ModelSpec m = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    auto c = transformers_cache(m);
    CHECK(c->state_layers == 36);
    CHECK(c->state_bytes == 36 * (4 * 8192 * 2 + int64_t(128) * 4096 * 4));
    CHECK(c->bytes_per_token == 12 * 2 * 2 * 256 * 2);
}

TEST_CASE("transformers cache refuses bad input") {
    ModelSpec m = fixture("Qwen/Qwen3-8B");
    CHECK_FALSE(transformers_cache(m, "float12").ok());
    CHECK_FALSE(transformers_cache_bytes(m, -1, 1).ok());
    auto big = transformers_cache_bytes(m, int64_t(1) << 40, int64_t(1) << 20);
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().code == "overflow");
    CHECK(transformers_cache_bytes(m, 1000000, 10000).value() == int64_t(147456) * 1000000 * 10000);
}
