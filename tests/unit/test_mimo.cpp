// Xiaomi MiMo-V2-Flash (model_type mimo_v2_flash) from config.json: hybrid_layer_pattern's full and sliding layers with
// their own KV heads, K 192 / V 128, moe_layer_freq as a per-layer list, the SWA layers' attention sinks. The numbers
// come from the fixture XiaomiMiMo/MiMo-V2-Flash (tests/fixtures/configs/SOURCES.md); the rules from vLLM's
// models/mimo_v2.py (MiMoV2FlashDecoderLayer, MiMoV2Attention; mimo_v2_flash.py before 0.22) and
// v1/kv_cache_interface.py at v0.27.1, v0.19.1 and v0.20.0, llama.cpp's src/models/mimo2.cpp and conversion/mimo.py
// (3f545becc), transformers' models/mimo_v2_flash (PR #45144).
#include <doctest/doctest.h>

#include "base/units.h"
#include "budget/budget.h"
#include "engines/llamacpp.h"
#include "engines/transformers_cache.h"
#include "engines/vllm.h"
#include "fixtures.h"
#include "kv/kv.h"
#include "model/weights.h"

using namespace kvb;
using kvb::test::fixture;

namespace {

const char* const kId = "XiaomiMiMo/MiMo-V2-Flash";

VllmOptions release(const std::string& version) {
    VllmOptions o;
    auto rel = vllm_release(version);
    REQUIRE(rel);
    apply_vllm_release(rel.value(), o);
    o.log_format = rel->log_format;  // the release's own capacity lines
    return o;
}

}  // namespace

TEST_CASE("MiMo-V2-Flash: 9 full layers of 4 KV heads, 39 sliding of 8, K 192 / V 128, window 128") {
    const ModelSpec m = fixture(kId);
    CHECK_FALSE(m.generic);
    CHECK(m.family == "mimo_v2");
    REQUIRE(m.layers.size() == 48);
    CHECK(m.count(LayerKind::Full) == 9);
    CHECK(m.count(LayerKind::Sliding) == 39);
    for (size_t i : {0, 5, 11, 17, 23, 29, 35, 41, 47}) {
        CHECK(m.layers[i].kind == LayerKind::Full);
        CHECK(m.layers[i].kv_heads == 4);
    }
    CHECK(m.layers[1].kind == LayerKind::Sliding);
    CHECK(m.layers[1].kv_heads == 8);  // swa_num_key_value_heads
    CHECK(m.layers[1].window == 128);  // sliding_window_size, vLLM's field
    for (const Layer& l : m.layers) {
        CHECK(l.k_head_dim == 192);
        CHECK(l.v_head_dim == 128);
    }
    // moe_layer_freq [0, 1, ...]: layer 0 dense, 1-47 MoE (MiMoV2FlashDecoderLayer.is_moe_layer).
    REQUIRE(m.dims.layer_mlp.size() == 48);
    CHECK(m.dims.layer_mlp[0] == 1);
    CHECK(m.dims.layer_mlp[1] == 2);
    CHECK(m.dims.layer_mlp[47] == 2);
    CHECK(m.dims.num_experts == 256);
    CHECK(m.dims.shared_experts == 0);  // n_shared_experts null
    CHECK(m.dims.sliding_sinks);
    CHECK(m.quant.method == "fp8");
}

TEST_CASE("MiMo-V2-Flash: 23,040 B per token past the window, 199,680 within it (K and V at their own widths)") {
    const ModelSpec m = fixture(kId);
    const KvDtypes bf16 = uniform_kv_dtypes(m, KvType{"bfloat16", 1, 2});
    // Full: 4 heads x (192 + 128) x 2 B = 2,560 B a layer, x 9. Sliding: 8 x 320 x 2 = 5,120, x 39. Sized as if V
    // were 192 (2 x K) it would be 27,648 and 239,616.
    const IdealKv k = ideal_kv(m, bf16);
    CHECK(k.bytes_per_token == 23040);
    CHECK(layer_bytes_per_token(m.layers[0], bf16) == 2560);
    CHECK(layer_window_bytes_per_token(m.layers[1], bf16) == 5120);
    // 32,768 tokens: 9 x 2,560 x 32,768 + 39 x 5,120 x 128 = 780,533,760 B.
    auto at = kv_bytes_at(m, bf16, 32768, 1);
    REQUIRE(at);
    CHECK(at.value() == 780533760);
}

TEST_CASE("MiMo-V2-Flash: 308,778,780,864 parameters, 310,153,446,528 B as fp8 128x128 blocks") {
    const ModelSpec m = fixture(kId);
    auto pc = count_params(m);
    REQUIRE(pc);
    // From the shapes: embed and lm_head 2 x 152,576 x 4,096; q 12,288 x 4,096 and o 4,096 x 8,192 in every layer;
    // k / v 768 / 512 rows on the 9 full layers, 1,536 / 1,024 rows and 64 sinks on the 39 sliding ones; layer 0's
    // MLP 3 x 16,384 x 4,096; layers 1-47 256 experts of 3 x 2,048 x 4,096, the router 256 x 4,096 and its
    // e_score_correction_bias; 2 norms a layer and the final one. The model card says 309B.
    CHECK(pc->total == 308778780864);
    // 47 layers x 248 idle experts x 25,165,824 less: 15,445,936,320 ("15B active").
    CHECK(pc->active == 15445936320);
    CHECK(pc->experts == int64_t(47) * 256 * 3 * 2048 * 4096);
    auto f = weight_format("auto", m);
    REQUIRE(f);
    auto wb = weight_bytes(m, f.value());
    REQUIRE(wb);
    // Every q/k/v/o, MLP and expert matrix 1 B a weight + a fp32 scale per 128 x 128 block (weight_scale_inv);
    // embeddings, lm_head, routers, sinks and norms bf16. Summed by hand from the shapes above.
    CHECK(wb->bytes == 310153446528);
}

TEST_CASE("MiMo-V2-Flash on vLLM: sliding pages 192 + 128 per head, full blocks of 32 tokens, groups of 9") {
    const ModelSpec m = fixture(kId);
    VllmOptions o = release("");
    o.max_model_len = 32768;
    auto lay = vllm_layout(m, o);
    REQUIRE(lay);
    // Sliding: 16 tokens x 8 heads x (192 + 128) x 2 B = 81,920 (SlidingWindowSpec.real_page_size_bytes with
    // head_size_v, PR #40045); full: 16 x 4 x 320 x 2 = 40,960, so its block grows to 32 tokens.
    CHECK(lay->page_size_bytes == 81920);
    CHECK(lay->group_size == 9);  // min(9 full, 39 sliding); 39 >= 1.5 x 9
    CHECK(lay->padding_layers == 6);
    REQUIRE(lay->groups.size() == 6);
    CHECK(lay->groups[0].spec_type == "FullAttentionSpec");
    CHECK(lay->groups[0].block_size == 32);
    CHECK(lay->groups[1].spec_type == "SlidingWindowSpec");
    CHECK(lay->groups[1].block_size == 16);
    REQUIRE(!lay->warnings.empty());
    CHECK(lay->warnings[0] == "Add 6 padding layers, may waste at most 15.38% KV cache memory");
    // 10 GiB: 14,563 blocks of 9 x 81,920 B. A request: 1,024 full blocks + 5 sliding groups x (cdiv(127 + 2 x 8,192,
    // 16) + 1) = 6,189.
    auto cap = vllm_capacity(m, o, 10 * GiB);
    REQUIRE(cap);
    CHECK(cap->num_blocks == 14563);
    CHECK(cap->log_lines.back() ==
          "GPU KV cache size: 77,104 tokens, Maximum concurrency for 32,768 tokens per request: 2.35x");
}

TEST_CASE("MiMo-V2-Flash on vLLM before 0.20: V padded to 192 in every layer") {
    const ModelSpec m = fixture(kId);
    // mimo_v2_flash.py at v0.19.1: F.pad(v, [0, head_dim - v_head_dim]) and an Attention without head_size_v, so both
    // specs page 2 x 192: full 16 x 4 x 384 x 2 = 49,152 (block 32), sliding 98,304.
    VllmOptions o = release("0.19.1");
    CHECK_FALSE(o.diffkv);
    o.max_model_len = 32768;
    auto cap = vllm_capacity(m, o, 10 * GiB);
    REQUIRE(cap);
    CHECK(cap->layout.page_size_bytes == 98304);
    CHECK(cap->num_blocks == 12136);  // 10 GiB / (9 x 98,304)
    // The two-line format of 0.19: num_blocks // 6 groups x 16.
    CHECK(cap->log_lines[1] == "GPU KV cache size: 32,352 tokens");
    // 0.20.0rc1 was cut before PR #40045; 0.20.0 has it.
    CHECK_FALSE(release("0.20.0rc1").diffkv);
    CHECK(release("0.20.0").diffkv);
}

TEST_CASE("MiMo-V2-Flash on 8 x H100, TP 8: every rank caches 1 KV head per layer, 16.74 requests of 262,144") {
    BudgetInputs in;
    in.gpu = "h100";
    in.gpu_count = 8;
    auto r = compute_budget(fixture(kId), in);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    CHECK(r->tp == 8);
    CHECK(r->context == 262144);  // max_position_embeddings
    // 4 and 8 KV heads over 8 ranks: max(1, 4 // 8) = 1 (replicated) and 1; both pages 16 x 320 x 2 = 10,240 B, so
    // a block id costs 9 x 10,240 = 92,160 B.
    CHECK(r->capacity.layout.page_size_bytes == 10240);
    // Weights of the heaviest rank, with the RoPE caches vLLM counts in "Model loading took": mimo_v2.py gives each
    // kind its own default rope_parameters (rope_theta, swa_rope_theta), so two of 262,144 x int(192 x 0.334) = 64
    // columns x 2 B = 32 MiB each (64 MiB; one of 192 columns, 96 MiB, before); and its MoE routers in float32
    // (moe_router_dtype's default): 47 MoE layers x (256 x 4,096 + 256) x 2 B more = 98,590,208 B.
    CHECK(r->weights_per_gpu_bytes == 39078876224);
    // The pool: 79.22 GiB x 0.92 less the weights, the RoPE cache and the estimated activation, non-torch and
    // CUDA-graph terms (docs/budget-model.md section 4).
    CHECK(r->kv_pool_bytes == 33236503160);
    CHECK(r->capacity.num_blocks == 360639);
    // A request: 16,384 full blocks + 5 x 1,033 sliding = 21,549; 360,639 / 21,549 = 16.74.
    CHECK(r->capacity.log_lines.back() ==
          "GPU KV cache size: 4,387,180 tokens, Maximum concurrency for 262,144 tokens per request: 16.74x");
    CHECK(r->max_concurrency == 16);
}

TEST_CASE("MiMo-V2-Flash on llama.cpp: iSWA, K 192 and V 128 wide, the 3 MTP layers uncached") {
    const ModelSpec m = fixture(kId);
    LlamaOptions o;
    o.n_ctx = 32768;
    auto l = llamacpp_layout(m, o);
    REQUIRE(l);
    REQUIRE(l->log_lines.size() == 4);
    // n_embd_k_gqa = 192 x n_head_kv(il), n_embd_v_gqa = 128 x n_head_kv(il) (head_count_kv is a per-layer array in
    // the GGUF: conversion/mimo.py). Non-SWA: 9 layers x 768 x 2 B x 32,768 = 432 MiB of K, 288 MiB of V.
    CHECK(l->log_lines[1] ==
          "llama_kv_cache: size =  720.00 MiB ( 32768 cells,   9 layers,  1/1 seqs), K (f16):  432.00 MiB, V (f16):  "
          "288.00 MiB");
    // SWA: GGML_PAD(128 + 512, 256) = 768 cells x 39 layers x 1,536 / 1,024 x 2 B.
    CHECK(l->log_lines[3] ==
          "llama_kv_cache: size =  146.25 MiB (   768 cells,  39 layers,  1/1 seqs), K (f16):   87.75 MiB, V (f16):   "
          "58.50 MiB");
}

TEST_CASE("MiMo-V2-Flash on transformers: DynamicCache keeps 127 tokens of each sliding layer") {
    const ModelSpec m = fixture(kId);
    // MiMoV2FlashAttention: SWA layers num_key_value_heads x 2 = 8 heads, V at v_head_dim; DynamicSlidingWindowLayer
    // keeps sliding_window - 1 tokens: 9 x 2,560 x 32,768 + 39 x 5,120 x 127.
    auto b = transformers_cache_bytes(m, 32768, 1);
    REQUIRE(b);
    CHECK(b.value() == 780334080);
}

TEST_CASE("moe_layer_freq as a list, in any family: nonzero entries are the MoE layers") {
    // Assembled at toy sizes: a qwen3_moe config whose list makes layer 1 dense.
    auto m = parse_config(R"({"model_type":"qwen3_moe","num_hidden_layers":3,"num_attention_heads":4,
        "num_key_value_heads":2,"head_dim":16,"hidden_size":64,"intermediate_size":96,"vocab_size":100,
        "num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":32,"moe_layer_freq":[1,0,1]})",
                          "toy");
    REQUIRE(m);
    auto pc = count_params(m.value());
    REQUIRE(pc);
    CHECK(pc->experts == 2 * 4 * 3 * 32 * 64);  // layers 0 and 2
    CHECK(pc->mlp == 3 * 96 * 64);              // layer 1's dense MLP
    auto bad = parse_config(R"({"model_type":"qwen3_moe","num_hidden_layers":3,"num_attention_heads":4,
        "num_key_value_heads":2,"head_dim":16,"hidden_size":64,"intermediate_size":96,"vocab_size":100,
        "num_experts":4,"num_experts_per_tok":2,"moe_intermediate_size":32,"moe_layer_freq":[1,0]})",
                            "toy");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "toy: moe_layer_freq has 2 entries but num_hidden_layers is 3");
}

TEST_CASE("MiMo-V2-Flash's vLLM MTP drafter: one sliding layer of the swa_* shapes joins the pool") {
    const ModelSpec m = fixture(kId);
    // speculative.py (v0.27.1) maps MiMoV2FlashForCausalLM to MiMoV2MTP with n_predict 1
    // (_MIMO_V2_FLASH_NUM_MTP_LAYERS: "vLLM currently supports only the first layer"); MiMoV2MTPLayer's attention takes
    // swa_num_key_value_heads, swa_head_dim, swa_v_head_dim and sliding_window_size.
    VllmSpeculative s;
    s.method = "mtp";
    s.num_speculative_tokens = 1;
    auto d = vllm_with_drafter(m, s, nullptr);
    REQUIRE(d);
    REQUIRE(d->layers.size() == 49);
    CHECK(d->drafter_layers == 1);
    const Layer& mtp = d->layers.back();
    CHECK(mtp.kind == LayerKind::Sliding);
    CHECK(mtp.kv_heads == 8);
    CHECK(mtp.window == 128);
    VllmOptions o;
    o.max_model_len = 32768;
    auto lay = vllm_layout(d.value(), o);
    REQUIRE(lay);
    // 40 sliding layers in groups of 9: 5 groups, 5 padding layers.
    CHECK(lay->padding_layers == 5);
    CHECK(lay->groups.size() == 6);
}
