// Gemma 4 (model_type gemma4 / gemma4_text) from config.json: per-layer KV geometry, KV-shared layers, k_eq_v,
// PLE and MoE weights. The 31B numbers come from the fixture google/gemma-4-31B-it (tests/fixtures/configs/SOURCES.md);
// the rules from vLLM's models/gemma4.py (Gemma4DecoderLayer / Gemma4Attention), transformers' Gemma4TextConfig
// and llama.cpp's llama_model_gemma4::load_arch_hparams (n_layer_kv_from_start = n_layer - shared KV layers).
#include <doctest/doctest.h>

#include "base/units.h"
#include "engines/llamacpp.h"
#include "engines/vllm.h"
#include "fixtures.h"
#include "model/weights.h"

using namespace kvb;
using kvb::test::fixture;

namespace {

ModelSpec parse(const char* text) {
    auto m = parse_config(text, "gemma4 (assembled)");
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
    return m.value();
}

// Bytes one more token adds past every window, at 2 bytes a value: K and V of every full layer.
int64_t full_bytes_per_token(const ModelSpec& m) {
    int64_t b = 0;
    for (const Layer& l : m.layers)
        if (l.kind == LayerKind::Full) b += 2 * l.kv_heads * (l.k_head_dim + l.v_head_dim);
    return b;
}

}  // namespace

TEST_CASE("gemma-4-31B-it: 50 sliding layers of 16 KV heads x 256, 10 full of 4 x 512 (k_eq_v)") {
    const ModelSpec m = fixture("google/gemma-4-31B-it");
    CHECK_FALSE(m.generic);
    CHECK(m.family == "gemma4");
    REQUIRE(m.layers.size() == 60);
    CHECK(m.count(LayerKind::Sliding) == 50);
    CHECK(m.count(LayerKind::Full) == 10);
    CHECK(m.layers[0].kv_heads == 16);
    CHECK(m.layers[0].k_head_dim == 256);
    CHECK(m.layers[0].window == 1024);
    // num_global_key_value_heads applies because attention_k_eq_v is set; V keeps its own cache.
    CHECK(m.layers[5].kind == LayerKind::Full);
    CHECK(m.layers[5].kv_heads == 4);
    CHECK(m.layers[5].k_head_dim == 512);
    CHECK(m.layers[5].v_head_dim == 512);
    CHECK(m.max_position_embeddings == 262144);
    // 10 layers x 4 heads x (512 + 512) x 2 B; the generic reader said 16 heads x 256: 163,840.
    CHECK(full_bytes_per_token(m) == 81920);
}

TEST_CASE("gemma-4-31B-it: llama.cpp's iSWA lines at -c 8192, one and two sequences") {
    const ModelSpec m = fixture("google/gemma-4-31B-it");
    LlamaOptions o;
    o.n_ctx = 8192;
    auto l = llamacpp_layout(m, o);
    REQUIRE(l);
    REQUIRE(l->log_lines.size() == 4);
    // 8192 x 10 x 2048 x 2 B = 320 MiB each of K and V.
    CHECK(l->log_lines[1] ==
          "llama_kv_cache: size =  640.00 MiB (  8192 cells,  10 layers,  1/1 seqs), K (f16):  320.00 MiB, V (f16):  "
          "320.00 MiB");
    // GGML_PAD(1024 + 512, 256) = 1536 cells x 50 x 4096 x 2 B = 600 MiB each.
    CHECK(l->log_lines[3] ==
          "llama_kv_cache: size = 1200.00 MiB (  1536 cells,  50 layers,  1/1 seqs), K (f16):  600.00 MiB, V (f16):  "
          "600.00 MiB");
    o.n_seq_max = 2;  // non-unified: the SWA cache per stream is n_swa x 1 + ubatch, as in L11 (gemma-4-12B)
    auto l2 = llamacpp_layout(m, o);
    REQUIRE(l2);
    CHECK(l2->log_lines[3] ==
          "llama_kv_cache: size = 2400.00 MiB (  1536 cells,  50 layers,  2/2 seqs), K (f16): 1200.00 MiB, V (f16): "
          "1200.00 MiB");
}

TEST_CASE("gemma-4-31B-it: vLLM unifies 256 KiB pages, the full layers' blocks hold 32 tokens") {
    const ModelSpec m = fixture("google/gemma-4-31B-it");
    VllmOptions o;
    o.max_model_len = 8192;
    auto lay = vllm_layout(m, o);
    REQUIRE(lay);
    // Sliding: 16 tokens x 16 heads x 256 x 2 (K, V) x 2 B = 262,144; full: 16 x 4 x 512 x 2 x 2 = 131,072, so its
    // block grows to 32 tokens (unify_kv_cache_spec_page_size). 50 and 10 layers: groups of 10, 5 + 1 of them.
    CHECK(lay->page_size_bytes == 262144);
    CHECK(lay->group_size == 10);
    REQUIRE(lay->groups.size() == 6);
    CHECK(lay->groups[0].spec_type == "SlidingWindowSpec");
    CHECK(lay->groups[0].block_size == 16);
    CHECK(lay->groups[5].spec_type == "FullAttentionSpec");
    CHECK(lay->groups[5].block_size == 32);
    CHECK(lay->padding_layers == 0);
    // 20 GiB of KV memory: 8192 blocks of 10 x 262,144 B.
    auto cap = vllm_capacity(m, o, 20 * GiB);
    REQUIRE(cap);
    CHECK(cap->num_blocks == 8192);
    CHECK(cap->log_lines.back().find("Maximum concurrency for 8,192 tokens per request: 2.90x") != std::string::npos);
}

TEST_CASE("gemma-4-31B-it: 30,697,345,340 text parameters, 575,743,536 in the vision tower") {
    const ModelSpec m = fixture("google/gemma-4-31B-it");
    auto pc = count_params(m);
    REQUIRE(pc);
    // The checkpoint's safetensors sum 31,273,088,876 parameters (the model report quoted in SOURCES.md):
    // embed 262144 x 5376; 50 sliding layers of 478,959,105 (q 8192, k/v 4096 rows, q/k norms, MLP, 4 norms,
    // layer_scalar); 10 full layers of 534,009,857 (q 16384, k 2048 rows, no v_proj); the final norm.
    CHECK(pc->total == 30697345340);
    // 27 layers x 20,187,792 + patch embedder 768 x 1152 + position table 2 x 10240 x 1152 + std 2 x 1152
    // + embed_vision 5376 x 1152.
    CHECK(pc->vision == 575743536);
    CHECK(pc->total + pc->vision == 31273088876);
}

TEST_CASE("Gemma 4 E-model layout: KV-shared layers hold no cache, keep their weights, double-wide MLP, PLE") {
    // Assembled, not a real config: the E2B/E4B fields at toy sizes (num_kv_shared_layers, use_double_wide_mlp,
    // hidden_size_per_layer_input, attention_k_eq_v false).
    const ModelSpec m = parse(R"({"model_type":"gemma4","text_config":{"model_type":"gemma4_text",
        "num_hidden_layers":6,"num_attention_heads":4,"num_key_value_heads":1,"head_dim":16,"global_head_dim":32,
        "hidden_size":64,"intermediate_size":128,"vocab_size":100,"vocab_size_per_layer_input":100,
        "hidden_size_per_layer_input":8,"num_kv_shared_layers":2,"use_double_wide_mlp":true,
        "attention_k_eq_v":false,"sliding_window":512,"max_position_embeddings":131072,
        "layer_types":["sliding_attention","sliding_attention","full_attention","sliding_attention",
                       "sliding_attention","full_attention"]}})");
    REQUIRE(m.layers.size() == 6);
    CHECK(m.count(LayerKind::Sliding) == 3);
    CHECK(m.count(LayerKind::Full) == 1);
    CHECK(m.layers[4].kind == LayerKind::None);
    CHECK(m.layers[4].kv_shared);
    CHECK(m.layers[5].kind == LayerKind::None);
    // Without k_eq_v the full layer keeps num_key_value_heads, at global_head_dim.
    CHECK(m.layers[2].kv_heads == 1);
    CHECK(m.layers[2].k_head_dim == 32);
    CHECK(full_bytes_per_token(m) == 128);
    auto pc = count_params(m);
    REQUIRE(pc);
    // embed 6,400; PLE table 100 x 48, its projection 48 x 64 and norm 8: 7,880; sliding layers 36,193 each
    // (attention 10,272, MLP 24,576, 4 norms, layer_scalar, PLE gate / projection / norm 1,088); the full layer
    // 46,465; the shared ones with 2 x 128-wide MLPs 60,769 and 71,041; the final norm 64.
    CHECK(pc->total == 301198);
    CHECK(pc->embedding == 6400 + 4800);
}

TEST_CASE("Gemma 4 MoE layout: the dense MLP beside 4 experts, router scale and per-expert scale, k_eq_v full layer") {
    // Assembled at toy sizes from the 26B-A4B's fields (enable_moe_block, num_experts, top_k_experts,
    // moe_intermediate_size, num_global_key_value_heads with attention_k_eq_v).
    const ModelSpec m = parse(R"({"model_type":"gemma4","text_config":{"model_type":"gemma4_text",
        "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"num_global_key_value_heads":1,
        "head_dim":16,"global_head_dim":32,"hidden_size":64,"intermediate_size":48,"vocab_size":100,
        "hidden_size_per_layer_input":0,"enable_moe_block":true,"num_experts":4,"top_k_experts":2,
        "moe_intermediate_size":32,"attention_k_eq_v":true,"sliding_window":1024,
        "layer_types":["sliding_attention","full_attention"]}})");
    CHECK(m.dims.num_experts == 4);
    CHECK(m.dims.experts_per_token == 2);
    CHECK(m.layers[1].kv_heads == 1);
    auto pc = count_params(m);
    REQUIRE(pc);
    // Layer 0: attention 12,320, dense MLP 9,216, router 256, experts 4 x 6,144, 4 norms 256, layer_scalar +
    // router scale + per_expert_scale + 3 norms 261: 46,885. Layer 1: q 8,192, k 2,048, no v, o 8,192, norms 64,
    // the same MLP side: 53,061. Embedding 6,400, final norm 64.
    CHECK(pc->total == 106410);
    CHECK(pc->experts == 2 * 24576);
}

TEST_CASE("Gemma 4 without enable_moe_block has no experts, whatever num_experts says") {
    const ModelSpec m = parse(R"({"model_type":"gemma4_text","num_hidden_layers":2,"num_attention_heads":4,
        "num_key_value_heads":2,"head_dim":16,"hidden_size":64,"intermediate_size":48,"vocab_size":100,
        "hidden_size_per_layer_input":0,"num_experts":4,"top_k_experts":2,"sliding_window":1024,
        "layer_types":["sliding_attention","full_attention"]})");
    CHECK(m.dims.num_experts == 0);
    // global_head_dim left out: Gemma4TextConfig's 512.
    CHECK(m.layers[1].k_head_dim == 512);
}
