// llama-server's slots: each slot's context capped at the model's training context (from b6925,
// ggml-org/llama.cpp#16736, server_context::load_model), YaRN raising that context (#28030), the
// server's own default of 4 slots over a unified cache (tools/server/server.cpp, common/arg.cpp), and
// DeepSeek sparse attention's indexer key cache (llama_kv_cache_dsa, #23346 / #25407 / #26474).
#include <doctest/doctest.h>

#include "budget/budget.h"
#include "engines/llamacpp.h"
#include "fixtures.h"
#include "model/rope.h"

using kvb::test::fixture;

namespace {

kvb::BudgetInputs rtx4090(int64_t context, const std::string& version = "", const std::string& rope = "") {
    kvb::BudgetInputs in;
    in.engine = kvb::BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = context;
    in.engine_version = version;
    in.rope_scaling = rope;
    return in;
}

bool has_note(const kvb::BudgetResult& r, const std::string& code) {
    for (const kvb::Message& n : r.notes)
        if (n.code == code) return true;
    return false;
}

}  // namespace

TEST_CASE("llama-server caps each slot at n_ctx_train: the cache holds the asked cells, a request gets 40,960") {
    auto m = fixture("Qwen/Qwen3-8B");  // max_position_embeddings 40960 = the GGUF's context_length
    auto r = kvb::compute_budget(m, rtx4090(65536));
    REQUIRE(r.ok());
    CHECK(r->fits);
    CHECK(r->llama.n_ctx_seq == 65536);  // allocated as asked: 9216.00 MiB
    CHECK(r->kv_total_bytes == 9663676416);
    CHECK(r->slot_cap == 40960);
    CHECK(r->n_ctx_slot == 40960);
    CHECK(r->slot_capped);
    CHECK(r->max_context == 40960);
    CHECK(r->max_context_capped);
    CHECK(r->max_context_physical == 134400);  // what memory would hold, past the limit
    // SRV_WRN("srv  %12.*s: " ...) from load_model(), after llama_context's own warning.
    const std::string line =
        "srv    load_model: the slot context (65536) exceeds the training context of the model (40960) - capping";
    CHECK(r->log_lines.back() == line);
    CHECK(r->verdict_reason.code == "llamacpp_slot_capped");
    CHECK(kvb::render_english(r->verdict_reason) ==
          "llama-server gives a slot at most the model's training context: the KV cache holds 65,536 tokens per "
          "sequence, but a request can use only 40,960. It says so at start-up: " +
              line);
    CHECK(has_note(*r, "llama_ctx_over_train"));

    // b6925..b7491 printed it from init().
    auto mid = kvb::compute_budget(m, rtx4090(65536, "b7491"));
    CHECK(mid->log_lines.back() ==
          "srv          init: the slot context (65536) exceeds the training context of the model (40960) - capping");
    CHECK(kvb::compute_budget(m, rtx4090(65536, "b7492"))->log_lines.back() == line);

    // Before b6925 a slot used the whole n_ctx_seq: the longest context is the one asked.
    auto old = kvb::compute_budget(m, rtx4090(65536, "b6924"));
    CHECK(old->slot_cap == 0);
    CHECK_FALSE(old->slot_capped);
    CHECK(old->n_ctx_slot == 65536);
    CHECK(old->max_context == 65536);
    CHECK(old->max_context_stop == "asked");  // before b6925: the context asked, past the model's limit
    CHECK(old->verdict_reason.code.empty());
    CHECK(old->log_lines.size() == 1);

    // Within the training context nothing is capped.
    auto in = kvb::compute_budget(m, rtx4090(32768));
    CHECK_FALSE(in->slot_capped);
    CHECK(in->n_ctx_slot == 32768);
    CHECK(in->max_context == 40960);
}

TEST_CASE("YaRN: the slot cap is the GGUF's context_length until #28030 makes it orig x scale") {
    auto m = fixture("Qwen/Qwen3-8B");
    // --rope-scaling yarn:4 from the model card's 32,768: vLLM's derived length is 131,072.
    auto before = kvb::compute_budget(m, rtx4090(131072, "b10678", "yarn:4"));
    REQUIRE(before.ok());
    CHECK(before->model_max_len == 131072);
    CHECK(before->slot_cap == 40960);
    CHECK(before->slot_capped);
    CHECK(before->max_context == 40960);
    CHECK(before->max_context_stop == "slot");  // the slot cap, not the YaRN-scaled model limit
    CHECK(before->log_lines.back() ==
          "srv    load_model: the slot context (131072) exceeds the training context of the model (40960) - capping");
    CHECK(has_note(*before, "llamacpp_slot_cap_yarn"));

    for (const char* v : {"b10754", ""}) {
        auto after = kvb::compute_budget(m, rtx4090(131072, v, "yarn:4"));
        REQUIRE(after.ok());
        CHECK(after->slot_cap == 131072);  // 32768 / 0.25f
        CHECK_FALSE(after->slot_capped);
        CHECK(after->max_context == 131072);
        CHECK(after->max_context_stop == "model");
        CHECK_FALSE(has_note(*after, "llamacpp_slot_cap_yarn"));
    }
    // Linear scaling is not re-adjusted: the cap stays 40,960 on every build.
    auto lin = kvb::compute_budget(m, rtx4090(81920, "", "linear:2"));
    CHECK(lin->slot_cap == 40960);
    CHECK(lin->max_context == 40960);

    // llamacpp_n_ctx_train directly: the user's factor against the GGUF's own (DeepSeek-V3's config
    // has YaRN x40 from 4,096 and context_length 163,840).
    auto b = kvb::llama_build("").value();
    auto ds = fixture("deepseek-ai/DeepSeek-V3");
    kvb::RopeScaling same{"yarn", 40, 4096};
    CHECK(kvb::llamacpp_n_ctx_train(ds, &same, b) == 163840);  // the same scale: unchanged
    kvb::RopeScaling more{"yarn", 80, 4096};
    CHECK(kvb::llamacpp_n_ctx_train(ds, &more, b) == 327680);
    kvb::RopeScaling odd{"yarn", 3, 40960};
    CHECK(kvb::llamacpp_n_ctx_train(m, &odd, b) == 122880);  // 40960 / (1.0f / 3.0f) in float
    CHECK(kvb::llamacpp_n_ctx_train(m, nullptr, b) == 40960);
    CHECK(kvb::llamacpp_n_ctx_train(m, &more, kvb::llama_build("b10678").value()) == 40960);
}

TEST_CASE("llama-server -m X alone: 4 slots over one unified cache (fit_default), whatever -np the answer has") {
    // Qwen3-8B: one stream of n_ctx_train cells, as -np 1 had: the same bytes.
    auto q = kvb::compute_budget(fixture("Qwen/Qwen3-8B"), rtx4090(65536));
    CHECK(q->fit_default.slots == 4);
    CHECK(q->fit_default.kv_unified);
    CHECK(q->fit_default.n_ctx == 40960);
    CHECK(q->fit_default.context == 40960);
    CHECK(q->fit_default.flags == "-c 40960 -ngl 37");
    CHECK(q->fit.slots == 1);
    CHECK_FALSE(q->fit.kv_unified);

    // gemma-3-4b: the SWA cache holds 4 x 1024 + 512 = 4,608 cells (522.00 MiB) instead of 1,536
    // (174.00 MiB): 348 MiB more than with one slot.
    auto g = kvb::compute_budget(fixture("google/gemma-3-4b-it"), rtx4090(8192));
    auto g_old = kvb::compute_budget(fixture("google/gemma-3-4b-it"), rtx4090(8192, "b6924"));
    CHECK(g->fit_default.slots == 4);
    CHECK(g->fit_default.n_ctx == 131072);
    CHECK(g->fit_default.used_bytes == 6262551808);
    CHECK(g_old->fit_default.slots == 1);
    CHECK_FALSE(g_old->fit_default.kv_unified);
    CHECK(g_old->fit_default.used_bytes == 5897647360);
    CHECK(g->fit_default.used_bytes - g_old->fit_default.used_bytes == 348 * 1024 * 1024);

    // Qwen3-Next: 4 recurrent state cells (301.50 MiB) instead of 1 (75.38 MiB).
    kvb::BudgetInputs in = rtx4090(8192);
    in.gpu = "h100";
    auto n = kvb::compute_budget(fixture("Qwen/Qwen3-Next-80B-A3B-Thinking"), in);
    CHECK(n->fit_default.slots == 4);
    CHECK(n->fit_default.n_ctx == 262144);
    CHECK(n->fit_default.used_bytes == 55386178560);
    in.engine_version = "b6924";
    auto n_old = kvb::compute_budget(fixture("Qwen/Qwen3-Next-80B-A3B-Thinking"), in);
    CHECK(n->fit_default.used_bytes - n_old->fit_default.used_bytes == 237109248);  // 3 x 75.375 MiB
}

TEST_CASE("DeepSeek sparse attention: llama_kv_cache_dsa's indexer key cache and its lines") {
    kvb::LlamaOptions o;
    o.n_ctx = 32768;
    auto v32 = kvb::llamacpp_layout(fixture("deepseek-ai/DeepSeek-V3.2"), o);
    REQUIRE(v32.ok());
    REQUIRE(v32->log_lines.size() == 4);
    CHECK(v32->log_lines[0] == "llama_kv_cache_dsa: creating main KV cache, size = 32768 cells");
    CHECK(v32->log_lines[1] ==
          "llama_kv_cache: size = 2196.00 MiB ( 32768 cells,  61 layers,  1/1 seqs), K (f16): "
          "2196.00 MiB, V (f16):    0.00 MiB");
    CHECK(v32->log_lines[2] == "llama_kv_cache_dsa: creating indexer KV cache, size = 32768 cells");
    // 61 layers x one 128-wide f16 key per cell, no V: 61 x 256 x 32768 B.
    CHECK(v32->log_lines[3] ==
          "llama_kv_cache: size =  488.00 MiB ( 32768 cells,  61 layers,  1/1 seqs), K (f16): "
          " 488.00 MiB, V (f16):    0.00 MiB");
    CHECK(v32->caches[1].k_bytes == 511705088);
    CHECK(v32->kv_bytes == 2302672896 + 511705088);
    CHECK(v32->bytes_per_token == 61 * (576 + 128) * 2);

    // -ctk q8_0: the indexer keys are q8_0 too (136 B per 128 values).
    kvb::LlamaOptions q = o;
    q.type_k = "q8_0";
    auto v32q = kvb::llamacpp_layout(fixture("deepseek-ai/DeepSeek-V3.2"), q);
    CHECK(v32q->caches[1].k_bytes == int64_t(61) * 136 * 32768);
    CHECK(v32q->log_lines[3] ==
          "llama_kv_cache: size =  259.25 MiB ( 32768 cells,  61 layers,  1/1 seqs), K (q8_0): "
          " 259.25 MiB, V (f16):    0.00 MiB");

    // Before b9411 (#23346) no indexer cache.
    kvb::LlamaOptions before = o;
    kvb::apply_llama_build(kvb::llama_build("b9410").value(), before);
    CHECK(kvb::llamacpp_layout(fixture("deepseek-ai/DeepSeek-V3.2"), before)->log_lines.size() == 1);

    // GLM-5: every layer's indexer is full (78 x 128).
    auto g5 = kvb::llamacpp_layout(fixture("zai-org/GLM-5"), o);
    CHECK(g5->log_lines[3] ==
          "llama_kv_cache: size =  624.00 MiB ( 32768 cells,  78 layers,  1/1 seqs), K (f16): "
          " 624.00 MiB, V (f16):    0.00 MiB");
    // GLM-5.2: from b10243 (#26474) only its 21 "full" indexers keep keys; b10119..b10242 all 78;
    // before b10119 (#25407) glm-dsa had no indexer cache.
    auto g52 = kvb::llamacpp_layout(fixture("zai-org/GLM-5.2"), o);
    CHECK(g52->log_lines[3] ==
          "llama_kv_cache: size =  168.00 MiB ( 32768 cells,  21 layers,  1/1 seqs), K (f16): "
          " 168.00 MiB, V (f16):    0.00 MiB");
    kvb::LlamaOptions mid = o;
    kvb::apply_llama_build(kvb::llama_build("b10242").value(), mid);
    CHECK(kvb::llamacpp_layout(fixture("zai-org/GLM-5.2"), mid)->caches[1].layers == 78);
    kvb::LlamaOptions early = o;
    kvb::apply_llama_build(kvb::llama_build("b10118").value(), early);
    CHECK(kvb::llamacpp_layout(fixture("zai-org/GLM-5.2"), early)->log_lines.size() == 1);
    kvb::apply_llama_build(kvb::llama_build("b10119").value(), early);
    CHECK(kvb::llamacpp_layout(fixture("zai-org/GLM-5.2"), early)->caches[1].layers == 78);
}
