// GLM-5 / GLM-5.2 (model_type glm_moe_dsa) and DeepSeek-V3.2 (deepseek_v32): DeepSeek sparse attention's
// lightning indexer in the parameter count, and glm_moe_dsa read as a known type. The expected totals are the
// Hub's safetensors counts (huggingface.co/api/models/zai-org/GLM-5: {"BF16": 753864119552}; GLM-5.2: 753.33 B,
// as quoted in a public model survey in the code index, id 58825361617), which include the MTP layer our count
// leaves out (docs/budget-model.md, "DeepSeek MTP is not counted"). Those are the bf16 tensors only: each MoE
// layer's e_score_correction_bias (noaux_tc routing; vLLM's deepseek_v2.py loads it, and without it the router
// would read uninitialised memory) is a float32 buffer in transformers' router, so it is saved as F32, outside
// that count: 256 a layer, 75 MoE layers and the MTP layer's.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "model/model.h"
#include "model/weights.h"

using namespace kvb;
using kvb::test::fixture;
using kvb::test::fixture_text;

namespace {

int64_t total(const ModelSpec& m) {
    auto pc = count_params(m);
    REQUIRE_MESSAGE(pc.ok(), (pc.ok() ? "" : pc.error().message));
    return pc->total;
}

// The checkpoint's MTP layer (layer num_hidden_layers): one more decoder layer of the trunk's kind (its MoE and,
// under vLLM's rule, a full indexer: deepseek_v2.py builds one on every MTP layer), plus eh_proj (2h -> h) and
// the enorm, hnorm and shared_head_norm vectors.
int64_t with_mtp_layer(const std::string& id) {
    nlohmann::json j = nlohmann::json::parse(fixture_text(id));
    const int64_t h = j["hidden_size"].get<int64_t>();
    j["num_hidden_layers"] = j["num_hidden_layers"].get<int64_t>() + 1;
    auto m = parse_config(j.dump(), id);
    REQUIRE(m.ok());
    return total(m.value()) + h * 2 * h + 3 * h;
}

// The tensors of decoder layer `li` with these dimensions.
std::vector<size_t> tensors_at(const ParamCount& pc, int li, int64_t rows, int64_t cols) {
    std::vector<size_t> out;
    for (size_t i = 0; i < pc.tensors.size(); ++i)
        if (pc.tensors[i].layer == li && pc.tensors[i].rows == rows && pc.tensors[i].cols == cols) out.push_back(i);
    return out;
}

}  // namespace

TEST_CASE("glm_moe_dsa is a known type: GLM-5 is read fully, without the generic-fields flag") {
    for (const char* id : {"zai-org/GLM-5", "zai-org/GLM-5.2"}) {
        const ModelSpec m = fixture(id);
        CHECK_FALSE(m.generic);
        CHECK(std::none_of(m.notes.begin(), m.notes.end(), [](const Message& n) { return n.code == "generic"; }));
    }
}

TEST_CASE("GLM-5: every layer's DSA indexer is counted; with the MTP layer the count is the Hub's total") {
    // Per layer (transformers' GlmMoeDsaIndexer, vLLM's deepseek_v2.py Indexer): wq_b 2048 -> 32 x 128,
    // wk 6144 -> 128, weights_proj 6144 -> 32, k_norm a LayerNorm of 128 (weight and bias):
    // 8,388,608 + 786,432 + 196,608 + 256 = 9,371,904; 78 layers: 731,008,512.
    const ModelSpec glm5 = fixture("zai-org/GLM-5");
    const int64_t biases = 75 * 256;
    CHECK(total(glm5) == 743180190720LL + 78 * 9371904LL + biases);
    CHECK(total(glm5) == 743911199232LL + biases);
    CHECK(with_mtp_layer("zai-org/GLM-5") == 753864119552LL + biases + 256);
}

TEST_CASE("GLM-5.2: only the 21 layers that run their own indexer hold one (IndexShare)") {
    // deepseek_v2.py builds an Indexer where max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0 (3, 4:
    // layers 0-2, 6, 10, ..., 74), and the checkpoint agrees: its published 753.33 B is GLM-5's 753,864,119,552
    // less 57 indexers (534,198,528).
    const ModelSpec glm52 = fixture("zai-org/GLM-5.2");
    CHECK(std::count_if(glm52.layers.begin(), glm52.layers.end(),
                        [](const Layer& l) { return l.index_head_dim > 0; }) == 21);
    const int64_t biases = 75 * 256;  // F32, outside the published bf16 count (above)
    CHECK(total(glm52) == 743911199232LL - 57 * 9371904LL + biases);
    CHECK(with_mtp_layer("zai-org/GLM-5.2") == 753329921024LL + biases + 256);
}

TEST_CASE("DeepSeek-V3.2: DeepSeek-V3's 671,026,419,200 plus 61 indexers of 64 heads") {
    // wq_b 1536 -> 64 x 128 (12,582,912), wk 7168 -> 128 (917,504), weights_proj 7168 -> 64 (458,752), k_norm 256.
    CHECK(total(fixture("deepseek-ai/DeepSeek-V3.2")) == 671026419200LL + 61 * 13959424LL);
}

TEST_CASE("The indexer as vLLM holds it: wq_b quantized and replicated, wk + weights_proj unquantized") {
    // DeepSeek-V3.2's fp8 checkpoint (128 x 128 blocks): wq_b is a quantized ReplicatedLinear (1 B per weight
    // plus one fp32 scale per block: 64 x 12 blocks); wk_weights_proj is MergedColumnParallelLinear with
    // quant_config=None and disable_tp (vLLM upcasts an FP8 wk at load), so 2 B per weight on every rank.
    const ModelSpec v32 = fixture("deepseek-ai/DeepSeek-V3.2");
    auto pc = count_params(v32);
    REQUIRE(pc.ok());
    auto fmt = weight_format("auto", v32);
    REQUIRE(fmt.ok());
    auto wb = weight_bytes(v32, fmt.value());
    REQUIRE(wb.ok());
    const auto wq_b = tensors_at(pc.value(), 5, 64 * 128, 1536);
    REQUIRE(wq_b.size() == 1);
    CHECK(pc->tensors[wq_b[0]].tp_replicated);
    CHECK(wb->tensor_bytes[wq_b[0]] == 64 * 128 * 1536 + 64 * 12 * 4);
    const auto wk_wp = tensors_at(pc.value(), 5, 128 + 64, 7168);
    REQUIRE(wk_wp.size() == 1);
    CHECK(pc->tensors[wk_wp[0]].tp_replicated);
    CHECK(wb->tensor_bytes[wk_wp[0]] == (128 + 64) * 7168 * 2);
    // At TP 8 every rank holds all 61 indexers: 61 x 15,339,008 B more per GPU than the 85,140,101,152 B
    // counted without them.
    auto tp8 = weight_bytes(v32, fmt.value(), 0, 8, 1);
    REQUIRE(tp8.ok());
    CHECK(tp8->per_gpu_bytes == 85140101152LL + 61 * 15339008LL);
}
