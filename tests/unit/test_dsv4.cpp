// DeepSeek-V4 (Flash and Pro): its config read into per-layer compress ratios, its ideal KV, and how vLLM lays
// out and sizes its caches (vLLM v0.22.0 / v0.27.1 read from the tags: models/deepseek_v4/attention.py,
// compressor.py, v1/attention/backends/mla/sparse_swa.py, v1/kv_cache_interface.py, v1/core/kv_cache_utils.py).
#include <doctest/doctest.h>

#include <algorithm>

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

namespace {

ModelSpec load(const char* file) {
    auto m = parse_config(kvb::test::read_file(std::string(KVB_FIXTURES) + "/configs/" + file), file);
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
    return m.value();
}

const char* kFlash = "deepseek-ai--DeepSeek-V4-Flash.json";
const char* kPro = "deepseek-ai--DeepSeek-V4-Pro.json";

int64_t count_ratio(const ModelSpec& m, int64_t r) {
    return std::count_if(m.layers.begin(), m.layers.end(), [&](const Layer& l) { return l.compress_ratio == r; });
}

// vLLM 0.22 on a GPU with >= 70 GiB, as in vllm-project/vllm#44376 (2 x GH200, TP 2, --kv-cache-dtype fp8).
VllmOptions v022(int64_t mml, int64_t batched) {
    VllmOptions o;
    auto rel = vllm_release("0.22.0");
    REQUIRE(rel);
    o.kv_cache_dtype = "fp8";
    o.kv_cache_dtype_choices = rel->kv_cache_dtypes;
    o.log_format = rel->log_format;
    o.one_line_capacity = rel->one_line_capacity ? 1 : 0;
    o.dsv4 = rel->dsv4;
    o.concurrency_group_blocks = rel->concurrency_group_blocks;
    o.tensor_parallel_size = 2;
    o.max_model_len = mml;
    o.max_num_batched_tokens = batched;
    return o;
}

}  // namespace

TEST_CASE("DeepSeek-V4 configs: one Mla layer per decoder layer, with its window and compress ratio") {
    const ModelSpec f = load(kFlash);
    CHECK(f.family == "deepseek_v4");
    CHECK_FALSE(f.generic);
    REQUIRE(f.layers.size() == 43);
    // compress_ratios lists 44 entries: the 43 layers, then the MTP layer's (not cached without speculation).
    CHECK(count_ratio(f, 0) == 2);
    CHECK(count_ratio(f, 4) == 21);
    CHECK(count_ratio(f, 128) == 20);
    const Layer& l2 = f.layers[2];
    CHECK(l2.kind == LayerKind::Mla);
    CHECK(l2.kv_lora_rank + l2.qk_rope_head_dim == 512);  // head_dim: 448 NoPE + 64 RoPE
    CHECK(l2.window == 128);
    CHECK(l2.compress_ratio == 4);
    CHECK(l2.indexer_head_dim == 128);
    CHECK(f.layers[3].compress_ratio == 128);
    CHECK(f.layers[3].indexer_head_dim == 0);

    const ModelSpec p = load(kPro);
    REQUIRE(p.layers.size() == 61);
    CHECK(count_ratio(p, 0) == 0);
    CHECK(count_ratio(p, 4) == 30);
    CHECK(count_ratio(p, 128) == 31);

    // sgl-project's FP8 copy names the model deepseek_ref: the same geometry.
    const ModelSpec s = load("sgl-project--DeepSeek-V4-Flash-FP8.json");
    CHECK(s.family == "deepseek_v4");
    CHECK(count_ratio(s, 4) == 21);
}

TEST_CASE("DeepSeek-V4 config refusals") {
    const std::string text = kvb::test::read_file(std::string(KVB_FIXTURES) + "/configs/" + kFlash);
    std::string bad = text;
    // The first 4 in compress_ratios is layer 2's.
    const size_t at = bad.find("4", bad.find("\"compress_ratios\""));
    REQUIRE(at != std::string::npos);
    bad.replace(at, 1, "8");
    auto m = parse_config(bad, "x");
    REQUIRE_FALSE(m.ok());
    CHECK(m.error().detail.code == "dsv4_compress_ratio");
    CHECK(m.error().message == "x: compress_ratios[2] is 8; DeepSeek-V4 layers compress by 0, 1 (none), 4 or 128");
}

TEST_CASE("DeepSeek-V4 ideal KV: compressed latents and indexer keys per token, window latents capped") {
    const ModelSpec f = load(kFlash);
    const KvDtypes bf16 = uniform_kv_dtypes(f, vllm_kv_type("bfloat16", f.dtype).value());
    const IdealKv ik = ideal_kv(f, bf16);
    // 21 ratio-4 layers: (512 + 128) x 2 B / 4 = 320 B; 20 ratio-128 layers: 512 x 2 / 128 = 8 B.
    CHECK(ik.bytes_per_token == 21 * 320 + 20 * 8);  // 6,880 (the generic reader said 88,064)
    CHECK(ik.windowed_bytes_per_token == 43 * 1024);
    // 30,000 tokens: 6,880 x 30,000 + 43 layers x 128 window tokens x 1,024 B.
    CHECK(kv_bytes_at(f, bf16, 30000, 1).value() == 206400000 + 5636096);
    CHECK(kv_bytes_at(f, bf16, 100, 1).value() == 6880 * 100 + 43 * 100 * 1024);

    const ModelSpec p = load(kPro);
    const KvDtypes fp8 = uniform_kv_dtypes(p, vllm_kv_type("fp8", p.dtype).value());
    CHECK(ideal_kv(p, fp8).bytes_per_token == 30 * 160 + 31 * 4);  // 4,924
}

TEST_CASE("vLLM DeepSeek-V4 specs: 584 B latents, fp32 compressor states, 132 B indexer keys, 576 B pages") {
    const ModelSpec f = load(kFlash);
    auto lay = vllm_layout(f, v022(30000, 16384));
    REQUIRE_MESSAGE(lay.ok(), (lay.ok() ? "" : lay.error().message));
    CHECK(lay->kv_cache_dtype == "fp8_ds_mla");
    CHECK(lay->attn_block_size == 256);
    // 43 window caches + 41 compressed + 41 compressor states + 21 indexer keys + 21 indexer states.
    CHECK(lay->layers.size() == 167);
    auto find = [&](int64_t layer, int64_t cache) {
        for (const auto& s : lay->layers)
            if (s.layer == cache * 43 + layer) return s;
        FAIL("no spec");
        return VllmLayerSpec{};
    };
    // Window: 64 tokens x 584 B = 37,376, padded to 65 x 576.
    CHECK(find(0, kDsv4Swa).real_page_size_bytes == 37376);
    CHECK(find(0, kDsv4Swa).spec_type == "SlidingWindowMLASpec");
    // Ratio 4: 256 / 4 = 64 latents per 256-token block, the same page; ratio 128: 2 x 584 = 1,168 -> 1,728.
    CHECK(find(2, kDsv4Compressed).page_size_bytes == 37440);
    CHECK(find(3, kDsv4Compressed).real_page_size_bytes == 1168);
    CHECK(find(3, kDsv4Compressed).page_size_bytes == 1728);
    // Indexer keys: 64 x 132 = 8,448 -> 8,640; its compressor: 4 x 2 x 2 x 128 x 4 B = 8,192 -> 8,640.
    CHECK(find(2, kDsv4IndexerKeys).real_page_size_bytes == 8448);
    CHECK(find(2, kDsv4IndexerKeys).page_size_bytes == 8640);
    CHECK(find(2, kDsv4IndexerState).real_page_size_bytes == 8192);
    // Attention compressor states, 4 (ratio 4) or 8 (ratio 128) tokens x 2 x coff x 512 x 4 B = 32,768 -> 32,832,
    // then padded again to the compressed group's 37,440 when grouped.
    CHECK(find(2, kDsv4State).real_page_size_bytes == 32768);
    CHECK(find(2, kDsv4State).page_size_bytes == 37440);
    CHECK(find(3, kDsv4State).block_size == 8);
    CHECK(find(3, kDsv4State).window == 128);

    // Groups: compressed (21 + 20 + 21 indexer), window split in 22 + 21 (num_layer_tuples = _approximate_gcd
    // of [21, 43, 21, 20] from 21: 22, padding 5), ratio-4 states (21 + 21), ratio-128 states (20).
    REQUIRE(lay->groups.size() == 5);
    CHECK(lay->groups[0].layers.size() == 62);
    CHECK(lay->groups[0].page_size_bytes == 21 * 37440 + 20 * 1728 + 21 * 8640);
    CHECK(lay->groups[1].layers.size() == 22);
    CHECK(lay->groups[2].layers.size() == 21);
    CHECK(lay->groups[3].layers.size() == 42);
    CHECK(lay->groups[4].layers.size() == 20);
    CHECK(lay->tuple_page_bytes == 37440 + 1728 + 8640);  // 47,808
    CHECK(lay->num_layer_tuples == 22);
    CHECK(lay->bytes_per_block == 22 * 47808);  // 1,051,776 per block id, at any TP (nothing is split)
}

TEST_CASE("vLLM DeepSeek-V4-Flash at TP 2: vllm-project/vllm#44376's refusal, number for number") {
    // "(6.66 GiB KV cache is needed, which is larger than the available KV cache memory (5.44 GiB). Based on the
    // available memory, the estimated maximum model length is 13528." The log has no command line; with
    // --max-num-batched-tokens 16384 both printed numbers follow (8192 gives 3.40 GiB), so the test states it.
    const ModelSpec f = load(kFlash);
    // One request of 30,000: pages 118 (compressed, /256) + 2 x 259 (window, (16,384 + 127) / 64 + 1)
    // + 4,099 (ratio-4 states) + 2,065 (ratio-128 states) = 6,800, each x 22 x 47,808 B.
    CHECK(vllm_request_bytes(vllm_layout(f, v022(30000, 16384)).value(), 30000) == int64_t(6800) * 1051776);
    // 5.44 GiB as printed is any of 5,841,563,904 .. 5,843,667,455 B here (13,528 fits, 13,529 does not).
    auto c = vllm_capacity(f, v022(30000, 16384), 5841563904);
    REQUIRE(c.ok());
    CHECK_FALSE(c->fits);
    CHECK(c->error_text ==
          "To serve at least one request with the model's max seq len (30000), (6.66 GiB KV cache is needed, which "
          "is larger than the available KV cache memory (5.44 GiB). Based on the available memory, the estimated "
          "maximum model length is 13528. Try increasing `gpu_memory_utilization` (which also controls CPU memory "
          "on the CPU backend) or decreasing `max_model_len` when initializing the engine. See "
          "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
    CHECK(vllm_capacity(f, v022(30000, 16384), 5843667455)->estimated_max_model_len == 13528);
    // One byte more holds 5,556 pages: 13,529 to 13,532 tokens all need that many.
    CHECK(vllm_capacity(f, v022(30000, 16384), 5843667456)->estimated_max_model_len == 13532);
}

TEST_CASE("vLLM DeepSeek-V4 capacity lines: 0.22's concurrency and 0.27's per-group blocks") {
    const ModelSpec f = load(kFlash);
    // 20 GiB: 21,474,836,480 // 1,051,776 = 20,417 blocks.
    auto c = vllm_capacity(f, v022(30000, 16384), 20 * GiB);
    REQUIRE(c.ok());
    CHECK(c->num_blocks == 20417);
    CHECK(c->blocks_per_request == 6800);
    // 0.22: cdiv(118 x 1,002,240 + 259 x 823,680 + 259 x 786,240 + 4,099 x 967,680 + 2,065 x 748,800, 1,002,240)
    // = 6,035 -> 20,417 / 6,035 = 3.38.
    CHECK(c->log_lines == std::vector<std::string>{"GPU KV cache size: 101,492 tokens",
                                                   "Maximum concurrency for 30,000 tokens per request: 3.38x"});
    VllmOptions o = v022(30000, 16384);
    auto rel = vllm_release("0.27.1");
    o.concurrency_group_blocks = rel->concurrency_group_blocks;
    o.log_format = rel->log_format;  // 0.26 on: two batches in flight, the windows reserve 32,768 tokens
    o.kv_cache_dtype_choices = rel->kv_cache_dtypes;
    c = vllm_capacity(f, o, 20 * GiB);
    REQUIRE(c.ok());
    // 118 + 2 x (cdiv(30,000, 64) + 1 = 470) + (7,500 + 1) + (3,750 + 1) = 12,310: 20,417 / 12,310 = 1.66.
    CHECK(c->blocks_per_request == 12310);
    CHECK(c->log_lines == std::vector<std::string>{"GPU KV cache size: 49,757 tokens",
                                                   "Maximum concurrency for 30,000 tokens per request: 1.66x"});
}

TEST_CASE("vLLM DeepSeek-V4 refusals: fp8 only, 256-token blocks, releases from 0.20.0") {
    const ModelSpec f = load(kFlash);
    VllmOptions o = v022(30000, 16384);
    o.kv_cache_dtype = "auto";
    auto r = vllm_layout(f, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "vllm_refused");
    CHECK(r.error().message == "AssertionError: DeepseekV4 only supports fp8 kv-cache format for now, got auto");
    VllmOptions n;  // the newest release's wording
    n.kv_cache_dtype = "bfloat16";
    CHECK(vllm_layout(f, n).error().message ==
          "AssertionError: DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got bfloat16");
    n.kv_cache_dtype = "fp8_e4m3";
    CHECK(vllm_layout(f, n).value().kv_cache_dtype == "fp8_ds_mla");
    n.kv_cache_dtype = "fp8_ds_mla";
    CHECK(vllm_layout(f, n).ok());
    n.block_size = 64;
    CHECK(vllm_layout(f, n).error().detail.code == "vllm_dsv4_block_size");
    n.block_size = 256;
    CHECK(vllm_layout(f, n).ok());
    o.kv_cache_dtype = "fp8";
    o.dsv4 = vllm_release("0.19.1")->dsv4;
    CHECK(vllm_layout(f, o).error().detail.code == "vllm_dsv4_release");
    CHECK(vllm_release("0.20.0rc1")->dsv4 == 0);
    CHECK(vllm_release("0.20.0")->dsv4 == 1);
    CHECK(vllm_release("0.23.0")->dsv4 == 2);
    CHECK(vllm_release("0.24.0")->dsv4 == 3);
    CHECK_FALSE(vllm_release("0.26.0")->concurrency_group_blocks);
    CHECK(vllm_release("0.27.0")->concurrency_group_blocks);

    CHECK(llamacpp_layout(f, LlamaOptions{}).error().detail.code == "llamacpp_dsv4");
    CHECK(transformers_cache(f).error().detail.code == "transformers_dsv4");
}

TEST_CASE("vLLM DeepSeek-V4-Pro: 61 layers, 30 + 31 compressing") {
    const ModelSpec p = load(kPro);
    VllmOptions o = v022(30000, 16384);
    auto lay = vllm_layout(p, o);
    REQUIRE(lay.ok());
    // Tuples [31 (the compressed group's most common page: 31 ratio-128 latents), 61 (window), 31 (ratio-128
    // states), 30 (ratio-4 states)] from 31: _approximate_gcd picks 32 (pads 1 + 3 + 1 + 2), so the window caches
    // split 31 + 30; a block id then costs the longest page-size bucket of any group, 31 tuples.
    CHECK(lay->num_layer_tuples == 31);
    CHECK(lay->tuple_page_bytes == 47808);
    REQUIRE(lay->groups.size() == 5);
    CHECK(lay->groups[1].layers.size() == 31);
    CHECK(lay->groups[2].layers.size() == 30);
}

TEST_CASE("DeepSeek-V4 weights: its attention, compressors, indexers and hyper-connections; fp4 experts") {
    const ModelSpec f = load(kFlash);
    CHECK(f.dims.fp4_experts);  // expert_dtype fp4 under quant_method fp8 (vLLM: deepseek_v4_fp8 -> Mxfp4MoEMethod)
    auto wf = weight_format("auto", f);
    REQUIRE(wf);
    auto wb = weight_bytes(f, wf.value());
    REQUIRE(wb);
    // Worked by hand from vLLM's module shapes (models/deepseek_v4/nvidia/model.py), not checked against a published
    // safetensors total (DeepSeek's "284B"): attention 43 x 107,742,838 + 21 x 19,142,272 (ratio-4 compressor and
    // indexer) + 20 x 4,260,352 (ratio-128 compressor) = 5,120,136,786; norms 352,256; MoE 43 x (router 1,048,576
    // + 256 experts 6,442,450,944 + shared 25,165,824) + 3 hash tables of 129,280 x 6 + 40 score biases of 256
    // = 278,154,947,072; embedding and head 2 x 529,530,880; final norm 4,096 and hc_head 65,541.
    CHECK(wb->params == 284334567511);
    // Routed experts 43 x 256 x 3 x 4,096 x 2,048 weights x 17 / 32 B = 147,169,738,752 B; the rest fp8 with 128 x 128
    // fp32 block scales, embeddings, head, routers, compressors and vectors 16-bit (the generic reader: 269 GiB).
    // Which linear layers carry fp8 and scales is the checkpoint's quantization plan (src/model/quant.cpp, vLLM's
    // readers): 1,428,556 B of block scales more than the hand count, which took per-tensor scales for some.
    CHECK(wb->bytes == 155932177070);
    const ModelSpec s = load("sgl-project--DeepSeek-V4-Flash-FP8.json");  // deepseek_ref: plain fp8 experts
    CHECK_FALSE(s.dims.fp4_experts);
}

// vLLM's default cache dtype (auto) stops DeepSeek-V4 at start-up; the budget answers with the fp8 cache a user must
// pass, and its command passes it. A dtype the user chose is vLLM's to refuse.
TEST_CASE("DeepSeek-V4 budget: auto answers with fp8 and the command passes it") {
    BudgetInputs in;
    in.gpu = "h200";
    in.gpu_count = 4;
    in.context = 65536;
    ModelSpec f = load(kFlash);
    f.name = "deepseek-ai/DeepSeek-V4-Flash";  // as the Hub names it, not the fixture's file
    auto b = compute_budget(f, in);
    REQUIRE(b);
    CHECK(b->kv_cache_dtype == "fp8_ds_mla");
    CHECK(
        b->command ==
        "vllm serve deepseek-ai/DeepSeek-V4-Flash --max-model-len 65536 --kv-cache-dtype fp8 --tensor-parallel-size 4");
    CHECK(std::any_of(b->notes.begin(), b->notes.end(),
                      [](const Message& n) { return n.code == "vllm_dsv4_fp8_default"; }));
    in.kv_cache_dtype = "bfloat16";
    auto refused = compute_budget(f, in);
    REQUIRE_FALSE(refused);
    CHECK(refused.error().message ==
          "AssertionError: DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got bfloat16");
}
