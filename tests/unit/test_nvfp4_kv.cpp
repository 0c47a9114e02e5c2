// vLLM's NVFP4 KV cache (--kv-cache-dtype nvfp4 / nvfp4_4over6, or a ModelOpt checkpoint's declared NVFP4 cache):
//  - layout, vllm/utils/torch_utils.py nvfp4_kv_cache_full_dim (PR #37332, 6b2b7bd0e, first in 0.20.0): a head's row is
//    head_size // 2 bytes of packed 4-bit values + head_size // 16 fp8 (E4M3) block scales, K and V each;
//    kv_cache_interface.py FullAttentionSpec.real_page_size_bytes = block x heads x (full_dim(K) + full_dim(V)) x 1
//    (uint8); AttentionSpec (chunked local) from PR #40177 (947138b6c, 0.21.0), SlidingWindowSpec from PR #42464
//    (a8c13d283, 0.21.0rc2); FlashInferBackend.get_kv_cache_shape packs the same bytes (num_blocks, 2 x heads, block,
//    full_dim) at v0.27.1. The per-tensor k_scale / v_scale are layer parameters, outside the page.
//  - backends: only FlashInfer lists nvfp4 (PR #40177, 0.21.0; 0.20.x lists it nowhere), only on compute capability
//    10.x from 0.25.0 (supports_kv_cache_dtype, PR #43232), head sizes 64/128/256/512; VllmConfig refuses it with MLA
//    (validate_nvfp4_kv_cache_with_mla). Every FlashInferImpl then keeps an fp8 output buffer of
//    max_num_batched_tokens x query heads x head size (`_nvfp4_fp8_out`), counted with the model's load.
// Read at v0.20.0, v0.21.0, v0.25.0 and v0.27.1 of vllm-project/vllm, and 1c94e8dc7 (nvfp4_4over6, PR #45187).
#include <doctest/doctest.h>

#include "base/message.h"
#include "budget/budget.h"
#include "engines/vllm.h"
#include "fixtures.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/config_reader.h"
#include "report/answer.h"

using kvb::test::fixture;
using kvb::test::fixture_text;

namespace {

bool has_note(const kvb::BudgetResult& r, const std::string& code) {
    for (const kvb::Message& n : r.notes)
        if (n.code == code) return true;
    return false;
}

kvb::BudgetResult budget(const kvb::ModelSpec& m, const std::string& gpu, const std::string& kv,
                         const std::string& version = "") {
    kvb::BudgetInputs in;
    in.gpu = gpu;
    in.context = 32768;
    in.kv_cache_dtype = kv;
    in.engine_version = version;
    auto r = kvb::compute_budget(m, in);
    REQUIRE(r.ok());
    return r.value();
}

}  // namespace

TEST_CASE("NVFP4 KV: 9 bytes per 16 values, in the ideal KV, vLLM's page and kvbudget kv alike") {
    const kvb::ModelSpec llama = fixture("meta-llama/Llama-3.1-8B-Instruct");
    const kvb::ModelSpec qwen = fixture("Qwen/Qwen3-8B");
    // A 128-wide head: 64 bytes of values + 8 scales = 72 per K row and per V row.
    auto t = kvb::vllm_kv_cache_dtype("nvfp4", llama);
    REQUIRE(t.ok());
    CHECK(t->bytes(128) == 72);
    CHECK(kvb::vllm_kv_cache_dtype("nvfp4_4over6", llama)->bytes(128) == 72);
    // Llama-3.1-8B: 32 layers x 8 KV heads x 2 x 72 = 36,864 B a token (bf16: 131,072; fp8: 65,536).
    auto lk = kvb::engine_kv(llama, "vllm", "nvfp4");
    REQUIRE(lk.ok());
    CHECK(kvb::ideal_kv(lk->view, lk->dtypes).bytes_per_token == 36864);
    // Qwen3-8B: 36 layers x 8 x 2 x 72 = 41,472 B.
    auto qk = kvb::engine_kv(qwen, "vllm", "nvfp4");
    REQUIRE(qk.ok());
    CHECK(kvb::ideal_kv(qk->view, qk->dtypes).bytes_per_token == 41472);

    // The page: 16 tokens x 8 heads x (72 + 72) = 18,432 B a layer, the cache tensor uint8.
    kvb::VllmOptions o;
    o.kv_cache_dtype = "nvfp4";
    o.max_model_len = 32768;
    auto L = kvb::vllm_layout(llama, o);
    REQUIRE(L.ok());
    CHECK(L->kv_cache_dtype == "nvfp4");
    CHECK(L->layers.at(0).page_size_bytes == 18432);
    CHECK(L->layers.at(0).dtype_bytes == 1);
    CHECK(L->page_size_bytes == 18432);
    // 100 GiB of KV: 107,374,182,400 / (32 x 18,432) = 182,044 blocks of 16 tokens.
    auto cap = kvb::vllm_capacity(llama, o, int64_t(100) << 30);
    REQUIRE(cap.ok());
    CHECK(cap->log_lines.at(0) ==
          "GPU KV cache size: 2,912,704 tokens, Maximum concurrency for 32,768 tokens per request: 88.89x");

    // Sliding-window pages pack it from 0.21.0rc2 (gpt-oss-20b: 64-wide heads, 64 / 2 + 64 / 16 = 36 B a row);
    // 0.21.0rc1's SlidingWindowSpec counted a uint8 per value (16 x 8 x 128 = 16,384 B beside the full layers'
    // 9,216), which vLLM cannot unify.
    const kvb::ModelSpec oss = fixture("openai/gpt-oss-20b");
    kvb::VllmOptions so = o;
    kvb::apply_vllm_release(kvb::vllm_release("0.21.0").value(), so);
    auto sl = kvb::vllm_layout(oss, so);
    REQUIRE(sl.ok());
    for (const kvb::VllmLayerSpec& s : sl->layers) CHECK(s.page_size_bytes == 9216);
    kvb::apply_vllm_release(kvb::vllm_release("0.21.0rc1").value(), so);
    auto rc1 = kvb::vllm_layout(oss, so);
    REQUIRE_FALSE(rc1.ok());
    CHECK(rc1.error().message.find("not divisible by the maximum page size") != std::string::npos);
}

TEST_CASE("NVFP4 KV on a B200: the pool and vLLM's line, with FlashInfer's fp8 output buffers counted") {
    const kvb::ModelSpec llama = fixture("meta-llama/Llama-3.1-8B-Instruct");
    const kvb::BudgetResult r = budget(llama, "b200", "nvfp4");
    CHECK(r.kv_cache_dtype == "nvfp4");
    CHECK(r.fits);
    CHECK_FALSE(r.startup_refused);
    CHECK(r.capacity.log_lines.at(0) ==
          "GPU KV cache size: 4,166,624 tokens, Maximum concurrency for 32,768 tokens per request: 127.16x");
    CHECK(r.command == "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768 --kv-cache-dtype nvfp4");
    // 32 layers x 16,384 batched tokens x 32 query heads x 128 = 2 GiB more than the same budget in fp8.
    const kvb::BudgetResult fp8 = budget(llama, "b200", "fp8");
    CHECK(r.weights_per_gpu_bytes - fp8.weights_per_gpu_bytes == 2147483648);
    REQUIRE(has_note(r, "vllm_nvfp4_out_buffer"));
    CHECK_FALSE(has_note(fp8, "vllm_nvfp4_out_buffer"));
    // The answer's KV numbers are the pool's: 36,864 B a token.
    kvb::BudgetInputs in;
    in.gpu = "b200";
    in.context = 32768;
    in.kv_cache_dtype = "nvfp4";
    auto a = kvb::compute_answer(llama, in);
    REQUIRE(a.ok());
    CHECK(a->metrics.kv_bytes_per_token == 36864);
    // nvfp4_4over6 (main after 0.27, 0.28.0 on) pages alike.
    CHECK(budget(llama, "b200", "nvfp4_4over6").capacity.log_lines.at(0) == r.capacity.log_lines.at(0));
}

TEST_CASE("NVFP4 KV: refused where vLLM refuses it, in its words") {
    const kvb::ModelSpec llama = fixture("meta-llama/Llama-3.1-8B-Instruct");
    // Off compute capability 10.x: FlashInfer is the only backend that lists nvfp4, and only there.
    const kvb::BudgetResult h100 = budget(llama, "h100-sxm", "nvfp4");
    CHECK(h100.startup_refused);
    CHECK_FALSE(h100.fits);
    CHECK(h100.verdict_reason.code == "vllm_nvfp4_kv_gpu");
    // vLLM's own words hold a repr of its selector config that changes by release: the reason says it, and the
    // engine's words stay empty rather than ours passed off as vLLM's. The fix names an explicit dtype: auto takes a
    // checkpoint's declared NVFP4 cache again.
    CHECK(h100.engine_error.empty());
    CHECK(kvb::render_english(h100.verdict_reason) ==
          "An NVFP4 KV cache (nvfp4) runs only on FlashInfer's trtllm-gen kernels, which need compute capability 10.x "
          "(B200, B300); NVIDIA H100 SXM5 80GB has compute capability 9.0, so vLLM stops at start-up (from 0.25.0 "
          "\"No valid attention backend found for cuda\", before that once FlashInfer's kernels first run). Re-run "
          "with --kv-cache-dtype fp8 or bfloat16.");
    CHECK(h100.capacity.log_lines.empty());
    CHECK(budget(llama, "rtx-5090", "nvfp4").verdict_reason.code == "vllm_nvfp4_kv_gpu");  // 12.0
    CHECK(budget(llama, "mi300x", "nvfp4").verdict_reason.code == "vllm_nvfp4_kv_gpu_amd");
    // 0.20.x takes the spelling, but no backend lists it.
    const kvb::BudgetResult v20 = budget(llama, "b200", "nvfp4", "0.20.0");
    CHECK(v20.startup_refused);
    CHECK(kvb::render_english(v20.verdict_reason) ==
          "vLLM 0.20.0 takes an NVFP4 KV cache (nvfp4), but none of its attention backends lists it, so it stops at "
          "start-up (\"No valid attention backend found for cuda\"); FlashInfer serves an NVFP4 KV cache from 0.21.0, "
          "on compute capability 10.x GPUs (B200, B300). Re-run with --kv-cache-dtype fp8 or bfloat16");
    CHECK_FALSE(budget(llama, "b200", "nvfp4", "0.21.0").startup_refused);
    // FlashInfer's head sizes (512 from 0.22.0): Phi-3.5-mini's 96 has no kernel.
    const kvb::ModelSpec phi = fixture("microsoft/Phi-3.5-mini-instruct");
    CHECK(kvb::render_english(budget(phi, "b200", "nvfp4").verdict_reason) ==
          "FlashInfer, the only attention backend that takes an NVFP4 KV cache (nvfp4), has kernels for head sizes 64, "
          "128, 256, 512, not 96, so vLLM stops at start-up (\"No valid attention backend found for cuda\"). Re-run "
          "with --kv-cache-dtype fp8 or bfloat16.");
    CHECK(budget(phi, "b200", "nvfp4", "0.21.0").verdict_reason.param("sizes") == "64, 128, 256");
    // MLA: VllmConfig's own ValueError, before any GPU is looked at (kvbudget kv too).
    const kvb::ModelSpec ds = fixture("deepseek-ai/DeepSeek-V3");
    const std::string mla =
        "nvfp4 KV cache is not supported with MLA (Multi-head Latent Attention) backends. Please use a different "
        "--kv-cache-dtype (e.g., 'fp8' or 'auto') for MLA models such as DeepSeek.";
    CHECK(kvb::vllm_kv_cache_dtype("nvfp4", ds).error().message == mla);
    CHECK(kvb::engine_kv(ds, "vllm", "nvfp4_4over6").error().message == mla);
    // Sparse MLA's nvfp4_ds_mla (0.29.0 on) has a record of its own, not read.
    CHECK(kvb::vllm_kv_cache_dtype("nvfp4_ds_mla", fixture("deepseek-ai/DeepSeek-V3.2")).error().detail.code ==
          "vllm_kv_dtype_not_modelled");
}
