// MiniMax-M3 (MiniMaxAI/MiniMax-M3's text config, nvidia/MiniMax-M3-NVFP4's minimax_m3_vl wrapper): GQA on all
// 60 layers, the MSA indexer on the 57 layers sparse_attention_freq marks, 3 dense layers then 128 experts top-4
// with a shared expert. What vLLM (vllm/models/minimax_m3 at v0.27.1), llama.cpp (llama_kv_cache_msa, b10144 on)
// and transformers (no such model) make of it; the parameters and the NVFP4 checkpoint's bytes. MiniMax-M2 at the end.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/units.h"
#include "budget/budget.h"
#include "engines/llamacpp.h"
#include "engines/transformers_cache.h"
#include "engines/vllm.h"
#include "fixtures.h"
#include "kv/kv.h"
#include "model/dtype.h"
#include "model/model.h"
#include "model/weights.h"

using namespace kvb;
using kvb::test::fixture;
using kvb::test::fixture_text;

namespace {

const char* kM3 = "MiniMaxAI/MiniMax-M3";
const char* kNvfp4 = "nvidia/MiniMax-M3-NVFP4";

VllmLayout layout(const ModelSpec& m, const VllmOptions& o) {
    auto r = vllm_layout(m, o);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

int64_t count(const VllmLayout& l, const char* spec_type, int64_t page) {
    int64_t n = 0;
    for (const auto& s : l.layers) n += s.spec_type == spec_type && s.page_size_bytes == page;
    return n;
}

}  // namespace

TEST_CASE("MiniMax-M3: 60 GQA layers, the MSA indexer on the 57 sparse_attention_freq marks, 3 dense MLPs") {
    for (const char* id : {kM3, kNvfp4}) {
        CAPTURE(id);
        const ModelSpec m = fixture(id);
        CHECK(m.family == "minimax_m3");
        REQUIRE(m.layers.size() == 60);
        for (size_t i = 0; i < 60; ++i) {
            CHECK(m.layers[i].kind == LayerKind::Full);
            CHECK(m.layers[i].kv_heads == 4);
            CHECK(m.layers[i].k_head_dim == 128);
            CHECK(m.layers[i].index_head_dim == (i < 3 ? 0 : 128));
        }
        CHECK(m.msa_block_size == 128);
        CHECK(m.dims.index_heads == 4);
        // moe_layer_freq as a 0/1 list: 1 = dense (dense_intermediate_size 12,288), 2 = MoE.
        REQUIRE(m.dims.layer_mlp.size() == 60);
        CHECK(m.dims.layer_mlp[2] == 1);
        CHECK(m.dims.layer_mlp[3] == 2);
        CHECK(m.dims.dense_intermediate_size == 12288);
        CHECK(m.max_position_embeddings == 1048576);
    }
    CHECK(fixture(kNvfp4).multimodal);
    CHECK(fixture(kNvfp4).quant.method == "modelopt");
}

TEST_CASE("MiniMax-M3: a sparse_attention_freq or moe_layer_freq list of the wrong length is refused") {
    for (const char* field : {"moe_layer_freq", "sparse_attention_freq"}) {
        CAPTURE(field);
        nlohmann::json j = nlohmann::json::parse(fixture_text(kM3));
        nlohmann::json& list =
            std::string(field) == "moe_layer_freq" ? j["moe_layer_freq"] : j["sparse_attention_config"][field];
        list.erase(list.begin());
        auto r = parse_config(j.dump(), "acme/m3");
        REQUIRE_FALSE(r.ok());
        // moe_layer_freq is read with the other per-layer lists of the shared reader ("has N entries but ...").
        CHECK(r.error().detail.code ==
              (std::string(field) == "moe_layer_freq" ? "length_mismatch" : "entry_length_mismatch"));
        CHECK(r.error().detail.param("field") == field);
    }
}

// Tensor by tensor from the shapes vLLM builds (MiniMaxM3Attention / MiniMaxM3SparseAttention, MiniMaxM3MLP,
// MiniMaxM3MoE): embeddings 2 x 200,064 x 6,144; per layer q 8,192 x 6,144, k and v 512 x 6,144, o 6,144 x 8,192,
// q_norm / k_norm 128 each, 2 norms; sparse layers index_q 512 x 6,144, index_k 128 x 6,144 and their norms;
// dense layers 3 x 12,288 x 6,144; MoE layers router 128 x 6,144 + e_score_correction_bias 128, 128 experts and
// one shared expert of 3 x 3,072 x 6,144. vLLM's recipe quotes 427.04B from safetensors with the vision tower,
// and 25.9B active.
TEST_CASE("MiniMax-M3: 426,174,572,928 text parameters, 25,962,473,856 active") {
    auto p = count_params(fixture(kM3));
    REQUIRE(p);
    const int64_t H = 6144, V = 200064;
    const int64_t attn = H * 8192 * 2 + H * 512 * 2 + 256 + 2 * H;
    const int64_t idx = H * 512 + H * 128 + 256;
    const int64_t dense = 3 * H * 12288;
    const int64_t moe = 128 * H + 128 + 128 * 3 * H * 3072 + 3 * H * 3072;
    CHECK(p->total == 2 * V * H + H + 60 * attn + 57 * idx + 3 * dense + 57 * moe);
    CHECK(p->total == 426174572928);
    CHECK(p->active == p->total - 57 * 124 * 3 * H * 3072);
    CHECK(p->active == 25962473856);
    // The VL wrapper's text model is the same; its vision tower is counted apart.
    auto pv = count_params(fixture(kNvfp4));
    REQUIRE(pv);
    CHECK(pv->total == p->total);
    CHECK(pv->vision > 0);
}

TEST_CASE("MiniMax-M3 weights: bf16 852,349,145,856 B; the NVFP4 checkpoint's experts NVFP4, the rest MXFP8") {
    const ModelSpec m = fixture(kM3);
    auto bf = weight_bytes(m, weight_format("bf16", m).value());
    REQUIRE(bf);
    CHECK(bf->bytes == 426174572928 * 2);

    // modelopt MIXED_PRECISION: routed experts NVFP4 (group 16: 4-bit values, an fp8 scale per 16, weight_scale_2
    // and input_scale fp32), attention, indexer, shared experts and dense MLPs MXFP8 (8-bit values, an E8M0 byte per
    // 32), routers (exclude_modules), embeddings and lm_head bf16.
    const ModelSpec q = fixture(kNvfp4);
    auto f = weight_format("auto", q);
    REQUIRE(f);
    auto b = weight_bytes(q, f.value());
    REQUIRE(b);
    const int64_t H = 6144, V = 200064;
    auto nv = [](int64_t r, int64_t c) { return r * c / 2 + r * c / 16 + 8; };
    auto mx = [](int64_t r, int64_t c) { return r * c + r * c / 32; };
    int64_t want = 2 * V * H * 2 + 2 * H;
    for (int i = 0; i < 60; ++i) {
        want += mx(8192, H) + 2 * mx(512, H) + mx(H, 8192) + 2 * 256 + 4 * H;
        if (i < 3) {
            want += 2 * mx(12288, H) + mx(H, 12288);
        } else {
            want += mx(512, H) + mx(128, H) + 2 * 256;
            want += 128 * H * 2 + 128 * 2;
            want += 128 * (2 * nv(3072, H) + nv(H, 3072));
            want += 2 * mx(3072, H) + mx(H, 3072);
        }
    }
    CHECK(b->bytes == want);
    CHECK(b->bytes == 248267431680);
}

// vLLM, --block-size 128 (the only page MSA's kernels take), bf16: every layer a FullAttentionSpec of
// kv heads x 128 x (K + V) x 2 B per token; each sparse layer also an MLAAttentionSpec of one 128-wide bf16 key.
// FullAttentionSpec and MLAAttentionSpec (its subclass) of one block size form UniformTypeKVCacheSpecs: a block id
// costs the sum of the 117 pages.
TEST_CASE("MiniMax-M3 on vLLM: 2,048 B per token per layer, 256 B of indexer key on 57 layers, 128-token blocks") {
    const ModelSpec m = fixture(kM3);
    VllmOptions o;
    const VllmLayout l1 = layout(m, o);
    CHECK(l1.attn_block_size == 128);
    CHECK(count(l1, "FullAttentionSpec", 128 * 2048) == 60);
    CHECK(count(l1, "MLAAttentionSpec", 128 * 256) == 57);
    CHECK(l1.uniform_type);
    CHECK(l1.bytes_per_block == 60 * 128 * 2048 + 57 * 128 * 256);  // 137,472 B per token

    // TP 8: 4 KV heads replicated to one per GPU (512 B per token per layer); the indexer key is not split.
    o.tensor_parallel_size = 8;
    const VllmLayout l8 = layout(m, o);
    CHECK(count(l8, "FullAttentionSpec", 128 * 512) == 60);
    CHECK(count(l8, "MLAAttentionSpec", 128 * 256) == 57);
    CHECK(l8.bytes_per_block == 5799936);  // 45,312 B per token per GPU

    // An fp8 cache halves K and V, not the indexer keys (attention_config.indexer_kv_dtype stays bf16).
    o.kv_cache_dtype = "fp8";
    const VllmLayout l8f = layout(m, o);
    CHECK(count(l8f, "FullAttentionSpec", 128 * 256) == 60);
    CHECK(count(l8f, "MLAAttentionSpec", 128 * 256) == 57);
    CHECK(l8f.bytes_per_block == 3833856);
}

TEST_CASE("MiniMax-M3 on vLLM, TP 8, 40 GiB of KV per GPU, 131,072-token requests: 7,405 blocks, 7.23x") {
    const ModelSpec m = fixture(kM3);
    VllmOptions o;
    o.tensor_parallel_size = 8;
    o.max_model_len = 131072;
    auto c = vllm_capacity(m, o, 40 * GiB);
    REQUIRE(c);
    CHECK(c->num_blocks == 40 * GiB / 5799936);
    CHECK(c->num_blocks == 7405);
    CHECK(c->blocks_per_request == 1024);
    CHECK(c->log_lines.back() ==
          "GPU KV cache size: 947,840 tokens, Maximum concurrency for 131,072 tokens per request: 7.23x");
    o.kv_cache_dtype = "fp8";
    auto f = vllm_capacity(m, o, 40 * GiB);
    REQUIRE(f);
    CHECK(f->num_blocks == 11202);
    CHECK(f->log_lines.back() ==
          "GPU KV cache size: 1,433,856 tokens, Maximum concurrency for 131,072 tokens per request: 10.94x");
}

TEST_CASE("MiniMax-M3 on vLLM: from 0.24.0 (PR #45381); 0.23.0 has no MiniMaxM3SparseForCausalLM") {
    const ModelSpec m = fixture(kM3);
    for (const char* v : {"0.23.0", "0.24.0"}) {
        CAPTURE(v);
        VllmOptions o;
        apply_vllm_release(vllm_release(v).value(), o);
        auto r = vllm_layout(m, o);
        if (std::string(v) == "0.23.0")
            CHECK(r.error().detail.code == "vllm_msa_release");
        else
            CHECK(r.ok());
    }
}

TEST_CASE("MiniMax-M3 on vLLM: a block size 128 does not divide stops the worker (select_common_block_size)") {
    const ModelSpec m = fixture(kM3);
    VllmOptions o;
    o.block_size = 16;
    auto r = vllm_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail.code == "vllm_msa_block_size");
    o.block_size = 256;  // a multiple: the kernels page by 128 inside it
    CHECK(layout(m, o).attn_block_size == 256);
}

// llama_kv_cache_msa: the main cache over all 60 layers, then an indexer cache over the 57 sparse ones with one
// head, K indexer_head_size (128) wide and a V row of n_embd_head_v (128) the model is not MLA, so it keeps.
TEST_CASE("MiniMax-M3 on llama.cpp: 2,048 B per cell per layer, an indexer cache of 512 B per cell on 57 layers") {
    const ModelSpec m = fixture(kM3);
    LlamaOptions o;
    o.n_ctx = 32768;
    auto l = llamacpp_layout(m, o);
    REQUIRE(l);
    REQUIRE(l->log_lines.size() == 4);
    CHECK(l->log_lines[0] == "llama_kv_cache_msa: creating main KV cache, size = 32768 cells");
    CHECK(l->log_lines[1] ==
          "llama_kv_cache: size = 3840.00 MiB ( 32768 cells,  60 layers,  1/1 seqs), K (f16): "
          "1920.00 MiB, V (f16): 1920.00 MiB");
    CHECK(l->log_lines[2] == "llama_kv_cache_msa: creating indexer KV cache, size = 32768 cells");
    CHECK(l->log_lines[3] ==
          "llama_kv_cache: size =  912.00 MiB ( 32768 cells,  57 layers,  1/1 seqs), K (f16): "
          " 456.00 MiB, V (f16):  456.00 MiB");
    CHECK(l->bytes_per_token == 60 * 2048 + 57 * 512);
    // Before b10144 llama.cpp has no minimax-m3.
    LlamaOptions old = o;
    old.msa_cache = false;
    CHECK(llamacpp_layout(m, old).error().detail.code == "llamacpp_msa_build");
}

TEST_CASE("MiniMax-M3 on transformers: refused, the library has no minimax_m3 model") {
    for (const char* id : {kM3, kNvfp4})
        CHECK(transformers_cache(fixture(id)).error().detail.code == "transformers_minimax_m3");
}

// MiniMax-M2 (MiniMaxM2ForCausalLM, the class of M2, M2.1, M2.5 and M2.7): GQA on all 62 layers, RoPE over 64 of each
// head's 128 dims, q_norm / k_norm over the whole projections, 256 experts top-8 with a float32 gate and
// e_score_correction_bias in vLLM (minimax_m2.py, v0.11.1 .. v0.27.1). The config is MiniMax-M2.5's config.json as a
// public Ascend quantization guide quotes it (its quantization_config removed there), with the fp8 quantization_config
// another repository's test quotes byte for byte from MiniMax-M2's; put together here, so not a fixture of its own.
const char* const kM25 = R"json({
  "architectures": ["MiniMaxM2ForCausalLM"],
  "attn_type_list": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
  "auto_map": {
    "AutoConfig": "configuration_minimax_m2.MiniMaxM2Config",
    "AutoModelForCausalLM": "modeling_minimax_m2.MiniMaxM2ForCausalLM"
  },
  "head_dim": 128,
  "hidden_act": "silu",
  "hidden_size": 3072,
  "intermediate_size": 1536,
  "max_position_embeddings": 196608,
  "model_type": "minimax_m2",
  "mtp_transformer_layers": 1,
  "num_attention_heads": 48,
  "num_experts_per_tok": 8,
  "num_hidden_layers": 62,
  "num_key_value_heads": 8,
  "num_local_experts": 256,
  "num_mtp_modules": 3,
  "qk_norm_type": "per_layer",
  "quantization_config": {
    "activation_scheme": "dynamic",
    "fmt": "float8_e4m3fn",
    "quant_method": "fp8",
    "weight_block_size": [128, 128],
    "modules_to_not_convert": ["gate", "e_score_correction_bias", "lm_head"]
  },
  "rms_norm_eps": 1e-06,
  "rope_theta": 5000000,
  "rotary_dim": 64,
  "scoring_func": "sigmoid",
  "shared_intermediate_size": 0,
  "tie_word_embeddings": false,
  "transformers_version": "4.46.1",
  "use_cache": true,
  "use_mtp": true,
  "use_qk_norm": true,
  "use_routing_bias": true,
  "vocab_size": 200064,
  "torch_dtype": "bfloat16"
})json";

TEST_CASE("MiniMax-M2: a known family, 62 GQA layers of 8 KV heads x 128, 228,689,764,864 parameters") {
    auto m = parse_config(kM25, "MiniMaxAI/MiniMax-M2.5");
    REQUIRE(m.ok());
    for (const Message& n : m->notes) CHECK(n.code != "generic");
    CHECK(m->layers.size() == 62);
    CHECK(ideal_kv(*m, uniform_kv_dtypes(*m, vllm_auto_kv_type("bfloat16"))).bytes_per_token == 62 * 2 * 8 * 128 * 2);
    auto p = count_params(*m);
    REQUIRE(p);
    const int64_t H = 3072, V = 200064;
    // q, k, v, o; q_norm and k_norm over 48 x 128 and 8 x 128; two RMSNorms; the gate and its bias; the experts.
    const int64_t layer = H * 6144 + 2 * H * 1024 + 6144 * H + 6144 + 1024 + 2 * H + 256 * H + 256 + 256 * 3 * H * 1536;
    CHECK(p->total == 2 * V * H + H + 62 * layer);
    CHECK(p->total == 228689764864);
}

TEST_CASE("MiniMax-M2 on vLLM: the router in float32, the q/k norms split over TP, RoPE over 64 dims") {
    auto m = parse_config(kM25, "MiniMaxAI/MiniMax-M2.5");
    REQUIRE(m.ok());
    BudgetInputs in;
    in.gpu = "h100-sxm";
    in.gpu_count = 4;
    in.context = 32768;
    auto r = compute_budget(*m, in);
    REQUIRE(r.ok());
    auto param = [&](const char* code, const char* name) {
        for (const Message& n : r->notes)
            if (n.code == code) return n.param(name);
        return std::string("(none)");
    };
    // The gate's 256 x 3,072 and the bias's 256 at 4 bytes instead of 2, on every rank: 62 x 786,688 x 2 B.
    CHECK(param("vllm_fp32_router", "bytes") == format_bytes(62 * (256 * 3072 + 256) * 2));
    // 196,608 positions x 64 rotary dims x 2 B.
    CHECK(param("vllm_rope_cache", "bytes") == format_bytes(int64_t(196608) * 64 * 2));
    CHECK(r->weights_per_gpu_bytes == 57702473472);
    CHECK(r->capacity.tokens == 212320);
}
