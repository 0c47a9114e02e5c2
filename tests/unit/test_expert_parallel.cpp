// vLLM's expert parallelism (`vllm serve --tensor-parallel-size N --enable-expert-parallel`), read at v0.27.1:
// FusedMoEParallelConfig.make (fused_moe/config.py) makes the EP group TP x DP (x PCP) and the MoE layer's own TP 1,
// so each rank holds whole experts; determine_expert_map (fused_moe/expert_map_manager.py, layer.py before 0.24)
// gives the first E % EP ranks one expert more ("linear", the default), and before 0.10.1 (PR #21497) gave the
// remainder to the last rank. Attention, dense MLPs, shared experts and the embeddings stay tensor-parallel, and
// get_kv_cache_configs keeps the fewest blocks of any worker, so the fullest rank sizes the cache.
#include <doctest/doctest.h>

#include "base/message.h"
#include "budget/budget.h"
#include "fixtures.h"
#include "model/weights.h"
#include "report/answer.h"
#include "report/json.h"

using kvb::test::fixture;

namespace {

bool has_note(const kvb::BudgetResult& r, const std::string& code) {
    for (const kvb::Message& n : r.notes)
        if (n.code == code) return true;
    return false;
}

}  // namespace

TEST_CASE("expert parallel: determine_expert_map's fullest rank") {
    CHECK(kvb::ep_local_experts(128, {}) == 128);
    CHECK(kvb::ep_local_experts(128, {8, false}) == 16);
    // 60 experts (Qwen1.5-MoE) over 8 ranks: 0.10.1 on, ranks 0-3 hold 8; before, rank 7 held 7 + 4.
    CHECK(kvb::ep_local_experts(60, {8, false}) == 8);
    CHECK(kvb::ep_local_experts(60, {8, true}) == 11);
}

TEST_CASE("expert parallel: whole experts on the fullest rank, the rest split by TP") {
    // Qwen3-30B-A3B in bf16: an expert is 3 x 768 x 2,048 x 2 B = 9,437,184 B, 128 of them on each of 48 layers.
    auto m = fixture("Qwen/Qwen3-30B-A3B");
    auto f = kvb::weight_format("bf16", m);
    REQUIRE(f.ok());
    auto tp3 = kvb::weight_bytes(m, f.value(), 0, 3, 1);
    auto ep3 = kvb::weight_bytes(m, f.value(), 0, 3, 1, false, {}, {3, false});
    auto ep3_old = kvb::weight_bytes(m, f.value(), 0, 3, 1, false, {}, {3, true});
    REQUIRE(tp3.ok());
    REQUIRE(ep3.ok());
    REQUIRE(ep3_old.ok());
    CHECK(ep3->bytes == tp3->bytes);  // the checkpoint is the same; only its placement differs
    // TP 3 gives each rank a third of every expert: 48 x 3 x ceil(128 x 3,145,728 / 3) = 19,327,352,832 B.
    // EP 3 gives rank 0 43 whole experts (128 = 43 + 43 + 42): 48 x 43 x 9,437,184 = 19,478,347,776 B.
    CHECK(ep3->per_gpu_bytes - tp3->per_gpu_bytes == 19478347776 - 19327352832);
    // Before 0.10.1 the last rank held 42 + 2.
    CHECK(ep3_old->per_gpu_bytes - tp3->per_gpu_bytes == 48LL * 44 * 9437184 - 19327352832);
}

// Qwen/Qwen3-30B-A3B-FP8 (fp8 in 128 x 128 blocks): at TP 4 the experts' 768 split into 192, and fp8.py
// Fp8MoEMethod.create_weights stops (vllm-project/vllm#25292); with expert parallelism its
// intermediate_size_per_partition is the whole 768, a multiple of 128, and vLLM starts.
TEST_CASE("expert parallel: Qwen3-30B-A3B-FP8 on 4 x RTX 4090 starts with --enable-expert-parallel") {
    auto m = fixture("Qwen/Qwen3-30B-A3B-FP8");
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.gpu_count = 4;
    in.context = 32768;
    auto refused = kvb::compute_answer(m, in);
    REQUIRE(refused.ok());
    REQUIRE(refused->budget);
    CHECK(refused->budget->startup_refused);
    CHECK(has_note(*refused->budget, "vllm_fp8_moe_block_fix"));
    REQUIRE(refused->advice);
    CHECK(refused->advice->code == "advice_vllm_ep");
    CHECK(refused->advice->param("max") == "40,960");
    CHECK(kvb::test::advised_changes(*refused) == std::map<std::string, std::string>{{"expert_parallel", "true"}});

    in.expert_parallel = true;
    auto b = kvb::compute_budget(m, in);
    REQUIRE(b.ok());
    CHECK(b->fits);
    CHECK_FALSE(b->startup_refused);
    CHECK(b->ep == 4);
    CHECK(b->ep_local_experts == 32);
    CHECK(has_note(*b, "vllm_ep"));
    // 48 layers x 32 experts x (3 x 768 x 2,048 fp8 B + 3 x 96 fp32 block scales) = 7,249,526,784 B of experts,
    // the same as a quarter of every expert; the other 573,786,112 B are the TP-split rest and the RoPE cache.
    CHECK(b->weights_per_gpu_bytes == 7823312896);
    REQUIRE(b->log_lines.size() == 1);
    CHECK(b->log_lines[0] ==
          "GPU KV cache size: 500,976 tokens, Maximum concurrency for 32,768 tokens per request: "
          "15.29x");
    CHECK(b->command ==
          "vllm serve Qwen/Qwen3-30B-A3B-FP8 --max-model-len 32768 --tensor-parallel-size 4 --enable-expert-parallel");
}

// Qwen/Qwen3-235B-A22B-FP8 at TP 8: 1,536 / 8 = 192 (vllm-project/vllm#17569); with EP each H100 holds 16 of each
// layer's 128 experts: 94 x 16 x 18,878,976 B = 28,393,979,904 B.
TEST_CASE("expert parallel: Qwen3-235B-A22B-FP8 on 8 x H100") {
    auto m = fixture("Qwen/Qwen3-235B-A22B-FP8");
    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.gpu_count = 8;
    in.context = 32768;
    auto refused = kvb::compute_budget(m, in);
    REQUIRE(refused.ok());
    CHECK(refused->startup_refused);
    CHECK(refused->engine_error ==
          "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128.");
    in.expert_parallel = true;
    auto b = kvb::compute_budget(m, in);
    REQUIRE(b.ok());
    CHECK(b->fits);
    CHECK(b->ep_local_experts == 16);
    CHECK(b->weights_per_gpu_bytes == 29703105024);
    REQUIRE(b->log_lines.size() == 1);
    CHECK(b->log_lines[0] ==
          "GPU KV cache size: 849,616 tokens, Maximum concurrency for 32,768 tokens per request: "
          "25.93x");
    // 0.10.0: the two-line log, no CUDA graphs counted; 128 / 8 has no remainder, so the old placement is the same.
    in.engine_version = "0.10.0";
    auto old = kvb::compute_budget(m, in);
    REQUIRE(old.ok());
    CHECK(old->weights_per_gpu_bytes == 29703105024);
    REQUIRE(old->log_lines.size() == 2);
    CHECK(old->log_lines[0] == "GPU KV cache size: 866,496 tokens");
    // The flag came in 0.8.0 (PR #14305): 0.7.3's argparse refuses it.
    in.engine_version = "0.7.3";
    auto none = kvb::compute_budget(m, in);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().detail.code == "vllm_ep_release");
}

// DeepSeek-V3 (256 experts, 128 x 128 fp8 blocks) at TP 8 loads either way; EP places 32 experts a GPU, the same
// bytes, and only the profile's MoE caches widen (a whole 2,048-wide expert per token, not 256).
TEST_CASE("expert parallel: DeepSeek-V3 on 8 x H200") {
    auto m = fixture("deepseek-ai/DeepSeek-V3");
    kvb::BudgetInputs in;
    in.gpu = "h200";
    in.gpu_count = 8;
    in.context = 32768;
    auto tp = kvb::compute_budget(m, in);
    in.expert_parallel = true;
    auto ep = kvb::compute_budget(m, in);
    REQUIRE(tp.ok());
    REQUIRE(ep.ok());
    CHECK(ep->ep_local_experts == 32);
    CHECK(ep->weights_per_gpu_bytes == tp->weights_per_gpu_bytes);
    // With the 58 MoE layers' score correction biases in float32 (58 x 256 x 2 B more than at bf16's width).
    CHECK(ep->weights_per_gpu_bytes == 85161072672 + 58 * 256 * 2);
    CHECK(tp->log_lines[0] ==
          "GPU KV cache size: 679,488 tokens, Maximum concurrency for 32,768 tokens per request: "
          "20.74x");
    CHECK(ep->log_lines[0] ==
          "GPU KV cache size: 669,456 tokens, Maximum concurrency for 32,768 tokens per request: "
          "20.43x");
}

TEST_CASE("expert parallel: where the flag does nothing, and engines that have none") {
    auto m = fixture("Qwen/Qwen3-30B-A3B");
    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.context = 32768;
    in.expert_parallel = true;
    auto one = kvb::compute_budget(m, in);  // TP 1: use_ep needs more than one rank
    REQUIRE(one.ok());
    CHECK(one->ep == 1);
    CHECK(has_note(*one, "vllm_ep_one_gpu"));
    CHECK(one->command.find("--enable-expert-parallel") == std::string::npos);
    auto dense = kvb::compute_budget(fixture("Qwen/Qwen3-8B"), [&] {
        kvb::BudgetInputs d = in;
        d.gpu_count = 2;
        return d;
    }());
    REQUIRE(dense.ok());
    CHECK(dense->ep == 1);
    CHECK(has_note(*dense, "vllm_ep_dense"));
    in.engine = kvb::BudgetEngine::LlamaCpp;
    auto llama = kvb::compute_budget(m, in);
    REQUIRE_FALSE(llama.ok());
    CHECK(llama.error().detail.code == "expert_parallel_not_vllm");
    CHECK(kvb::render_english(llama.error().detail) ==
          "--enable-expert-parallel is vLLM's: llama.cpp places whole layers on each GPU and has no expert "
          "parallelism");
}

TEST_CASE("expert parallel: the JSON inputs carry it") {
    auto in = kvb::budget_inputs_from_json(R"({"gpu": "h100", "gpu_count": 8, "expert_parallel": true})");
    REQUIRE(in.ok());
    CHECK(in->expert_parallel);
    auto a = kvb::compute_answer(fixture("Qwen/Qwen3-30B-A3B"), in.value());
    REQUIRE(a.ok());
    const std::string j = kvb::to_json_text(a.value());
    CHECK(j.find("\"expert_parallel\":true") != std::string::npos);
    CHECK(j.find("\"expert_parallel_size\":8") != std::string::npos);
    CHECK(j.find("\"ep_local_experts\":16") != std::string::npos);
}
