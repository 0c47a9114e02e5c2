// StepFun Step-3.7-Flash: its text model (model_type step3p5, nested under Step3p7ForConditionalGeneration's
// text_config) as vLLM reads it (models/step3p5.py, transformers_utils/configs/step3p5.py, v0.27.1): layer kinds,
// per-layer query heads, KV per token, vLLM's KV-cache groups and padding layers at TP 8, weights in bf16 and
// FP8, and refusals of malformed Step fields.
//
// The config is assembled, not a copy: no verbatim copy of the Hub's file was found. ai-dynamo/aiconfigurator's
// stepfun-ai--Step-3.7-Flash_config.json is a flattened, hand-curated view (architecture Step3p7FlashForCausalLM,
// which no engine registers; num_key_value_heads, num_experts, first_k_dense_replace; no attention_other_setting,
// use_head_wise_attn_gate or moe_layers_enum; max_position_embeddings 65,536), as that repository's own commits
// e10f03afe and eadbba403 say, so it is not a fixture. The values below are the published checkpoint's as a test
// of the stepfun-ai/Step-3.7-Flash-NVFP4 snapshot asserts them (code index id 57398570390: text_config model_type
// step3p5, 45 layers, hidden 4096, vocab 128,896, max_position_embeddings 262,144, moe_layers_enum "3,...,44",
// 288 experts top-8 of 1,280, share_expert_dim 1,280, use_head_wise_attn_gate, sliding_window 512, full attention
// on every 4th layer), its Q3_K_L GGUF's header (head_count 96 on sliding layers and 64 on full ones,
// head_count_kv 8, key/value length 128, feed_forward_length 11,264, blk.0.attn_gate 64 x 4096) and
// aiconfigurator's reading of the Hub file (attention_other_setting: sliding_attention, 96 heads, 8 groups, 128).
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engines/vllm.h"
#include "kv/kv.h"
#include "model/dtype.h"
#include "model/model.h"
#include "model/weights.h"

using namespace kvb;

namespace {

nlohmann::json step37_text() {
    nlohmann::json types = nlohmann::json::array();
    for (int i = 0; i < 45; ++i) types.push_back(i % 4 == 0 ? "full_attention" : "sliding_attention");
    std::string moe;
    for (int i = 3; i < 45; ++i) moe += (i > 3 ? "," : "") + std::to_string(i);
    return {{"architectures", {"Step3p5ForCausalLM"}},
            {"model_type", "step3p5"},
            {"hidden_size", 4096},
            {"num_hidden_layers", 45},
            {"vocab_size", 128896},
            {"head_dim", 128},
            {"num_attention_groups", 8},
            {"num_attention_heads", 64},
            {"intermediate_size", 11264},
            {"moe_num_experts", 288},
            {"moe_top_k", 8},
            {"moe_intermediate_size", 1280},
            {"share_expert_dim", 1280},
            {"moe_layers_enum", moe},
            {"use_moe_router_bias", true},
            {"use_head_wise_attn_gate", true},
            {"sliding_window", 512},
            {"attention_other_setting",
             {{"attention_type", "sliding_attention"},
              {"num_attention_heads", 96},
              {"num_attention_groups", 8},
              {"head_dim", 128}}},
            {"layer_types", types},
            {"max_position_embeddings", 262144},
            {"num_nextn_predict_layers", 3},
            {"torch_dtype", "bfloat16"}};
}

nlohmann::json step37(const nlohmann::json& text = step37_text()) {
    return {{"architectures", {"Step3p7ForConditionalGeneration"}}, {"model_type", "step3p7"}, {"text_config", text}};
}

ModelSpec parse(const nlohmann::json& j) {
    auto m = parse_config(j.dump(), "stepfun-ai/Step-3.7-Flash");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
    return m.value();
}

std::string refusal(void (*edit)(nlohmann::json&)) {
    nlohmann::json t = step37_text();
    edit(t);
    auto m = parse_config(step37(t).dump(), "acme/step");
    REQUIRE_FALSE(m.ok());
    return m.error().message;
}

}  // namespace

TEST_CASE("Step-3.7-Flash: 12 full and 33 sliding layers, 8 x 128 KV on both, 96 query heads where it slides") {
    const ModelSpec m = parse(step37());
    CHECK(m.model_type == "step3p5");
    CHECK_FALSE(m.generic);
    CHECK(m.max_position_embeddings == 262144);
    REQUIRE(m.layers.size() == 45);
    for (size_t i = 0; i < m.layers.size(); ++i) {
        const Layer& l = m.layers[i];
        CHECK(l.kind == (i % 4 == 0 ? LayerKind::Full : LayerKind::Sliding));
        CHECK(l.window == (i % 4 == 0 ? 0 : 512));
        CHECK(l.kv_heads == 8);
        CHECK(l.k_head_dim == 128);
        CHECK(l.v_head_dim == 128);
        // attention_other_setting applies where layer_types says its attention_type (Step3p5DecoderLayer).
        CHECK(l.q_heads == (i % 4 == 0 ? 0 : 96));
    }
    CHECK(std::any_of(m.notes.begin(), m.notes.end(), [](const Message& n) { return n.code == "mtp"; }));
    // KV per token, bf16: 12 full layers x 8 x 128 x 2 (K and V) x 2 B grow with the context; the 33 sliding
    // layers hold 512 tokens each.
    const IdealKv kv = ideal_kv(m, uniform_kv_dtypes(m, vllm_auto_kv_type("bfloat16")));
    CHECK(kv.bytes_per_token == 12 * 8 * 128 * 2 * 2);
    CHECK(kv.windowed_bytes_per_token == 33 * 8 * 128 * 2 * 2);
    CHECK(kv_bytes_at(m, uniform_kv_dtypes(m, vllm_auto_kv_type("bfloat16")), 32768, 1).value() ==
          32768LL * 49152 + 512LL * 135168);
}

TEST_CASE("Step-3.7-Flash's layer_types may cover the MTP layers: Step3p5Config cuts it to num_hidden_layers") {
    nlohmann::json t = step37_text();
    for (int i = 0; i < 3; ++i) t["layer_types"].push_back("full_attention");
    const ModelSpec m = parse(step37(t));
    REQUIRE(m.layers.size() == 45);
    CHECK(m.layers[44].kind == LayerKind::Full);
    CHECK(m.layers[43].kind == LayerKind::Sliding);
}

TEST_CASE("Step-3.7-Flash's text model: 196,956,130,368 parameters; bf16 and FP8 (128 x 128 blocks) bytes") {
    const ModelSpec m = parse(step37());
    auto pc = count_params(m);
    REQUIRE(pc.ok());
    // Embedding and its own lm_head (Step3p5ForCausalLM never ties): 2 x 128,896 x 4,096; the final norm.
    const int64_t embed = 2LL * 128896 * 4096 + 4096;
    // Full layers: q 64 x 128, k and v 8 x 128, o, q_norm + k_norm (128 each), g_proj 4,096 -> 64.
    const int64_t full_attn = 2LL * 64 * 128 * 4096 + 2LL * 8 * 128 * 4096 + 256 + 64LL * 4096;
    // Sliding layers: the same with 96 query heads.
    const int64_t swa_attn = 2LL * 96 * 128 * 4096 + 2LL * 8 * 128 * 4096 + 256 + 96LL * 4096;
    // Layers 0-2 a dense MLP of 11,264; layers 3-44 (moe_layers_enum) 288 experts of 1,280, the router and its
    // bias, one shared expert of share_expert_dim.
    const int64_t dense = 3LL * 11264 * 4096;
    const int64_t moe = 288LL * 3 * 1280 * 4096 + 288LL * 4096 + 288 + 3LL * 1280 * 4096;
    const int64_t norms = 2LL * 4096;
    CHECK(pc->total == embed + 12 * full_attn + 33 * swa_attn + 3 * dense + 42 * moe + 45 * norms);
    CHECK(pc->total == 196956130368LL);

    auto bf16 = weight_bytes(m, weight_format("auto", m).value());
    REQUIRE(bf16.ok());
    CHECK(bf16->bytes == 2 * 196956130368LL);

    // FP8 with 128 x 128 blocks (the FP8 checkpoint's quantization_config): every projection 1 B per weight
    // plus an fp32 scale per block (the 64- and 96-row g_proj one block row); embeddings, lm_head, routers and
    // vectors 2 B.
    nlohmann::json fp8 = step37();
    fp8["quantization_config"] = {
        {"quant_method", "fp8"}, {"weight_block_size", {128, 128}}, {"activation_scheme", "dynamic"}};
    const ModelSpec q = parse(fp8);
    auto wq = weight_bytes(q, weight_format("auto", q).value());
    REQUIRE(wq.ok());
    CHECK(wq->bytes == 198109804800LL);
}

TEST_CASE("Step-3.7-Flash in vLLM at TP 8: one KV head per rank, groups of 12 layers, 3 padding layers") {
    const ModelSpec m = parse(step37());
    VllmOptions o;
    o.tensor_parallel_size = 8;
    o.max_model_len = 32768;
    auto l = vllm_layout(m, o);
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? "" : l.error().message));
    // Full and sliding pages are alike (16 tokens x 1 head x 128 x 2 x 2 B), so kv_cache_utils groups by layer
    // count: the smaller set (12 full) sets the group size, 33 sliding layers fill 3 groups with 3 padding layers
    // (3 / 33 = 9.09%), whatever the TP.
    CHECK(l->groups.size() == 4);
    CHECK(l->group_size == 12);
    CHECK(l->page_size_bytes == 16 * 1 * 128 * 2 * 2);
    CHECK(l->padding_layers == 3);
    CHECK(std::find(l->warnings.begin(), l->warnings.end(),
                    "Add 3 padding layers, may waste at most 9.09% KV cache memory") != l->warnings.end());
}

TEST_CASE("Step fields that cannot be read are refused with the field named") {
    CHECK(refusal([](nlohmann::json& t) { t["moe_layers_enum"] = "3,4,45"; }) ==
          "acme/step: moe_layers_enum = 45 is out of range (0 to 44)");
    CHECK(refusal([](nlohmann::json& t) { t["moe_layers_enum"] = "3,x"; }) ==
          "acme/step: moe_layers_enum must be an integer, got x");
    CHECK(refusal([](nlohmann::json& t) { t["attention_other_setting"] = 96; }) ==
          "acme/step: attention_other_setting must be an object, got a number");
    CHECK(refusal([](nlohmann::json& t) { t["layer_types"].erase(t["layer_types"].begin()); }).find("layer_types") !=
          std::string::npos);
}
