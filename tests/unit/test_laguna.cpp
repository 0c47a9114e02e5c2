// poolside Laguna (model_type laguna) from config.json, as vLLM's models/laguna.py builds it (LagunaDecoderLayer,
// LagunaAttention, LagunaMoE, LagunaMLP): each layer's query heads from num_attention_heads_per_layer, a dense MLP
// where mlp_layer_types says "dense", the per-head output gate g_proj (gating), q_norm / k_norm over head_dim, a
// shared expert, and each MoE layer's e_score_correction_bias. The fixture is poolside/Laguna-XS.2-FP8
// (tests/fixtures/configs/SOURCES.md); the totals below are summed by hand from its shapes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "budget/budget.h"
#include "fixtures.h"
#include "model/model.h"
#include "model/weights.h"

using namespace kvb;
using kvb::test::fixture;
using kvb::test::fixture_text;

namespace {

const char* const kId = "poolside/Laguna-XS.2-FP8";

// The fixture with one field replaced.
Result<ModelSpec> with(const char* key, const nlohmann::json& value) {
    nlohmann::json j = nlohmann::json::parse(fixture_text(kId));
    j[key] = value;
    return parse_config(j.dump(), kId);
}

}  // namespace

TEST_CASE("Laguna-XS.2: a known type, 48 query heads on the full layers and 64 on the sliding ones") {
    const ModelSpec m = fixture(kId);
    CHECK_FALSE(m.generic);
    REQUIRE(m.layers.size() == 40);
    for (size_t i = 0; i < m.layers.size(); ++i) {
        CAPTURE(i);
        const bool full = i % 4 == 0;
        CHECK(m.layers[i].kind == (full ? LayerKind::Full : LayerKind::Sliding));
        CHECK(m.layers[i].q_heads == (full ? 48 : 64));
        CHECK(m.layers[i].kv_heads == 8);  // the KV heads stay num_key_value_heads on every layer
    }
    CHECK(m.dims.attn_gate == 1);  // gating: true, one gate a head
    REQUIRE(m.dims.layer_mlp.size() == 40);
    CHECK(m.dims.layer_mlp[0] == 1);  // mlp_layer_types[0] "dense"
    CHECK(m.dims.layer_mlp[1] == 2);
}

TEST_CASE("Laguna-XS.2: 33,442,617,088 parameters, 35,312,980,736 bytes as its fp8 blocks") {
    // Attention, hidden 2,048, head_dim 128: q and o at the layer's heads, k and v at 8, g_proj 2,048 -> heads.
    //   full (10):    2 x 2,048 x 6,144 + 2 x 2,048 x 1,024 + 2,048 x 48 = 29,458,432
    //   sliding (30): 2 x 2,048 x 8,192 + 2 x 2,048 x 1,024 + 2,048 x 64 = 37,879,808
    // MLP: layer 0 dense, 3 x 2,048 x 8,192 = 50,331,648; layers 1-39 256 experts and a shared one of 3 x 2,048 x
    // 512, the router 256 x 2,048 and its 256 biases: 808,976,640 each.
    // Norms: 2 x 2,048 + q_norm and k_norm 2 x 128 a layer; the final norm; embed_tokens and lm_head 100,352 x 2,048.
    const int64_t attn = 10 * 29458432LL + 30 * 37879808LL;
    const int64_t mlp = 50331648LL + 39 * 808976640LL;
    const int64_t rest = 40 * (2 * 2048 + 2 * 128) + 2048 + 2 * 100352LL * 2048;
    const ModelSpec m = fixture(kId);
    auto pc = count_params(m);
    REQUIRE(pc.ok());
    CHECK(pc->total == attn + mlp + rest);
    CHECK(pc->total == 33442617088LL);
    // The checkpoint: every attention projection (g_proj too), the router, the norms, the embeddings and the
    // lm_head in bf16 (its ignore list); the dense MLP and the experts fp8 with an fp32 scale per 128 x 128 block
    // (a 2,048 x 512 matrix: 64 blocks; a 2,048 x 8,192 one: 1,024).
    const int64_t fp8 = 39 * 257 * 3 * 2048 * 512LL + 3 * 2048 * 8192LL;
    const int64_t scales = (39 * 257 * 3 * 64 + 3 * 1024) * 4LL;
    const int64_t bf16 = (pc->total - fp8) * 2;
    auto f = weight_format("auto", m);
    REQUIRE(f.ok());
    auto b = weight_bytes(m, f.value());
    REQUIRE(b.ok());
    CHECK(b->bytes == bf16 + fp8 + scales);
    CHECK(b->bytes == 35312980736LL);
}

TEST_CASE("Laguna: gating per element, per head or off, and its lists checked against the layers") {
    // "per-element": g_proj is 2,048 -> heads x 128, not 2,048 -> heads.
    auto per_element = with("gating", "per-element");
    REQUIRE(per_element.ok());
    CHECK(per_element->dims.attn_gate == 2);
    auto base = count_params(fixture(kId));
    auto wide = count_params(per_element.value());
    REQUIRE(base.ok());
    REQUIRE(wide.ok());
    CHECK(wide->total - base->total == 2048LL * (10 * 48 * 127 + 30 * 64 * 127));
    // swa_attention_sink_enabled: one sink logit a query head on each sliding layer (LagunaAttention's sink).
    auto sinks = with("swa_attention_sink_enabled", true);
    REQUIRE(sinks.ok());
    CHECK(count_params(sinks.value())->total - base->total == 30 * 64);
    auto off = with("gating", false);
    REQUIRE(off.ok());
    CHECK(off->dims.attn_gate == 0);
    CHECK(with("gating", "per-head")->dims.attn_gate == 1);
    auto bad = with("gating", "per-token");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message ==
          "poolside/Laguna-XS.2-FP8: gating is 'per-token' (expected one of: true, false, per-head, per-element)");
    auto short_heads = with("num_attention_heads_per_layer", nlohmann::json::array({48, 64}));
    REQUIRE_FALSE(short_heads.ok());
    CHECK(short_heads.error().detail.code == "length_mismatch");
    auto bad_mlp = with("mlp_layer_types", nlohmann::json(std::vector<std::string>(40, "moe")));
    REQUIRE_FALSE(bad_mlp.ok());
    CHECK(bad_mlp.error().message ==
          "poolside/Laguna-XS.2-FP8: mlp_layer_types[0] is 'moe', which is not a known layer type");
}

TEST_CASE("Laguna-XS.2 under vLLM: TP 24 passes the config's head check, not the layers'") {
    // vLLM checks num_attention_heads (48) against the TP size, then each LagunaAttention asserts its own heads
    // divide it: 48 and 64 at TP 16 (refused there for its fp8 blocks instead), but 64 not at TP 24, whose 8 KV
    // heads are replicated evenly. vLLM itself stops a step earlier, at layer 0's dense MLP (8,192 is not divisible
    // by 24), a check kvbudget does not make; the refusal named is the heads'.
    BudgetInputs in;
    in.gpu = "h100";
    in.gpu_count = 16;
    in.tensor_parallel_size = 16;
    auto tp16 = compute_budget(fixture(kId), in);
    REQUIRE(tp16.ok());
    CHECK(tp16->verdict_reason.code == "vllm_fp8_block_n");
    in.gpu_count = 24;
    in.tensor_parallel_size = 24;
    auto refused = compute_budget(fixture(kId), in);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().detail.code == "vllm_tp_layer_heads");
    CHECK(refused.error().message ==
          "AssertionError in the model's attention: a layer's 64 query heads (num_attention_heads_per_layer) are not "
          "divisible by tensor parallel size (24)");
}

TEST_CASE("Laguna-XS.2 under vLLM: the score correction bias in float32, 39 MoE layers of 256") {
    BudgetInputs in;
    in.gpu = "h100";
    auto b = compute_budget(fixture(kId), in);
    REQUIRE(b.ok());
    std::string bias;
    for (const Message& n : b->notes)
        if (n.code == "vllm_fp32_score_bias") bias = n.param("bytes");
    CHECK(bias == "19.50 KiB");  // 39 x 256 x 2 B
}

// poolside/Laguna-S-2.1-FP8 says the same things another way: mlp_only_layers [0] with decoder_sparse_step 1 instead of
// mlp_layer_types, gating "per-head", 48 query heads on its 12 full layers and 72 on its 36 sliding ones (hidden
// 3,072), 256 experts of 1,024 and a shared one; its ignore list keeps layer 0's dense MLP and the shared experts in
// bf16 too, so only the routed experts are fp8.
TEST_CASE("Laguna-S-2.1: 117,561,977,600 parameters, 121,603,479,040 bytes with only the routed experts fp8") {
    const ModelSpec m = fixture("poolside/Laguna-S-2.1-FP8");
    CHECK_FALSE(m.generic);
    REQUIRE(m.layers.size() == 48);
    CHECK(m.layers[0].q_heads == 48);
    CHECK(m.layers[1].q_heads == 72);
    CHECK(m.dims.attn_gate == 1);
    CHECK(m.dims.layer_mlp[0] == 1);
    CHECK(m.dims.layer_mlp[47] == 2);
    // full: 2 x 3,072 x 6,144 + 2 x 3,072 x 1,024 + 3,072 x 48; sliding: 2 x 3,072 x 9,216 + ... + 3,072 x 72.
    const int64_t attn = 12 * 44187648LL + 36 * 63135744LL;
    // 47 MoE layers: 257 experts of 3 x 3,072 x 1,024, the router and its biases; layer 0: 3 x 3,072 x 12,288.
    const int64_t routed = 47 * 256 * 3 * 3072 * 1024LL;
    const int64_t mlp = routed + 47 * (3 * 3072 * 1024LL + 256 * 3072 + 256) + 3 * 3072 * 12288LL;
    const int64_t rest = 48 * (2 * 3072 + 2 * 128) + 3072 + 2 * 100352LL * 3072;
    auto pc = count_params(m);
    REQUIRE(pc.ok());
    CHECK(pc->total == attn + mlp + rest);
    CHECK(pc->total == 117561977600LL);
    auto f = weight_format("auto", m);
    REQUIRE(f.ok());
    auto b = weight_bytes(m, f.value());
    REQUIRE(b.ok());
    // A 3,072 x 1,024 matrix holds 24 x 8 blocks of 128 x 128, one fp32 scale each.
    CHECK(b->bytes == routed + 47 * 256 * 3 * 192 * 4LL + (pc->total - routed) * 2);
    CHECK(b->bytes == 121603479040LL);
}
