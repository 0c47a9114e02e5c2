// RoPE scaling: what config.json / GGUF say, the length vLLM derives from it
// (vllm/config/model.py _get_and_verify_max_len), llama.cpp's n_ctx_train, the user's
// --rope-scaling and the flags each engine gets, and the context memory alone would hold.
#include <doctest/doctest.h>

#include "budget/budget.h"
#include "budget/estimates.h"
#include "fixtures.h"
#include "model/rope.h"
#include "report/answer.h"
#include "report/json.h"

using kvb::test::fixture;

namespace {

kvb::BudgetInputs h100(int64_t context, const std::string& rope = "", kvb::BudgetEngine e = kvb::BudgetEngine::Vllm) {
    kvb::BudgetInputs in;
    in.engine = e;
    in.gpu = "h100";
    in.context = context;
    in.rope_scaling = rope;
    return in;
}

}  // namespace

TEST_CASE("config.json rope_scaling and the length vLLM derives from it") {
    auto q = fixture("Qwen/Qwen3-8B");
    CHECK_FALSE(q.rope_scaling.has_value());
    auto c = kvb::context_limits(q);
    CHECK(c.native == 40960);
    CHECK(c.max_len == 40960);
    CHECK(c.n_ctx_train == 40960);
    CHECK_FALSE(c.vllm_scaled);

    // YaRN: original_max_position_embeddings x factor (4,096 x 40).
    auto ds = fixture("deepseek-ai/DeepSeek-V3");
    REQUIRE(ds.rope_scaling.has_value());
    CHECK(ds.rope_scaling->type == "yarn");
    CHECK(ds.rope_scaling->factor == 40.0);
    CHECK(ds.rope_scaling->original_max_position_embeddings == 4096);
    CHECK(kvb::context_limits(ds).max_len == 163840);
    CHECK(kvb::py_float_text(kvb::context_limits(ds).vllm_derived) == "163840.0");

    // llama3 rope is not multiplied (vLLM skips su / longrope / llama3).
    auto l31 = fixture("meta-llama/Llama-3.1-8B");
    CHECK(l31.rope_scaling->type == "llama3");
    CHECK(kvb::context_limits(l31).max_len == 131072);
    CHECK_FALSE(kvb::context_limits(l31).vllm_scaled);

    // LongRoPE: the limit stays 131,072 but vLLM defaults to the original 4,096.
    auto phi = fixture("microsoft/Phi-3.5-mini-instruct");
    CHECK(phi.rope_scaling->type == "longrope");
    CHECK(phi.original_max_position_embeddings == 4096);
    CHECK(kvb::context_limits(phi).max_len == 131072);
    CHECK(kvb::context_limits(phi).vllm_default == 4096);

    // Gemma 3's length is already scaled; "type": "mrope" is the default rope.
    CHECK(kvb::context_limits(fixture("google/gemma-3-4b-it")).max_len == 131072);
    auto vl = fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ");
    CHECK(vl.rope_scaling->type == "default");
    CHECK(kvb::context_limits(vl).max_len == 32768);
}

TEST_CASE("--rope-scaling syntax") {
    auto r = kvb::parse_rope_scaling("yarn:4:32768");
    REQUIRE(r.ok());
    CHECK(r->type == "yarn");
    CHECK(r->factor == 4.0);
    CHECK(r->original_max_position_embeddings == 32768);
    CHECK(kvb::rope_scaling_text(r.value()) == "yarn:4:32768");
    CHECK(kvb::parse_rope_scaling("linear:2.5")->factor == 2.5);
    CHECK(kvb::parse_rope_scaling("foo:2").error().message ==
          "RoPE scaling 'foo:2' is not TYPE:FACTOR[:ORIGINAL] with TYPE yarn, linear or dynamic (e.g. yarn:4:32768)");
    CHECK(kvb::parse_rope_scaling("yarn:1").error().message ==
          "RoPE scaling factor '1' is not a number above 1 and at most 1024");
    CHECK(kvb::parse_rope_scaling("yarn").error().detail.code == "rope_scaling_syntax");
    CHECK(kvb::parse_rope_scaling("yarn:4:0").error().detail.code == "rope_scaling_syntax");
}

TEST_CASE("Qwen3-8B with the model card's YaRN x4: 131,072 tokens, 18 GiB of KV at 128K") {
    auto m = fixture("Qwen/Qwen3-8B");
    auto offer = kvb::documented_rope_scaling(m);
    REQUIRE(offer.has_value());
    CHECK(kvb::rope_scaling_text(*offer) == "yarn:4:32768");
    CHECK(offer->max_len == 131072);

    auto a = kvb::compute_answer(m, h100(131072, "yarn:4"));
    REQUIRE(a.ok());
    REQUIRE(a->budget.has_value());
    const kvb::BudgetResult& b = *a->budget;
    CHECK(b.fits);
    CHECK(b.model_max_len == 131072);
    CHECK(b.native_max_len == 40960);
    CHECK(b.n_ctx_train == 40960);
    CHECK(b.rope_scaling->original_max_position_embeddings == 32768);  // the model card's, not 40,960
    CHECK(a->metrics.kv_bytes_total == 19327352832);                   // 18.00 GiB: the seed article's row
    CHECK(*a->metrics.max_context == 131072);
    CHECK(*a->metrics.max_context_physical ==
          385200);  // 160 tokens under 385,360 before: the YaRN cache holds 131,072 rows, not 40,960
    CHECK(b.command ==
          "vllm serve Qwen/Qwen3-8B --max-model-len 131072 --hf-overrides "
          "'{\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":4.0,\"original_max_position_embeddings\":32768}}'");
    CHECK(a->kv.context_table.back().row.context == 131072);
    CHECK(a->kv.context_table.back().row.is_model_max);
    CHECK(a->kv.context_table.back().row.bytes_total == 19327352832);

    auto l = kvb::compute_budget(m, h100(131072, "yarn:4", kvb::BudgetEngine::LlamaCpp));
    REQUIRE(l.ok());
    CHECK(l->command ==
          "llama-server -m Qwen3-8B-Q4_K_M.gguf -c 131072 -np 1 --rope-scaling yarn --rope-scale 4 --yarn-orig-ctx "
          "32768 -ngl 99");
    // llama.cpp keeps n_ctx_train from the GGUF and warns past it, YaRN or not.
    bool warned = false;
    for (const auto& n : l->notes)
        warned |= kvb::render_english(n) ==
                  "llama_context: n_ctx_seq (131072) > n_ctx_train (40960) -- possible training context overflow";
    CHECK(warned);

    CHECK(kvb::compute_budget(m, h100(0, "dynamic:2", kvb::BudgetEngine::LlamaCpp)).error().message ==
          "llama.cpp has no dynamic (NTK) RoPE scaling; use yarn or linear");
}

TEST_CASE("past the model's limit: vLLM refuses in its words, the numbers and the physical fit stay") {
    auto m = fixture("Qwen/Qwen3-8B");
    kvb::BudgetInputs in = h100(131072);
    in.gpu = "rtx-4090";
    auto a = kvb::compute_answer(m, in);
    REQUIRE(a.ok());
    CHECK_FALSE(a->refusal.has_value());
    REQUIRE(a->budget.has_value());
    const kvb::BudgetResult& b = *a->budget;
    CHECK_FALSE(b.fits);
    CHECK(b.over_model_max);
    CHECK(b.engine_error.rfind("User-specified max_model_len (131072) is greater than the derived max_model_len "
                               "(max_position_embeddings=40960.0 or model_max_length=None in model's config.json).",
                               0) == 0);
    CHECK(b.log_lines.empty());  // vLLM stops before it counts memory
    CHECK(kvb::render_english(b.verdict_reason) ==
          "131,072 tokens is past the model's limit of 40,960: vLLM refuses to start. Memory alone would hold 31,008 "
          "tokens per sequence");
    CHECK(*a->metrics.max_context == 31008);
    CHECK(*a->metrics.max_context_physical == 31008);
    CHECK(b.command == "vllm serve Qwen/Qwen3-8B --max-model-len 31008");
    CHECK(a->kv.context_table.back().row.context == 131072);  // the table runs to the chosen context

    auto big = kvb::compute_answer(m, h100(131072));
    CHECK(*big->metrics.max_context == 40960);
    CHECK(*big->metrics.max_context_physical == 385360);

    // llama.cpp allocates it (with its n_ctx_train warning), but llama-server (from b6925) gives a
    // slot at most n_ctx_train: the longest context a request gets is the model's 40,960.
    auto llama = kvb::compute_answer(m, h100(131072, "", kvb::BudgetEngine::LlamaCpp));
    CHECK(llama->budget->fits);
    CHECK(llama->budget->max_context_capped);
    CHECK(llama->budget->slot_capped);
    CHECK(*llama->metrics.max_context == 40960);
    CHECK(*llama->metrics.max_context_physical == 539136);
    // Builds before the cap ran the whole cache per slot: the longest context is the one asked.
    kvb::BudgetInputs old = h100(131072, "", kvb::BudgetEngine::LlamaCpp);
    old.engine_version = "b6924";
    auto before = kvb::compute_answer(m, old);
    CHECK_FALSE(before->budget->slot_capped);
    CHECK(*before->metrics.max_context == 131072);
    CHECK(*before->metrics.max_context_physical == 539136);
}

TEST_CASE("CLI: --rope-scaling and max-context-physical in budget --json") {
    const std::string q = kvb::test::config_path("Qwen--Qwen3-8B");
    auto r = kvb::test::run_cli("budget " + q + " --gpu h100 --max-model-len 131072 --rope-scaling yarn:4 --json");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"max-context\":131072,\"max-context-physical\":385200") != std::string::npos);
    CHECK(r.out.find("\"kv-bytes-total\":19327352832") != std::string::npos);
    r = kvb::test::run_cli("budget " + q + " --gpu rtx-4090 --max-model-len 131072");
    CHECK(r.status == 0);
    CHECK(r.out.find("verdict: DOES NOT FIT (131,072 tokens x 1 request)\n  131,072 tokens is past the model's limit "
                     "of 40,960: vLLM refuses to start.") != std::string::npos);
    r = kvb::test::run_cli("budget " + q + " --gpu h100 --rope-scaling yarn:x");
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: RoPE scaling factor 'x' is not a number above 1 and at most 1024\n");
}

// vLLM's RoPE cos/sin caches (v0.27.1, layers/rotary_embedding/): get_rope keeps one RotaryEmbedding per distinct
// (head_size, rotary_dim, max_position, rope_parameters, dtype) in _ROPE_DICT, each a [rows, rotary_dim] buffer of
// cos and sin halves in get_rope's dtype (the served one unless the model file passes its own); rotary_dim is
// rope_parameters' rope_dim, else int(head_size x partial_rotary_factor).
TEST_CASE("vLLM's RoPE caches: rows x rotary_dim x dtype bytes, one per distinct RoPE") {
    const auto bytes = [](const kvb::ModelSpec& m) { return kvb::vllm_rotary_cache_bytes(m, 2); };
    // gpt_oss.py: get_rope(..., dtype=torch.float32) with YaRN from the config; yarn_scaling_rope.py caches
    // arange(original 4,096 x factor 32) = 131,072 rows x 64 x 4 B = 32 MiB (16 MiB in bfloat16 before).
    CHECK(bytes(fixture("openai/gpt-oss-20b")) == 131072LL * 64 * 4);
    // qwen3_next.py: head_dim 256 x partial_rotary_factor 0.25 = 64 columns over 262,144 positions x 2 B = 32 MiB.
    CHECK(bytes(fixture("Qwen/Qwen3-Next-80B-A3B-Thinking")) == 262144LL * 64 * 2);
    // glm4_moe.py: head_dim 128 x partial_rotary_factor 0.5 = 64 over 131,072 positions x 2 B = 16 MiB.
    CHECK(bytes(fixture("zai-org/GLM-4.5-Air")) == 131072LL * 64 * 2);
    // gemma3.py (a transformers 4 config): the full layers use the config's rope (theta 1,000,000), the sliding
    // ones default RoPE at rope_local_base_freq 10,000: two keys, each 32,768 x 256 x 2 B = 16 MiB.
    CHECK(bytes(fixture("google/gemma-3-1b-it")) == 2 * 32768LL * 256 * 2);
    // gemma-3-4b-it's full layers scale linearly by 8: linear_scaling_rope.py caches arange(131,072 x 8) rows x 256
    // x 2 B = 512 MiB, beside the sliding layers' 131,072 x 256 x 2 B = 64 MiB.
    CHECK(bytes(fixture("google/gemma-3-4b-it")) == 131072LL * 8 * 256 * 2 + 131072LL * 256 * 2);
    // gemma4.py with per-layer-type rope_parameters: sliding layers default RoPE over head_dim 256; full layers
    // "proportional" over global_head_dim 512, which gemma4_rope.py caches whole (rotary_dim = head_size, the
    // partial factor 0.25 only zeroes frequencies): 262,144 x (256 + 512) x 2 B = 384 MiB.
    CHECK(bytes(fixture("google/gemma-4-31B-it")) == 262144LL * (256 + 512) * 2);
    // laguna.py: full layers YaRN x64 from 4,096 at partial 0.5 (64 of 128), sliding layers default at 1.0:
    // 262,144 x 64 x 2 B + 262,144 x 128 x 2 B = 96 MiB.
    CHECK(bytes(fixture("poolside/Laguna-XS.2-FP8")) == 262144LL * 64 * 2 + 262144LL * 128 * 2);
    // minimax_text_01.py (v0.20.0): partial_rotary_factor = rotary_dim 64 / head_dim 128: 10,240,000 x 64 x 2 B.
    CHECK(bytes(fixture("MiniMaxAI/MiniMax-M1-80k")) == 10240000LL * 64 * 2);
    // mrope.py caches 4 x max_position (video positions run past it): Qwen2.5-VL 128,000 x 4 x 128 x 2 B.
    CHECK(bytes(fixture("Qwen/Qwen2.5-VL-7B-Instruct")) == 128000LL * 4 * 128 * 2);
    // phi3_long_rope_scaled_rope.py: a short cache of the original 4,096 rows above a long one of 131,072;
    // head_dim 96 (3,072 / 32 heads) x 2 B.
    CHECK(bytes(fixture("microsoft/Phi-3.5-mini-instruct")) == (4096LL + 131072) * 96 * 2);
    // DeepSeek-V4-Flash (models/deepseek_v4/common/rope.py): rope_dim 64, compress_rope_theta on the compressing
    // layers and rope_theta on the others (two keys), DeepseekV4ScalingRotaryEmbedding in float32 over
    // arange(65,536 x 16) rows: 2 x 1,048,576 x 64 x 4 B = 512 MiB.
    CHECK(bytes(fixture("deepseek-ai/DeepSeek-V4-Flash")) == 2 * 1048576LL * 64 * 4);
    // DeepSeek-V3's MLA: qk_rope_head_dim 64, deepseek_yarn over 4,096 x 40 = 163,840 rows x 2 B.
    CHECK(bytes(fixture("deepseek-ai/DeepSeek-V3")) == 163840LL * 64 * 2);
    // Qwen3-8B with the user's YaRN x4 from 32,768 (--hf-overrides): 131,072 rows x 128 x 2 B = 32 MiB, not the
    // 40,960 rows of max_position_embeddings.
    const kvb::ModelSpec q = fixture("Qwen/Qwen3-8B");
    CHECK(bytes(q) == 40960LL * 128 * 2);
    auto yarn = kvb::parse_rope_scaling("yarn:4");
    REQUIRE(yarn.ok());
    CHECK(bytes(kvb::with_rope_scaling(q, yarn.value())) == 131072LL * 128 * 2);
}

// The vision encoders of qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py and glm4_1v.py build get_rope(head_dim,
// rotary_dim head_dim / 2, max_position 8,192) from vLLM 0.12.0 (PR #28798): a cache no text layer shares, with the
// tower on the first pipeline stage.
TEST_CASE("vLLM's vision encoder RoPE caches: 8,192 x head_dim / 2 from 0.12.0") {
    const auto bytes = [](const kvb::ModelSpec& m) { return kvb::vllm_vision_rotary_cache_bytes(m, 2); };
    // Qwen2.5-VL-7B: 1,280 / 16 heads = 80, 40 columns.
    const kvb::ModelSpec q25 = fixture("Qwen/Qwen2.5-VL-7B-Instruct");
    CHECK(bytes(q25) == 8192LL * 40 * 2);
    // Qwen2-VL: embed_dim 1,280 (the class's, the config lists none), 16 heads.
    CHECK(bytes(fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ")) == 8192LL * 40 * 2);
    // Qwen3.5: 1,152 / 16 = 72, 36 columns. GLM-4.1V: 1,536 / 12 = 128, 64 columns.
    CHECK(bytes(fixture("Qwen/Qwen3.5-27B")) == 8192LL * 36 * 2);
    CHECK(bytes(fixture("zai-org/GLM-4.1V-9B-Thinking")) == 8192LL * 64 * 2);
    // Other towers: none counted.
    CHECK(bytes(fixture("google/gemma-3-4b-it")) == 0);
    // In the answer: the first stage's weights and the note's bytes grow by it at 0.12.0, not at 0.11.2.
    auto in = h100(32768);
    in.engine_version = "0.11.2";
    auto before = kvb::compute_budget(q25, in);
    in.engine_version = "0.12.0";
    auto after = kvb::compute_budget(q25, in);
    REQUIRE(before.ok());
    REQUIRE(after.ok());
    CHECK(after->weights_per_gpu_bytes - before->weights_per_gpu_bytes == 8192LL * 40 * 2);
}
