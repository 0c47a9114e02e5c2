// vLLM v1 KV-cache semantics: page sizes, TP split/replication, MLA, grouping
// (get_kv_cache_groups), hybrid block-size adjustment, num_blocks, log lines,
// vLLM's errors. Numbers are from engine-kv-spec.md's worked table and from
// vLLM's own tests/v1/core/test_kv_cache_utils.py.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>

#include "base/units.h"
#include "engines/vllm.h"
#include "fixtures.h"

using namespace kvb;
using kvb::test::dense;
using kvb::test::fixture;
using kvb::test::gemma3;
using kvb::test::mla;

namespace {

// Bytes one token adds per GPU: one block over all layers / block size.
int64_t per_token(const VllmLayout& l) {
    return l.bytes_per_block / l.attn_block_size;
}

VllmLayout layout(const ModelSpec& m, VllmOptions o = {}) {
    auto r = vllm_layout(m, o);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

VllmCapacity capacity(const ModelSpec& m, VllmOptions o, int64_t avail) {
    auto r = vllm_capacity(m, o, avail);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

}  // namespace

TEST_CASE("Llama-3.1-8B: 131072 B/token, fp8 halves, TP splits and replicates") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    VllmLayout l = layout(m);
    CHECK(l.groups.size() == 1);
    CHECK(l.groups[0].spec_type == "FullAttentionSpec");
    CHECK(l.page_size_bytes == 65536);  // 16 tokens x 8 heads x (128 + 128) x 2 B
    CHECK(l.group_size == 32);
    CHECK(per_token(l) == 131072);

    VllmOptions o;
    o.kv_cache_dtype = "fp8";
    CHECK(per_token(layout(m, o)) == 65536);
    o.kv_cache_dtype = "auto";
    o.tensor_parallel_size = 2;
    CHECK(per_token(layout(m, o)) == 65536);
    o.tensor_parallel_size = 16;  // 8 KV heads on 16 GPUs: one head per GPU, replicated
    VllmLayout t16 = layout(m, o);
    CHECK(t16.layers[0].num_kv_heads == 1);
    CHECK(per_token(t16) == 16384);

    o.tensor_parallel_size = 3;
    auto bad = vllm_layout(m, o);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == "vllm_refused");
    CHECK(bad.error().message == "Total number of attention heads (32) must be divisible by tensor parallel size (3).");
}

TEST_CASE("Llama-3.1-8B capacity lines in the current and the older formats") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    VllmOptions o;
    o.max_model_len = 32768;
    VllmCapacity c = capacity(m, o, 8 * GiB);
    CHECK(c.num_blocks == 4096);  // 8 GiB / (2 MiB per block over 32 layers)
    CHECK(c.usable_blocks == 4095);
    CHECK(c.blocks_per_request == 2048);
    CHECK(c.max_concurrency == 2.0);
    CHECK(c.tokens == 65536);
    CHECK(c.request_bytes == 4 * GiB);
    REQUIRE(c.log_lines.size() == 1);
    CHECK(c.log_lines[0] ==
          "GPU KV cache size: 65,536 tokens, Maximum concurrency for 32,768 tokens per request: 2.00x");

    o.log_format = VllmLogFormat::Legacy;
    c = capacity(m, o, 8 * GiB + 3 * MiB);
    REQUIRE(c.log_lines.size() == 2);
    CHECK(c.log_lines[0] == "GPU KV cache size: 65,552 tokens");  // 4097 blocks x 16
    CHECK(c.log_lines[1] == "Maximum concurrency for 32,768 tokens per request: 2.00x");
}

TEST_CASE("vLLM's own test_get_max_concurrency_for_kv_cache_config (Qwen1.5-7B, fp16, mml 16384, mnbt 1024)") {
    ModelSpec full = dense("Qwen/Qwen1.5-7B", 32, 32, 128, 32, 32768, "float16");
    VllmOptions o;
    o.max_model_len = 16384;
    o.max_num_batched_tokens = 1024;
    o.async_scheduling = 0;  // the test's SchedulerConfig: one batch in flight
    VllmLayout l = layout(full, o);
    const int64_t block_bytes = l.bytes_per_block;  // 32 layers x 16 x 32 x 256 x 2
    CHECK(block_bytes == 32 * 262144);
    VllmCapacity c = capacity(full, o, block_bytes * 1536);
    CHECK(c.max_concurrency == 1.5);

    ModelSpec sw = full;
    for (auto& x : sw.layers) {
        x.kind = LayerKind::Sliding;
        x.window = 1024;
    }
    c = capacity(sw, o, block_bytes * 129 * 3);
    CHECK(c.blocks_per_request == 129);  // cdiv(min(1023 + 1024, 16384), 16) + 1
    CHECK(c.max_concurrency == 3.0);

    // 32 full + 32 sliding layers: two groups of 32, (1024 + 129) blocks per request.
    ModelSpec hybrid = full;
    for (const auto& x : sw.layers) hybrid.layers.push_back(x);
    VllmLayout hl = layout(hybrid, o);
    CHECK(hl.groups.size() == 2);
    CHECK(hl.group_size == 32);
    c = capacity(hybrid, o, hl.bytes_per_block * (1024 + 129) * 3);
    CHECK(c.max_concurrency == 3.0);
}

TEST_CASE("vLLM's own test_estimate_max_model_len and the exact ValueError text") {
    ModelSpec m = dense("Qwen/Qwen1.5-7B", 32, 32, 128, 32, 32768, "float16");
    VllmOptions o;
    o.max_num_batched_tokens = 32768;
    o.max_model_len = 16385;
    VllmCapacity c = capacity(m, o, 8 * GiB);
    CHECK_FALSE(c.fits);
    CHECK(c.estimated_max_model_len == 16384);
    CHECK(c.error_text ==
          "To serve at least one request with the model's max seq len (16385), (8.01 GiB KV cache is needed, which is "
          "larger than the available KV cache memory (8.0 GiB). Based on the available memory, the estimated maximum "
          "model length is 16384. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU "
          "backend) or decreasing `max_model_len` when initializing the engine. See "
          "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
    CHECK(c.log_lines.empty());

    o.max_model_len = 16383;
    c = capacity(m, o, 8 * GiB);
    CHECK(c.fits);

    o.log_format = VllmLogFormat::Legacy;
    o.max_model_len = 16385;
    c = capacity(m, o, 8 * GiB);
    CHECK(c.error_text ==
          "To serve at least one request with the models's max seq len (16385), (8.01 GiB KV cache is needed, which is "
          "larger than the available KV cache memory (8.0 GiB). Based on the available memory, the estimated maximum "
          "model length is 16384. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
          "initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more "
          "details.");

    // Not even one block: no estimate sentence.
    o.log_format = VllmLogFormat::Current;
    c = capacity(m, o, 1000);
    CHECK(c.estimated_max_model_len == 0);
    CHECK(c.error_text.find("estimated") == std::string::npos);
    CHECK(c.error_text.find("(0.0 GiB). Try increasing") != std::string::npos);

    c = capacity(m, o, 0);
    CHECK_FALSE(c.fits);
    CHECK(c.error_text ==
          "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the "
          "engine (this flag also controls CPU memory reservation on the CPU backend, despite its name). See "
          "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
}

TEST_CASE("format_gib prints Python's str(round(x, 2))") {
    CHECK(vllm_format_gib(GiB) == "1.0");
    CHECK(vllm_format_gib(GiB * 35 / 8) == "4.38");  // 4.375 rounds half-even on the exact double -> 4.38
    CHECK(vllm_format_gib(GiB / 2) == "0.5");
    CHECK(vllm_format_gib(0) == "0.0");
    CHECK(vllm_format_gib(int64_t(6.51 * GiB)) == "6.51");
}

TEST_CASE("--max-model-len above the model's limit is vLLM's ValueError") {
    ModelSpec m = fixture("Qwen/Qwen3-8B");
    VllmOptions o;
    o.max_model_len = 65536;
    auto r = vllm_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "vllm_refused");
    CHECK(r.error().message ==
          "User-specified max_model_len (65536) is greater than the derived max_model_len "
          "(max_position_embeddings=40960.0 or model_max_length=None in model's config.json). To allow overriding this "
          "maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with "
          "extreme caution. If the model uses relative position encoding (RoPE), positions exceeding "
          "derived_max_model_len lead to nan. If the model uses absolute position encoding, positions exceeding "
          "derived_max_model_len will cause a CUDA array out-of-bounds error.");
    o.log_format = VllmLogFormat::Legacy;
    r = vllm_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message ==
          "User-specified max_model_len (65536) is greater than the derived max_model_len "
          "(max_position_embeddings=40960 or model_max_length=None in model's config.json). This may lead to "
          "incorrect model outputs or CUDA errors. To allow overriding this maximum, set the env var "
          "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
    o.max_model_len = 0;  // default: the model's own limit
    CHECK(layout(m, o).max_model_len == 40960);
}

TEST_CASE("Qwen3-8B: 147456 B/token") {
    CHECK(per_token(layout(fixture("Qwen/Qwen3-8B"))) == 147456);
}

TEST_CASE("MLA: one latent head of 576, not split by TP") {
    ModelSpec v2 = mla("DeepSeek-V2 (hand-built)", 60, 128);
    VllmLayout l = layout(v2);
    CHECK(l.layers[0].spec_type == "MLAAttentionSpec");
    CHECK(l.layers[0].num_kv_heads == 1);
    CHECK(l.layers[0].head_size == 576);
    CHECK(l.page_size_bytes == 16 * 576 * 2);
    CHECK(per_token(l) == 69120);
    VllmOptions o;
    o.kv_cache_dtype = "fp8";
    CHECK(per_token(layout(v2, o)) == 34560);
    o.kv_cache_dtype = "auto";
    o.tensor_parallel_size = 8;
    CHECK(per_token(layout(v2, o)) == 69120);
    o.tensor_parallel_size = 1;
    o.mla_block_size = 64;  // FlashMLA on Hopper
    VllmLayout l64 = layout(v2, o);
    CHECK(l64.attn_block_size == 64);
    CHECK(l64.page_size_bytes == 64 * 1152);

    // The fixture DeepSeek-V3 has 61 MLA layers (the MTP layer is not cached).
    CHECK(per_token(layout(fixture("deepseek-ai/DeepSeek-V3"))) == 61 * 1152);
}

TEST_CASE("MLA block size follows the backend vLLM picks for the GPU (cuda.py, the MLA backends' block sizes)") {
    // Current releases: the first valid backend of _get_backend_priorities, its preferred size.
    CHECK(vllm_mla_backend(100, false, 128, false).backend == "FLASHINFER_MLA");  // B200: [32, 64] -> 32
    CHECK(vllm_mla_backend(100, false, 128, false).block_size == 32);
    CHECK(vllm_mla_backend(100, false, 0, false).backend == "CUTLASS_MLA");  // qk_nope_head_dim not 64/128/192
    CHECK(vllm_mla_backend(100, false, 0, false).block_size == 128);
    CHECK(vllm_mla_backend(90, false, 128, false).backend == "FLASH_ATTN_MLA");  // H100: 16 x n -> 16
    CHECK(vllm_mla_backend(90, false, 128, false).block_size == 16);
    CHECK(vllm_mla_backend(90, true, 128, false).backend == "FLASHMLA");  // fp8 cache: FA MLA refuses it
    CHECK(vllm_mla_backend(90, true, 128, false).block_size == 64);
    CHECK(vllm_mla_backend(120, false, 128, false).backend == "TRITON_MLA");  // RTX 5090
    CHECK(vllm_mla_backend(80, false, 128, false).block_size == 16);          // A100
    // Before 0.18 (v0.17.1's cuda.py still forces them; PR #35122 is in 0.18.0): check_and_update_config
    // forced the size.
    CHECK(vllm_mla_backend(100, false, 128, true).block_size == 64);
    CHECK(vllm_mla_backend(100, false, 0, true).block_size == 128);
    CHECK(vllm_mla_backend(90, false, 128, true).block_size == 64);
    CHECK(vllm_mla_backend(90, true, 128, true).block_size == 64);
    CHECK(vllm_mla_backend(120, false, 128, true).block_size == 16);
    CHECK(vllm_mla_forced_for_version("0.16.0"));
    CHECK(vllm_mla_forced_for_version("v0.11.2"));
    CHECK(vllm_mla_forced_for_version("0.17.1"));
    CHECK_FALSE(vllm_mla_forced_for_version("0.18.0"));
    CHECK_FALSE(vllm_mla_forced_for_version("1.0.0"));
    CHECK_FALSE(vllm_mla_forced_for_version("nightly"));

    // DeepSeek-V3 (61 MLA layers x 1152 B/token) in 40 GiB: the blocks change, the tokens barely.
    const ModelSpec v3 = fixture("deepseek-ai/DeepSeek-V3");
    const int64_t avail = int64_t(40) << 30;
    VllmOptions o;
    o.max_model_len = 32768;
    o.gpu_compute_capability = 100;
    VllmCapacity b200 = capacity(v3, o, avail);
    CHECK(b200.layout.mla_backend == "FLASHINFER_MLA");
    CHECK(b200.layout.attn_block_size == 32);
    CHECK(b200.num_blocks == 19099);
    REQUIRE(b200.layout.notes.size() >= 1);
    CHECK(b200.layout.notes.back().code == "vllm_mla_backend");
    CHECK(render_english(b200.layout.notes.back()) ==
          "On a GPU of compute capability 10.0 vLLM picks the FLASHINFER_MLA attention backend for MLA, and its KV "
          "cache blocks hold 32 tokens (--block-size changes it)");
    o.mla_forced_block_sizes = true;
    CHECK(capacity(v3, o, avail).num_blocks == 9549);  // 64-token blocks
    o.gpu_compute_capability = 90;
    CHECK(capacity(v3, o, avail).layout.mla_backend == "FLASHMLA");
    o.mla_forced_block_sizes = false;
    VllmCapacity h100 = capacity(v3, o, avail);
    CHECK(h100.layout.mla_backend == "FLASH_ATTN_MLA");
    CHECK(h100.num_blocks == 38199);
    // The user's block size wins, and no backend is named.
    o.block_size = 128;
    VllmCapacity user = capacity(v3, o, avail);
    CHECK(user.num_blocks == 4774);
    CHECK(user.layout.mla_backend.empty());
    // Hand-built MLA without qk_nope_head_dim on Blackwell: CUTLASS MLA's 128.
    o.block_size = 0;
    o.gpu_compute_capability = 100;
    CHECK(layout(mla("no qk_nope (hand-built)", 4, 16), o).attn_block_size == 128);
    // A dense model is untouched by the GPU.
    CHECK(layout(fixture("meta-llama/Llama-3.1-8B"), o).attn_block_size == 16);
    CHECK(layout(fixture("meta-llama/Llama-3.1-8B"), o).mla_backend.empty());
    o.gpu_compute_capability = 1000;
    auto bad = vllm_layout(v3, o);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message == "GPU compute capability must be like 90 (9.0) or 100 (10.0), got 1000");
}

TEST_CASE("gpt-oss-20b: 2 groups of 12 layers, tokens = num_blocks // 2 * 16") {
    ModelSpec m = fixture("openai/gpt-oss-20b");
    VllmLayout l = layout(m);
    REQUIRE(l.groups.size() == 2);
    CHECK(l.groups[0].spec_type == "SlidingWindowSpec");  // layer 0 slides: its group comes first
    CHECK(l.groups[0].window == 128);
    CHECK(l.groups[1].spec_type == "FullAttentionSpec");
    CHECK(l.groups[0].layers.size() == 12);
    CHECK(l.groups[0].layers[1] == 2);
    CHECK(l.groups[1].layers[0] == 1);
    CHECK(l.page_size_bytes == 32768);
    CHECK(l.group_size == 12);
    CHECK(l.bytes_per_block == 32768 * 12);
    CHECK(l.warnings.empty());

    VllmOptions o;
    o.max_model_len = 32768;
    o.log_format = VllmLogFormat::Legacy;
    const int64_t avail = 8 * GiB;
    VllmCapacity c = capacity(m, o, avail);
    CHECK(c.num_blocks == avail / (32768 * 12));
    CHECK(c.tokens == c.num_blocks / 2 * 16);
    CHECK(c.tokens == 174752);
    CHECK(c.blocks_per_request == 2048 + 521);  // full + (cdiv(127 + 8192, 16) + 1)

    // --disable-hybrid-kv-cache-manager: sliding layers become full attention, one group.
    o.disable_hybrid_kv_cache_manager = true;
    c = capacity(m, o, avail);
    CHECK(c.layout.groups.size() == 1);
    CHECK(c.layout.groups[0].spec_type == "FullAttentionSpec");
    CHECK_FALSE(c.layout.uniform_type);
    CHECK(c.layout.groups[0].layers.size() == 24);
    CHECK(c.blocks_per_request == 2048);
}

TEST_CASE("Gemma-3-27b (hand-built): group_size 10, 6 sliding groups with 8 padding layers + 1 full") {
    ModelSpec m = gemma3("google/gemma-3-27b-it (hand-built)", 62, 16, 128, 1024, 131072);
    VllmLayout l = layout(m);
    CHECK(l.page_size_bytes == 131072);  // 8192 B/token/layer x 16
    CHECK(l.group_size == 10);
    REQUIRE(l.groups.size() == 7);
    for (int i = 0; i < 6; ++i) CHECK(l.groups[i].spec_type == "SlidingWindowSpec");
    CHECK(l.groups[6].spec_type == "FullAttentionSpec");
    CHECK(l.groups[0].layers.size() == 9);  // 52 layers spread as layers[i::6]: 9,9,9,9,8,8
    CHECK(l.groups[5].layers.size() == 8);
    CHECK(l.padding_layers == 8);
    REQUIRE(l.warnings.size() == 1);
    CHECK(l.warnings[0] == "Add 8 padding layers, may waste at most 15.38% KV cache memory");
    CHECK(l.bytes_per_block == 131072 * 10);

    VllmOptions o;
    o.max_model_len = 32768;
    o.log_format = VllmLogFormat::Legacy;
    VllmCapacity c = capacity(m, o, 20 * GiB);
    CHECK(c.num_blocks == 20 * GiB / (131072 * 10));
    CHECK(c.tokens == c.num_blocks / 7 * 16);
    CHECK(c.log_lines[0] == "Add 8 padding layers, may waste at most 15.38% KV cache memory");
}

TEST_CASE("gemma-3-4b-it and gemma-3-1b-it fixtures: their own grouping") {
    VllmLayout g4 = layout(fixture("google/gemma-3-4b-it"));  // 29 sliding (window 1024) + 5 full, 4 KV x 256
    CHECK(g4.page_size_bytes == 65536);
    CHECK(g4.group_size == 5);
    CHECK(g4.groups.size() == 7);
    REQUIRE(g4.warnings.size() == 1);
    CHECK(g4.warnings[0] == "Add 1 padding layers, may waste at most 3.45% KV cache memory");

    VllmLayout g1 = layout(fixture("google/gemma-3-1b-it"));  // 22 sliding (window 512) + 4 full, 1 KV x 256
    CHECK(g1.page_size_bytes == 16384);
    CHECK(g1.group_size == 4);
    CHECK(g1.groups.size() == 7);
    REQUIRE(g1.warnings.size() == 1);
    CHECK(g1.warnings[0] == "Add 2 padding layers, may waste at most 9.09% KV cache memory");

    VllmOptions o;
    o.max_model_len = 32768;
    o.max_num_batched_tokens = 8192;
    VllmCapacity c = capacity(fixture("google/gemma-3-1b-it"), o, 4 * GiB);
    CHECK(c.num_blocks == 4 * GiB / (16384 * 4));
    // Current releases with async scheduling keep 2 x 8192 tokens in flight: 1 full group of
    // 2048 blocks, 6 sliding groups of cdiv(511 + 16384, 16) + 1 = 1057 blocks.
    CHECK(c.layout.max_in_flight_tokens == 16384);
    CHECK(c.blocks_per_request == 2048 + 6 * 1057);
    o.async_scheduling = 0;  // one batch: cdiv(511 + 8192, 16) + 1 = 545
    c = capacity(fixture("google/gemma-3-1b-it"), o, 4 * GiB);
    CHECK(c.blocks_per_request == 2048 + 6 * 545);
    o.async_scheduling = -1;
    o.log_format = VllmLogFormat::Legacy;
    c = capacity(fixture("google/gemma-3-1b-it"), o, 4 * GiB);
    CHECK(c.blocks_per_request == 2048 + 6 * 545);
}

TEST_CASE("Qwen3-Next-80B-A3B: state 1,097,728 B/layer padded to 1,114,112, attention block 544") {
    ModelSpec m = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    VllmLayout l = layout(m);
    CHECK(l.attn_block_size == 544);
    CHECK(l.mamba_cache_mode == MambaCacheMode::Align);
    REQUIRE(l.vllm_lines.size() == 2);
    CHECK(l.vllm_lines[0] ==
          "Setting attention block size to 544 tokens to ensure that attention page size is >= mamba page size.");
    CHECK(l.vllm_lines[1] ==
          "Padding mamba page size by 1.49% to ensure that mamba page size and attention page size are exactly equal.");
    const VllmLayerSpec* state = nullptr;
    const VllmLayerSpec* attn = nullptr;
    for (const auto& s : l.layers) {
        if (s.spec_type == "MambaSpec" && !state) state = &s;
        if (s.spec_type == "FullAttentionSpec" && !attn) attn = &s;
    }
    REQUIRE(state);
    REQUIRE(attn);
    CHECK(state->state_conv_bytes == 3 * 8192 * 2);
    CHECK(state->state_ssm_bytes == 32 * 128 * 128 * 2);
    CHECK(state->real_page_size_bytes == 1097728);
    CHECK(state->page_size_bytes == 1114112);
    CHECK(attn->page_size_bytes == 544 * 2048);  // 24576 B/token over 12 layers = 2048 per layer
    CHECK(l.group_size == 12);                   // 36 state layers >= 1.5 x 12 attention layers
    REQUIRE(l.groups.size() == 4);
    CHECK(l.groups[0].spec_type == "MambaSpec");
    CHECK(l.groups[3].spec_type == "FullAttentionSpec");

    // Blocks per request: cdiv(mml, 544) for attention plus, per state group, 2 blocks in
    // align mode (the default here) or 1 in none mode: +6 / +3 (the spec's "+3" is the none mode).
    VllmOptions o;
    o.max_model_len = 262144;
    VllmCapacity c = capacity(m, o, 20 * GiB);
    CHECK(c.blocks_per_request == 482 + 6);
    CHECK(c.num_blocks == 20 * GiB / (1114112 * 12));
    o.mamba_cache_mode = MambaCacheMode::None;
    c = capacity(m, o, 20 * GiB);
    CHECK(c.blocks_per_request == 482 + 3);
    o.mamba_cache_mode = MambaCacheMode::All;
    c = capacity(m, o, 40 * GiB);
    CHECK(c.layout.attn_block_size ==
          576);  // lcm(64, 16) multiple of 1097728 / 2048 = 536 tokens (chunk 64 assumed for gated delta net)
    CHECK(c.blocks_per_request == 4 * 456);
}

TEST_CASE("pipeline parallel: layers split like get_pp_indices, num_blocks = min over stages") {
    ModelSpec m = mla("DeepSeek-V2-Lite (hand-built)", 27, 128);  // DeepSeek-V2-Lite geometry: 27 MLA layers
    VllmOptions o;
    o.pipeline_parallel_size = 2;
    o.tensor_parallel_size = 2;
    o.max_model_len = 1024;
    VllmLayout l = layout(m, o);
    REQUIRE(l.stage_bytes_per_block.size() == 2);
    CHECK(l.stage_bytes_per_block[0] == 14 * 16 * 1152);  // remainder goes to the stage before the last
    CHECK(l.stage_bytes_per_block[1] == 13 * 16 * 1152);
    const int64_t avail = int64_t(50487) * 14 * 16 * 1152;  // the 14-layer stage limits
    VllmCapacity c = capacity(m, o, avail);
    CHECK(c.num_blocks == 50487);
    CHECK(c.blocks_per_request == 64);
    o.log_format = VllmLogFormat::Legacy;
    c = capacity(m, o, avail);
    CHECK(c.log_lines[0] == "GPU KV cache size: 807,792 tokens");
    CHECK(c.log_lines[1] == "Maximum concurrency for 1,024 tokens per request: 788.86x");
}

TEST_CASE("VLLM_PP_LAYER_PARTITION: per-stage layers from the given split, vLLM's ValueError texts") {
    const ModelSpec llama = fixture("meta-llama/Llama-3.1-8B");  // 32 layers, 65,536 B per layer per block
    VllmOptions o;
    o.pipeline_parallel_size = 2;
    o.max_model_len = 32768;
    VllmLayout even = layout(llama, o);
    CHECK(even.stage_layers == std::vector<int64_t>{16, 16});
    CHECK(capacity(llama, o, 8 * GiB).num_blocks == 8192);
    o.pp_layer_partition = "15,17";
    VllmLayout uneven = layout(llama, o);
    CHECK(uneven.stage_layers == std::vector<int64_t>{15, 17});
    CHECK(uneven.stage_bytes_per_block == std::vector<int64_t>{15 * 65536, 17 * 65536});
    CHECK(capacity(llama, o, 8 * GiB).num_blocks == 7710);  // the 17-layer stage limits: 8 GiB // 1,114,112
    o.pp_layer_partition = " 17 , 15";                      // Python's int() takes blanks
    CHECK(layout(llama, o).stage_layers == std::vector<int64_t>{17, 15});
    // Without it, get_pp_indices: 32 over 3 stages is 10 each, the 2 left over go to the stages before the last.
    o.pp_layer_partition = "";
    o.pipeline_parallel_size = 3;
    CHECK(layout(llama, o).stage_layers == std::vector<int64_t>{11, 11, 10});

    auto refused = [&](const std::string& part, int64_t pp) {
        VllmOptions x = o;
        x.pipeline_parallel_size = pp;
        x.pp_layer_partition = part;
        auto r = vllm_layout(llama, x);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().code == "vllm_refused");
        return r.error().message;
    };
    CHECK(refused("15,16", 2) == "sum(partitions)=31 does not match num_hidden_layers=32.");
    CHECK(refused("10,10,12", 2) == "len(partitions)=3 does not match pp_size=2.");
    CHECK(refused("15,x", 2) == "Invalid partition string: 15,x");
    CHECK(refused("16,", 2) == "Invalid partition string: 16,");
    CHECK(refused("-1,33", 2) == "Invalid partition string: -1,33");
}

// kv_cache_utils.get_kv_cache_configs: every worker cuts its own memory into blocks of its own cost and
// the engine keeps the fewest; each worker checks one request against its own memory, in rank order.
TEST_CASE("pipeline stages with their own KV memory: the fewest blocks over workers, each worker's own refusal") {
    const ModelSpec llama = fixture("meta-llama/Llama-3.1-8B");  // 32 layers, 65,536 B per layer per block
    VllmOptions o;
    o.pipeline_parallel_size = 2;
    o.pp_layer_partition = "15,17";
    o.max_model_len = 32768;
    auto each = [&](int64_t a0, int64_t a1) {
        auto c = vllm_capacity(llama, o, std::vector<int64_t>{a0, a1});
        REQUIRE(c.ok());
        return c.value();
    };
    // 9 GiB // 983,040 = 9,830 on the 15-layer stage, 8 GiB // 1,114,112 = 7,710 on the 17-layer one.
    VllmCapacity c = each(9 * GiB, 8 * GiB);
    CHECK(c.stage_num_blocks == std::vector<int64_t>{9830, 7710});
    CHECK(c.num_blocks == 7710);
    CHECK(c.limiting_stage == 1);
    CHECK(c.available_bytes == 8 * GiB);
    // Each worker's tensors shrink to the fewest blocks.
    CHECK(c.stage_kv_bytes == std::vector<int64_t>{7710LL * 983040, 7710LL * 1114112});
    // The stage with fewer layers can be the one that limits: 7 GiB // 983,040 = 7,645 blocks, where the
    // smallest memory over the largest block cost (7 GiB // 1,114,112 = 6,746) would undercount.
    c = each(7 * GiB, 9 * GiB);
    CHECK(c.stage_num_blocks == std::vector<int64_t>{7645, 8673});
    CHECK(c.num_blocks == 7645);
    CHECK(c.limiting_stage == 0);
    CHECK(c.log_lines[0] ==
          "GPU KV cache size: 122,320 tokens, Maximum concurrency for 32,768 tokens per request: 3.73x");
    // One value stands for every stage.
    CHECK(vllm_capacity(llama, o, 8 * GiB)->num_blocks == 7710);

    // A 131,072-token request needs 7.5 GiB on the 15-layer stage and 8.5 GiB on the 17-layer one:
    // the first worker short of its own need refuses, with its own figures and estimate.
    o.max_model_len = 131072;
    c = each(7 * GiB, 9 * GiB);
    CHECK_FALSE(c.fits);
    CHECK(c.limiting_stage == 0);
    CHECK(c.error_text ==
          "To serve at least one request with the model's max seq len (131072), (7.5 GiB KV cache is needed, which is "
          "larger than the available KV cache memory (7.0 GiB). Based on the available memory, the estimated maximum "
          "model length is 122320. Try increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU "
          "backend) or decreasing `max_model_len` when initializing the engine. See "
          "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.");
    c = each(9 * GiB, 8 * GiB);
    CHECK(c.limiting_stage == 1);
    CHECK(c.estimated_max_model_len == 123360);
    CHECK(c.error_text.find("(8.5 GiB KV cache is needed, which is larger than the available KV cache memory (8.0 "
                            "GiB)") != std::string::npos);
    // A worker left with nothing refuses first.
    c = each(0, 9 * GiB);
    CHECK(c.error_text.rfind("No available memory for the cache blocks.", 0) == 0);
}

TEST_CASE("bad options are errors naming the option") {
    ModelSpec m = fixture("Qwen/Qwen3-8B");
    VllmOptions o;
    o.kv_cache_dtype = "int3";
    CHECK_FALSE(vllm_layout(m, o).ok());
    o = {};
    o.tensor_parallel_size = 0;
    auto r = vllm_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("--tensor-parallel-size") != std::string::npos);
    o = {};
    o.pipeline_parallel_size = 37;
    r = vllm_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "Pipeline parallel size (37) is larger than the number of hidden layers (36).");
    CHECK(parse_mamba_cache_mode("sometimes").error().message ==
          "--mamba-cache-mode must be none, align or all, got 'sometimes'");
    CHECK_FALSE(parse_vllm_log_format("v1").ok());
}

TEST_CASE("huge memory and context stay exact in 64-bit") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    VllmOptions o;
    o.max_model_len = 131072;
    VllmCapacity c = capacity(m, o, int64_t(1) << 50);  // 1 PiB
    CHECK(c.num_blocks == (int64_t(1) << 50) / (2 * MiB));
    CHECK(c.tokens == c.num_blocks * 16);
}

// ---------------------------------------------------------------- the `kvbudget vllm` command

namespace {

using Run = kvb::test::CliRun;
// stderr folded into the output only when `merge`.
Run run_cli(const std::string& args, bool merge = false) {
    return kvb::test::run_cli(args, merge);
}

std::string cfg(const std::string& file) {
    return kvb::test::config_path(file);
}

}  // namespace

TEST_CASE("kvbudget vllm prints vLLM's lines, its ValueError (exit 1), usage errors (exit 2)") {
    Run r = run_cli("vllm " + cfg("meta-llama--Llama-3.1-8B") + " --kv-cache-memory 8GiB --max-model-len 32768");
    CHECK(r.status == 0);
    CHECK(r.out == "GPU KV cache size: 65,536 tokens, Maximum concurrency for 32,768 tokens per request: 2.00x\n");

    r = run_cli("vllm " + cfg("openai--gpt-oss-20b") +
                " --kv-cache-memory 8GiB --max-model-len 32768 --log-format legacy");
    CHECK(r.status == 0);
    CHECK(r.out == "GPU KV cache size: 174,752 tokens\nMaximum concurrency for 32,768 tokens per request: 8.50x\n");

    r = run_cli("vllm " + cfg("Qwen--Qwen3-0.6B") + " --kv-cache-memory 1409286144", true);
    CHECK(r.status == 1);
    CHECK(r.out.find("ValueError: To serve at least one request with the model's max seq len (40960), (4.38 GiB") !=
          std::string::npos);

    r = run_cli("vllm " + cfg("Qwen--Qwen3-8B") + " --kv-cache-memory 8GiB --max-model-len 65536", true);
    CHECK(r.status == 1);
    CHECK(r.out.find("\nValueError: User-specified max_model_len (65536) is greater than the derived") !=
          std::string::npos);

    r = run_cli("vllm " + cfg("Qwen--Qwen3-8B") + " --kv-cache-memory 8GiB --tensor-parallel-size 3", true);
    CHECK(r.status == 1);
    CHECK(r.out.find("must be divisible by tensor parallel size (3)") != std::string::npos);

    r = run_cli("vllm " + cfg("Qwen--Qwen3-8B") + " --kv-cache-memory 8GiB --json");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"num_blocks\":3640") != std::string::npos);  // 8 GiB / (16 x 147456)
    CHECK(r.out.find("\"fits\":true") != std::string::npos);

    CHECK(run_cli("vllm " + cfg("Qwen--Qwen3-8B")).status == 2);  // no memory
    CHECK(run_cli("vllm " + cfg("Qwen--Qwen3-8B") + " --kv-cache-memory 8GiB --bogus").status == 2);
    CHECK(run_cli("vllm " + cfg("Qwen--Qwen3-8B") + " --kv-cache-memory 8GiB --log-format old").status == 2);
    CHECK(run_cli("vllm " + cfg("Qwen--Qwen3-8B") + " --kv-cache-memory lots").status == 1);
    CHECK(run_cli("vllm /nonexistent/config.json --kv-cache-memory 8GiB").status == 1);
    CHECK(run_cli("vllm --help").status == 0);

    // --gpu picks the MLA backend's block size; --engine-version before 0.18 the forced one.
    r = run_cli("vllm " + cfg("deepseek-ai--DeepSeek-V3") +
                " --kv-cache-memory 40GiB --max-model-len 32768 --gpu b200 --json");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"block_size\":32,") != std::string::npos);
    CHECK(r.out.find("\"mla_backend\":\"FLASHINFER_MLA\"") != std::string::npos);
    CHECK(r.out.find("\"num_blocks\":19099") != std::string::npos);
    r = run_cli("vllm " + cfg("deepseek-ai--DeepSeek-V3") +
                " --kv-cache-memory 40GiB --max-model-len 32768 --gpu h100 --engine-version 0.11.0 --json");
    CHECK(r.out.find("\"mla_backend\":\"FLASHMLA\"") != std::string::npos);
    CHECK(r.out.find("\"num_blocks\":9549") != std::string::npos);
    r = run_cli("vllm " + cfg("deepseek-ai--DeepSeek-V3") + " --kv-cache-memory 40GiB --gpu nope", true);
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: unknown GPU 'nope' (kvbudget gpus lists them)\n");
}

TEST_CASE("estimate and num_blocks helpers for the budget") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    VllmOptions o;
    o.max_model_len = 131072;
    VllmLayout l = layout(m, o);
    CHECK(vllm_num_blocks(l, 8 * GiB) == 4096);
    CHECK(vllm_num_blocks(l, 0) == 0);
    CHECK(vllm_estimate_max_model_len(l, 8 * GiB) == 65536);
    CHECK(vllm_estimate_max_model_len(l, 8 * GiB - 1) == 65536 - 16);  // whole blocks only
    CHECK(vllm_estimate_max_model_len(l, 64 * GiB) == 131072);         // capped at max_model_len
    CHECK(vllm_estimate_max_model_len(l, 100) == 0);
    CHECK(vllm_request_bytes(l, 1) == 2 * MiB);
    CHECK(vllm_request_bytes(l, 17) == 4 * MiB);
    CHECK(vllm_request_blocks(l, 131072) == 8192);
}

TEST_CASE("absurd sizes saturate into vLLM's refusal instead of wrapping") {
    ModelSpec m = dense("absurd (hand-built)", 1000, 128, 512, 128, int64_t(1) << 40);
    VllmCapacity c = capacity(m, VllmOptions{}, 80 * GiB);
    CHECK_FALSE(c.fits);
    CHECK(c.request_bytes == INT64_MAX);
    CHECK(c.estimated_max_model_len == 320);  // 20 blocks of 1000 layers x 4 MiB fit in 80 GiB
    CHECK(c.error_text.find("max seq len (1099511627776)") != std::string::npos);
}

TEST_CASE("DeepSeek-V3.2: 64-token pages, indexer keys, fp8_ds_mla") {
    ModelSpec m = fixture("deepseek-ai/DeepSeek-V3.2");
    VllmLayout l = layout(m);
    CHECK(l.attn_block_size == 64);
    CHECK(l.layers.size() == 122);  // 61 latent caches + 61 indexer key caches
    CHECK(l.uniform_type);          // both MLAAttentionSpec, different page sizes: one group
    CHECK(l.bytes_per_block == 61 * 64 * (1152 + 132));
    VllmOptions o;
    o.kv_cache_dtype = "fp8";
    l = layout(m, o);
    CHECK(l.bytes_per_block == 61 * 64 * (656 + 132));
    o.pipeline_parallel_size = 2;  // indexer caches follow their layer's stage
    l = layout(m, o);
    CHECK(l.stage_bytes_per_block[0] == 31 * 64 * (656 + 132));
    CHECK(l.stage_bytes_per_block[1] == 30 * 64 * (656 + 132));
    // DeepSeek-V3 (dense MLA) is unchanged.
    CHECK(layout(fixture("deepseek-ai/DeepSeek-V3")).attn_block_size == 16);
}

TEST_CASE("GLM-5 (glm_moe_dsa) is sparse MLA in vLLM because its config has index_topk, not because of its name") {
    // vLLM registers GlmMoeDsaForCausalLM as a DeepseekV2ForCausalLM subclass, whose attention is sparse when
    // hasattr(config, "index_topk") (deepseek_v2.py): 64-token pages, a 132 B/token indexer key cache
    // (128 fp8 values + one fp32 scale) beside the 576-wide latent, fp8_ds_mla at 656 B/token.
    ModelSpec glm5 = fixture("zai-org/GLM-5");  // 78 MLA layers, every one with its indexer
    CHECK(glm5.sparse_mla);
    CHECK(glm5.count(LayerKind::Mla) == 78);
    VllmLayout l = layout(glm5);
    CHECK(l.attn_block_size == 64);
    CHECK(l.layers.size() == 156);
    CHECK(l.bytes_per_block == 78 * 64 * (1152 + 132));  // 6,409,728
    VllmOptions o;
    o.max_model_len = 131072;
    // 40 GiB / 6,409,728 B = 6,700 blocks; a request takes cdiv(131072, 64) = 2048.
    VllmCapacity c = capacity(glm5, o, 40 * GiB);
    CHECK(c.num_blocks == 6700);
    CHECK(c.log_lines.back() ==
          "GPU KV cache size: 428,800 tokens, Maximum concurrency for 131,072 tokens per request: 3.27x");
    o.kv_cache_dtype = "fp8_ds_mla";
    c = capacity(glm5, o, 40 * GiB);
    CHECK(c.layout.bytes_per_block == 78 * 64 * (656 + 132));  // 3,933,696
    CHECK(c.num_blocks == 10918);
    CHECK(c.log_lines.back() ==
          "GPU KV cache size: 698,752 tokens, Maximum concurrency for 131,072 tokens per request: 5.33x");
    REQUIRE_FALSE(c.layout.notes.empty());
    CHECK(render_english(c.layout.notes.back()) ==
          "sparse MLA (index_topk): 64-token pages, an indexer key cache (132 B/token) on 78 of 78 layers alongside "
          "the latent, fp8_ds_mla latent layout (656 B/token)");

    // GLM-5.2 (index_topk_freq 4, index_skip_topk_offset 3): vLLM builds an indexer, and so an indexer cache,
    // only where max(i - 3 + 1, 0) % 4 == 0: layers 0, 1, 2, 6, 10, ..., 74, 21 of 78.
    ModelSpec glm52 = fixture("zai-org/GLM-5.2");
    int64_t indexed = 0;
    for (const Layer& x : glm52.layers) indexed += x.index_head_dim > 0;
    CHECK(indexed == 21);
    CHECK(glm52.layers[3].index_head_dim == 0);
    CHECK(glm52.layers[6].index_head_dim == 128);
    o.kv_cache_dtype = "auto";
    c = capacity(glm52, o, 40 * GiB);
    CHECK(c.layout.bytes_per_block == 78 * 64 * 1152 + 21 * 64 * 132);  // 5,928,192
    CHECK(c.num_blocks == 7244);
    CHECK(c.log_lines.back() ==
          "GPU KV cache size: 463,616 tokens, Maximum concurrency for 131,072 tokens per request: 3.54x");

    // The field decides: a DeepSeek-V3 config given index_topk is sparse, and a glm_moe_dsa config without it
    // still is (transformers' GlmMoeDsaConfig defaults index_topk to 2048, index_head_dim to 128).
    std::string v3 = kvb::test::fixture_text("deepseek-ai/DeepSeek-V3");
    v3.insert(v3.find('{') + 1, R"("index_topk": 2048, "index_head_dim": 128,)");
    auto v3s = parse_config(v3, "v3-with-index_topk");
    REQUIRE(v3s);
    CHECK(layout(v3s.value()).attn_block_size == 64);
    std::string g = kvb::test::fixture_text("zai-org/GLM-5");
    for (const char* k : {"\"index_topk\": 2048,", "\"index_head_dim\": 128,"})
        g.erase(g.find(k), std::string(k).size());
    auto gs = parse_config(g, "glm5-without-index_topk");
    REQUIRE(gs);
    CHECK(layout(gs.value()).bytes_per_block == 78 * 64 * (1152 + 132));
}

TEST_CASE("Llama 4 chunked local attention: cached as full attention unless the hybrid manager is allowed") {
    ModelSpec m = fixture("meta-llama/Llama-4-Scout-17B-16E-Instruct");  // 36 chunked (8192) + 12 full, 8 KV x 128
    VllmOptions o;
    o.max_model_len = 131072;
    VllmLayout l = layout(m, o);
    REQUIRE(l.groups.size() == 1);
    CHECK(l.groups[0].spec_type == "FullAttentionSpec");
    CHECK(l.bytes_per_block == 48 * 65536);
    CHECK(vllm_request_blocks(l, 131072) == 8192);
    o.chunked_local_hybrid = true;  // VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1
    l = layout(m, o);
    CHECK(l.group_size == 12);
    CHECK(l.groups.size() == 4);  // 3 chunked groups + 1 full
    CHECK(l.warnings.empty());
    // full: 8192 blocks; chunked: cdiv(8192 + 2 x 8192, 16) = 1536 each
    CHECK(vllm_request_blocks(l, 131072) == 8192 + 3 * 1536);
}

TEST_CASE("Nemotron-H: Mamba-2 hybrid; prefix caching gives mode 'all' up to 0.27, 'align' from 0.28") {
    ModelSpec m = fixture("nvidia/Nemotron-H-56B-Base-8K");  // 10 attention (8 KV x 128), 54 Mamba-2, 54 MLP-only
    // 0.28 on (PR #50991, config.py MambaModelConfig): prefix caching by default, and "none" becomes "align" for
    // every class. State: conv 3 x 20480 x 2 B + ssm 256 heads x 64 x 256 x 2 B = 122,880 + 8,388,608 = 8,511,488 B;
    // attention 4096 B/token: 16 x cdiv(8,511,488, 16 x 4096) = 2080.
    VllmLayout cur = layout(m);
    CHECK(cur.mamba_cache_mode == MambaCacheMode::Align);
    CHECK(cur.attn_block_size == 16 * 130);
    // 0.15 to 0.27 with --enable-prefix-caching: NemotronHForCausalLM declares SupportsMambaPrefixCaching, so "all":
    // 2078 tokens rounded to the config's chunk_size 128 (platforms/interface.py, lcm(128, 16)): 2176.
    VllmOptions o;
    o.hybrid_prefix_caching = false;
    o.mamba_align_default = false;
    o.enable_prefix_caching = 1;
    VllmLayout asked = layout(m, o);
    CHECK(asked.mamba_cache_mode == MambaCacheMode::All);
    CHECK(asked.attn_block_size == 2176);
    o.enable_prefix_caching = -1;  // their default: hybrids ran without prefix caching
    VllmLayout old = layout(m, o);
    CHECK(old.mamba_cache_mode == MambaCacheMode::None);
    CHECK(old.attn_block_size == 16 * 130);  // 16 x cdiv(8,511,488, 16 x 4096)
}

TEST_CASE("Nemotron-3-Ultra (layers_block_type, no num_hidden_layers): 12 attention + 48 Mamba-2 layers in vLLM") {
    ModelSpec m = fixture("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16");
    VllmOptions o;
    o.max_model_len = 131072;
    // Prefix caching on (0.28+), mode "align": the 8,499,200 B state over 1,024 B of attention per token is 8,300
    // tokens: 16 x cdiv(8,499,200, 16 x 1,024) = 8,304.
    VllmCapacity c = capacity(m, o, 40 * GiB);
    CHECK(c.layout.mamba_cache_mode == MambaCacheMode::Align);
    CHECK(c.layout.attn_block_size == 8304);
    // group size 12 (48 < 1.5 x 12 is false): 4 Mamba groups + 1 attention group; 40 GiB / (12 x 8304 x 1024 B)
    // = 420 blocks; a request of 131,072 tokens takes cdiv(131072, 8304) = 16 attention blocks and 2 in each
    // Mamba group: 24, 420 / 24 = 17.50x.
    CHECK(c.num_blocks == 420);
    CHECK(c.blocks_per_request == 24);
    CHECK(c.log_lines.back() ==
          "GPU KV cache size: 2,293,760 tokens, Maximum concurrency for 131,072 tokens per request: 17.50x");
    // 0.27 with --enable-prefix-caching: "all" (SupportsMambaPrefixCaching), 8,300 rounded up to the 128-token SSD
    // chunk: 8,320; 420 blocks again, a request takes cdiv(131072, 8320) = 16 blocks in each of the 5 groups.
    o.hybrid_prefix_caching = false;
    o.mamba_align_default = false;
    o.enable_prefix_caching = 1;
    o.one_line_capacity = 1;
    c = capacity(m, o, 40 * GiB);
    CHECK(c.layout.mamba_cache_mode == MambaCacheMode::All);
    CHECK(c.layout.attn_block_size == 8320);
    CHECK(c.num_blocks == 420);
    CHECK(c.log_lines.back() ==
          "GPU KV cache size: 688,128 tokens, Maximum concurrency for 131,072 tokens per request: 5.25x");
}

TEST_CASE("LFM2: short-conv state pages padded to the attention page, mamba cache mode align with prefix caching") {
    ModelSpec m = fixture("LiquidAI/LFM2.5-VL-1.6B");  // 6 attention (8 KV x 64), 10 short-conv layers
    VllmOptions o;
    o.max_model_len = 32768;
    // Lfm2ForCausalLM declares no SupportsMambaPrefixCaching: prefix caching (0.28 on) makes "none" "align".
    VllmCapacity c = capacity(m, o, 4 * GiB);
    CHECK(c.layout.mamba_cache_mode == MambaCacheMode::Align);
    // Conv state (3 - 1) x 2048 x 2 B = 8,192 B fits one 16-token attention page (16 x 2,048 B): block 16.
    CHECK(c.layout.attn_block_size == 16);
    REQUIRE(c.log_lines.size() == 3);
    CHECK(
        c.log_lines[0] ==
        "Padding mamba page size by 300.00% to ensure that mamba page size and attention page size are exactly equal.");
    // group size 6: 1 attention group + 2 conv groups (2 padding layers); 4 GiB / (6 x 32,768 B) = 21,845
    // blocks; a request: 2048 attention blocks + 2 per conv group in align mode.
    CHECK(c.log_lines[1] == "Add 2 padding layers, may waste at most 20.00% KV cache memory");
    CHECK(c.num_blocks == 21845);
    CHECK(c.blocks_per_request == 2048 + 2 * 2);
    CHECK(c.log_lines[2] ==
          "GPU KV cache size: 348,838 tokens, Maximum concurrency for 32,768 tokens per request: 10.65x");
    o.hybrid_prefix_caching = false;  // before 0.28: no prefix caching, one state block per group
    c = capacity(m, o, 4 * GiB);
    CHECK(c.layout.mamba_cache_mode == MambaCacheMode::None);
    CHECK(c.blocks_per_request == 2048 + 2);
}

TEST_CASE("the default mamba cache mode follows the release: none before 0.28, align for gated delta net from it") {
    // PR #50991 (merged 2026-08-04, first in 0.28.0) turned prefix caching on for hybrid models.
    for (const char* v : {"0.10.0", "0.19.0", "0.24.0", "0.26.1", "0.27.1"}) {
        CAPTURE(v);
        auto r = vllm_release(v);
        REQUIRE(r.ok());
        CHECK_FALSE(r->hybrid_prefix_caching);
    }
    for (const char* v : {"", "0.28.0", "v0.29.0rc1", "1.0.0"}) {
        CAPTURE(v);
        auto r = vllm_release(v);
        REQUIRE(r.ok());
        CHECK(r->hybrid_prefix_caching);
    }
    const ModelSpec q = fixture("Qwen/Qwen3.5-27B");
    const ModelSpec kimi = fixture("moonshotai/Kimi-Linear-48B-A3B-Instruct");
    const ModelSpec nemo = fixture("nvidia/Nemotron-H-56B-Base-8K");
    VllmOptions o;
    o.max_model_len = 32768;
    CHECK(layout(q, o).mamba_cache_mode == MambaCacheMode::Align);
    CHECK(layout(kimi, o).mamba_cache_mode == MambaCacheMode::Align);
    CHECK(vllm_request_blocks(layout(q, o), 32768) == 42 + 3 * 2);  // block 784
    o.hybrid_prefix_caching = false;                                // 0.27.1
    for (const ModelSpec* m : {&q, &kimi}) CHECK(layout(*m, o).mamba_cache_mode == MambaCacheMode::None);
    CHECK(vllm_request_blocks(layout(q, o), 32768) == 42 + 3);
    VllmOptions n;  // Nemotron-H-56B-Base-8K: 8,192 tokens
    n.hybrid_prefix_caching = false;
    n.mamba_align_default = false;
    CHECK(layout(nemo, n).mamba_cache_mode == MambaCacheMode::None);
    // --enable-prefix-caching on an older release, --no-enable-prefix-caching on a newer one.
    o.enable_prefix_caching = 1;
    n.enable_prefix_caching = 1;
    CHECK(layout(q, o).mamba_cache_mode == MambaCacheMode::Align);
    CHECK(layout(nemo, n).mamba_cache_mode == MambaCacheMode::All);
    // Before 0.15 (no "align" yet) prefix caching asked for a gated-delta-net model was switched off.
    o.mamba_align_mode = false;
    CHECK(layout(q, o).mamba_cache_mode == MambaCacheMode::None);
    o.mamba_align_mode = true;
    o.hybrid_prefix_caching = true;
    o.enable_prefix_caching = 0;
    CHECK(layout(q, o).mamba_cache_mode == MambaCacheMode::None);
    // An explicit --mamba-cache-mode wins over both.
    o.mamba_cache_mode = MambaCacheMode::Align;
    CHECK(layout(q, o).mamba_cache_mode == MambaCacheMode::Align);

    // The CLI: --engine-version gives the default, the vLLM flags override it.
    const std::string cfg = kvb::test::config_path("Qwen--Qwen3.5-27B");
    auto blocks = [&](const std::string& flags) {
        auto r = kvb::test::run_cli("vllm " + cfg + " --kv-cache-memory 40GiB --max-model-len 32768 --json " + flags);
        REQUIRE(r.status == 0);
        return r.out;
    };
    CHECK(blocks("--engine-version 0.27.1").find("\"mamba_cache_mode\":\"none\"") != std::string::npos);
    CHECK(blocks("--engine-version 0.28.0").find("\"mamba_cache_mode\":\"align\"") != std::string::npos);
    CHECK(blocks("").find("\"mamba_cache_mode\":\"align\"") != std::string::npos);
    CHECK(blocks("--engine-version 0.27.1 --enable-prefix-caching").find("\"mamba_cache_mode\":\"align\"") !=
          std::string::npos);
    // "align" came with PR #30877, first in 0.15.0 (v0.14.0rc1-285 on main).
    CHECK(blocks("--engine-version 0.14.1 --enable-prefix-caching").find("\"mamba_cache_mode\":\"none\"") !=
          std::string::npos);
    CHECK(blocks("--engine-version 0.15.0 --enable-prefix-caching").find("\"mamba_cache_mode\":\"align\"") !=
          std::string::npos);
    CHECK(
        blocks("--engine-version 0.14.0rc2.dev284+g0 --enable-prefix-caching").find("\"mamba_cache_mode\":\"none\"") !=
        std::string::npos);
    CHECK(
        blocks("--engine-version 0.14.0rc2.dev285+g0 --enable-prefix-caching").find("\"mamba_cache_mode\":\"align\"") !=
        std::string::npos);
    CHECK(blocks("--no-enable-prefix-caching").find("\"mamba_cache_mode\":\"none\"") != std::string::npos);
}

namespace {

// The mamba cache mode `vllm serve --engine-version v` picks for m (flags: prefix caching 1 / 0 / -1 = the release's).
MambaCacheMode mode_at(const ModelSpec& m, const char* v, int prefix_caching, int64_t num_spec = 0) {
    auto rel = vllm_release(v);
    REQUIRE(rel.ok());
    VllmOptions o;
    o.max_model_len = 8192;
    o.hybrid_prefix_caching = rel->hybrid_prefix_caching;
    o.mamba_align_mode = rel->mamba_align_mode;
    o.mamba_prefix = rel->mamba_prefix;
    o.mamba_spec_align = rel->mamba_spec_align;
    o.mamba_align_default = rel->mamba_align_default;
    o.enable_prefix_caching = prefix_caching;
    o.num_speculative_tokens = num_spec;
    return layout(m, o).mamba_cache_mode;
}

}  // namespace

// MambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py), read at every tag: with prefix
// caching, "none" becomes "all" when the class declares SupportsMambaPrefixCaching and "align" otherwise (0.15 to
// 0.27), "align" for every class from 0.28.0 (PR #50991).
TEST_CASE("mamba cache mode under prefix caching: by the model class and the release") {
    using P = VllmMambaPrefix;
    const std::pair<const char*, P> stages[] = {{"0.10.2", P::Off},
                                                {"0.11.0", P::Off},
                                                {"0.11.1rc0", P::Off},
                                                {"0.11.1rc1", P::Mamba2List},
                                                {"0.11.1rc3", P::Mamba2List},
                                                {"0.11.1rc4", P::Declared},
                                                {"0.11.1", P::Declared},
                                                {"0.27.1", P::Declared},
                                                {"", P::Declared},
                                                // main: PR #25752 at v0.11.0rc1-195, PR #27339 at v0.11.1rc3-31
                                                {"0.11.0rc2.dev194", P::Off},
                                                {"0.11.0rc2.dev195", P::Mamba2List},
                                                {"0.11.1rc4.dev31", P::Declared}};
    for (const auto& [v, stage] : stages) {
        CAPTURE(v);
        CHECK(vllm_release(v)->mamba_prefix == stage);
    }
    // PR #40454 (v0.19.2rc0-80, in the re-cut 0.20.0) to PR #41233 (v0.21.1rc0-62, 0.22.0).
    for (const char* v : {"0.19.1", "0.20.0rc1", "0.22.0rc1", "0.22.0", "0.27.1", ""}) {
        CAPTURE(v);
        CHECK_FALSE(vllm_release(v)->mamba_spec_align);
    }
    for (const char* v : {"0.20.0", "0.20.2", "0.21.0", "0.21.1rc1.dev61"}) {
        CAPTURE(v);
        CHECK(vllm_release(v)->mamba_spec_align);
    }
    CHECK_FALSE(vllm_release("0.27.1")->mamba_align_default);
    CHECK(vllm_release("0.28.0")->mamba_align_default);

    // Jamba (JambaForCausalLM declares it from PR #27339; not in 0.11.1rc1's MAMBA2_MODELS): 4 attention layers of
    // 8 KV x 128 (4,096 B a token in bfloat16) and 28 Mamba-1 layers, conv 3 x 8,192 x 2 B + ssm 8,192 x 16 x 2 B =
    // 311,296 B of state.
    auto jamba = parse_config(
        R"({"model_type":"jamba","architectures":["JambaForCausalLM"],"num_hidden_layers":32,"num_attention_heads":32,
        "num_key_value_heads":8,"hidden_size":4096,"attn_layer_period":8,"attn_layer_offset":4,"mamba_d_state":16,
        "mamba_d_conv":4,"mamba_expand":2,"torch_dtype":"bfloat16","max_position_embeddings":262144})",
        "ai21labs/Jamba-v0.1");
    REQUIRE(jamba);
    CHECK(mode_at(*jamba, "0.11.0", 1) == MambaCacheMode::None);
    CHECK(mode_at(*jamba, "0.11.1rc3", 1) == MambaCacheMode::None);
    CHECK(mode_at(*jamba, "0.11.1rc4", 1) == MambaCacheMode::All);
    CHECK(mode_at(*jamba, "0.25.0", 1) == MambaCacheMode::All);
    CHECK(mode_at(*jamba, "0.25.0", -1) == MambaCacheMode::None);  // hybrids' default: no prefix caching
    CHECK(mode_at(*jamba, "0.28.0", -1) == MambaCacheMode::Align);
    // "all" aligns the block to get_mamba_chunk_size: Jamba's config has none, Mamba-1's 2048 applies
    // (lcm(2048, 16) x cdiv(cdiv(311,296, 4,096), 2048) = 2048); "align" to the attention kernel's 16: 16 x cdiv(76,
    // 16).
    VllmOptions o;
    o.max_model_len = 8192;
    o.enable_prefix_caching = 1;
    o.mamba_align_default = false;
    CHECK(layout(*jamba, o).attn_block_size == 2048);
    o.mamba_align_default = true;
    CHECK(layout(*jamba, o).attn_block_size == 80);

    // Falcon-H1 (FalconH1ForCausalLM, in MAMBA2_MODELS from 0.11.1rc1): its mamba_chunk_size is the "all" chunk.
    // Attention 2 KV x 64 x 2 x 2 B = 512 B a token; state conv 3 x (1536 + 2 x 128) x 2 B + ssm 24 x 64 x 128 x 2 B =
    // 10,752 + 393,216 = 403,968 B: 789 tokens, rounded up to 128: 896 (to 256 without the key: 1024).
    const char* fh1_cfg =
        R"({"model_type":"falcon_h1","architectures":["FalconH1ForCausalLM"],"num_hidden_layers":4,
        "num_attention_heads":8,"num_key_value_heads":2,"head_dim":64,"hidden_size":1024,"mamba_d_conv":4,
        "mamba_n_heads":24,"mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1,"torch_dtype":"bfloat16","max_position_embeddings":16384CHUNK})";
    auto with_chunk = [&](const std::string& chunk) {
        std::string c = fh1_cfg;
        c.replace(c.find("CHUNK"), 5, chunk);
        auto m = parse_config(c, "tiiuae/Falcon-H1-tiny");
        REQUIRE(m);
        return m.value();
    };
    const ModelSpec fh1 = with_chunk(R"(,"mamba_chunk_size":128)");
    CHECK(fh1.mamba_chunk_size == 128);
    CHECK(mode_at(fh1, "0.11.1rc1", 1) == MambaCacheMode::All);
    CHECK(mode_at(fh1, "0.11.0", 1) == MambaCacheMode::None);
    o.mamba_align_default = false;
    CHECK(layout(fh1, o).attn_block_size == 896);
    CHECK(layout(with_chunk(""), o).attn_block_size == 1024);

    // Nemotron-H with a drafter: "align" in 0.20 and 0.21 (PR #40454), "all" again from 0.22.0 (PR #41233).
    const ModelSpec nemo = fixture("nvidia/Nemotron-H-56B-Base-8K");
    CHECK(mode_at(nemo, "0.19.1", 1, 1) == MambaCacheMode::All);
    CHECK(mode_at(nemo, "0.20.0", 1, 1) == MambaCacheMode::Align);
    CHECK(mode_at(nemo, "0.21.0", 1, 1) == MambaCacheMode::Align);
    CHECK(mode_at(nemo, "0.21.0", 1, 0) == MambaCacheMode::All);
    CHECK(mode_at(nemo, "0.22.0", 1, 1) == MambaCacheMode::All);
    CHECK(mode_at(nemo, "0.28.0", -1, 0) == MambaCacheMode::Align);
    CHECK(mode_at(nemo, "0.11.0", 1) == MambaCacheMode::None);
    // A multimodal wrapper is a class of its own, declaring nothing.
    ModelSpec vl = nemo;
    vl.architecture = "NemotronH_Nano_VL_V2";
    CHECK(mode_at(vl, "0.27.1", 1) == MambaCacheMode::Align);
    // From a GGUF header (no architecture) the model_type names the class's module.
    ModelSpec gguf = nemo;
    gguf.architecture.clear();
    CHECK(mode_at(gguf, "0.27.1", 1) == MambaCacheMode::All);
}

// MiniMaxText01ForCausalLM (MiniMax-M1) is a hybrid that declares no SupportsMambaPrefixCaching: with prefix caching
// 0.15 to 0.22 (it was removed in 0.23.0) give it "align", two state blocks in each of its 7 lightning-attention
// groups; before 0.15 its prefix caching was switched off. 10 full-attention and 70 linear layers, group size 10, a
// 4 MiB page (64 heads x 128 x 128 x 4 B of state = 1,024 attention tokens), 60 GiB = 1,536 blocks of 10 pages.
TEST_CASE("MiniMax-M1 under --enable-prefix-caching: align from 0.15 (was none), vLLM's capacity lines") {
    const std::string cfg = kvb::test::config_path("MiniMaxAI--MiniMax-M1-80k");
    auto lines = [&](const std::string& v) {
        auto r = kvb::test::run_cli("vllm " + cfg + " --kv-cache-memory 60GiB --max-model-len 65536 --engine-version " +
                                    v + " --enable-prefix-caching");
        REQUIRE(r.status == 0);
        return r.out;
    };
    // 64 attention blocks + 2 x 7: 1,536 / 78 = 19.69x; int(19.6923 x 65,536) tokens (PR #41069's count).
    CHECK(lines("0.22.0").find(
              "Setting attention block size to 1024 tokens to ensure that attention page size is >= mamba page size.\n"
              "GPU KV cache size: 1,290,555 tokens\n"
              "Maximum concurrency for 65,536 tokens per request: 19.69x\n") == 0);
    // 0.14.1: prefix caching off for it, 64 + 7 blocks: 21.63x (0.14 counts num_blocks // 8 groups x 1,024 tokens).
    const std::string old = lines("0.14.1");
    CHECK(old.find("Maximum concurrency for 65,536 tokens per request: 21.63x") != std::string::npos);
}

TEST_CASE("a vLLM refusal carries kvbudget's coded lead beside vLLM's own text") {
    // The same Qwen1.5-7B request as vLLM's test_estimate_max_model_len: 1025 blocks of 8 MiB.
    ModelSpec m = dense("Qwen/Qwen1.5-7B", 32, 32, 128, 32, 32768, "float16");
    VllmOptions o;
    o.max_num_batched_tokens = 32768;
    o.max_model_len = 16385;
    VllmCapacity c = capacity(m, o, 8 * GiB);
    CHECK(c.refusal.code == "vllm_kv_too_small");
    CHECK(c.refusal.param("estimated_max_model_len") == "16,384");
    CHECK(render_english(c.refusal) ==
          "vLLM refuses to start: one 16,385-token request needs 8.01 GiB of KV cache but 8.00 GiB is available; set "
          "--max-model-len to at most 16,384, or free memory for the KV cache (a higher --gpu-memory-utilization, "
          "more GPUs, a smaller weights format)");
    c = capacity(m, o, 1000);
    CHECK(c.refusal.code == "vllm_kv_too_small_none");
    CHECK(c.refusal.param("estimated_max_model_len").empty());
    c = capacity(m, o, 0);
    CHECK(c.refusal.code == "vllm_kv_pool_negative");  // nothing at all is left: say how much is short
    CHECK(c.refusal.param("short") == "0 B");
    c = capacity(m, o, -GiB);
    CHECK(c.refusal.param("short") == "1.00 GiB");
    // V0 words the shortfall in tokens; the lead is the same code.
    o.log_format = VllmLogFormat::V0;
    c = capacity(m, o, 8 * GiB);
    CHECK(c.refusal.code == "vllm_kv_too_small");
    CHECK(c.refusal.param("estimated_max_model_len") == "16,384");
    o.max_model_len = 16383;
    o.log_format = VllmLogFormat::Current;
    c = capacity(m, o, 8 * GiB);
    CHECK(c.fits);
    CHECK(c.refusal.code.empty());
}

TEST_CASE("vLLM's layout notes and refusals are coded, in the same English") {
    ModelSpec m = dense("Qwen/Qwen1.5-7B", 32, 32, 128, 32, 32768, "float16");
    VllmOptions o;
    o.tensor_parallel_size = 3;
    auto bad = vllm_layout(m, o);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == "vllm_refused");
    CHECK(bad.error().detail.code == "vllm_tp_heads");
    CHECK(bad.error().detail.param("tp") == "3");
    m.max_position_embeddings = 0;
    VllmLayout l = layout(m);
    REQUIRE(l.notes.size() == 1);
    CHECK(l.notes[0].code == "vllm_no_max_len");
    CHECK(render_english(l.notes[0]) ==
          "config.json has no maximum length key: vLLM assumes the model's maximum length is 2048");
}

// ---------------------------------------------------------------- speculative decoding (--speculative-config)

TEST_CASE("EAGLE: the head's decoder layer joins the pool; vllm#19996's 410,128 tokens from 51.63 GiB") {
    // engine-logs.md C1: Llama-3.1-8B-Instruct, 32 layers x 8 KV heads x 128, bf16: a block is 2 MiB, with the
    // EAGLE head's layer 33 x 65,536 = 2,162,688 B; 51.63 GiB holds 25,633 such blocks = 410,128 tokens.
    const ModelSpec target = fixture("meta-llama/Llama-3.1-8B-Instruct");
    auto sc = parse_vllm_speculative(
        R"({"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3})");
    REQUIRE(sc.ok());
    CHECK(sc->method == "eagle");
    CHECK(sc->num_speculative_tokens == 3);
    auto with = vllm_with_drafter(target, *sc, nullptr);
    REQUIRE(with.ok());
    CHECK(with->layers.size() == 33);
    CHECK(with->notes.back().code == "vllm_drafter_layers");
    CHECK(with->notes.back().param("layers") == "1");
    VllmOptions o;
    o.log_format = VllmLogFormat::Legacy;
    o.max_model_len = 131072;
    const int64_t avail = static_cast<int64_t>(51.63 * double(int64_t(1) << 30));
    auto plain = vllm_capacity(target, o, avail);
    auto eagle = vllm_capacity(*with, o, avail);
    REQUIRE(plain.ok());
    REQUIRE(eagle.ok());
    CHECK(plain->tokens == 422944);
    CHECK(eagle->tokens == 410128);
    CHECK(eagle->layout.layers.size() == 33);
}

TEST_CASE("speculative methods: MTP takes the model's own layers, n-gram none, a draft model its config's") {
    const ModelSpec v3 = fixture("deepseek-ai/DeepSeek-V3");  // num_nextn_predict_layers 1
    auto mtp = vllm_with_drafter(v3, *parse_vllm_speculative("{'method': 'deepseek_mtp', 'num_speculative_tokens': 1}"),
                                 nullptr);
    REQUIRE(mtp.ok());
    CHECK(mtp->layers.size() == v3.layers.size() + 1);
    CHECK(mtp->layers.back().kind == LayerKind::Mla);
    const ModelSpec llama = fixture("meta-llama/Llama-3.1-8B-Instruct");
    auto ngram = vllm_with_drafter(
        llama, *parse_vllm_speculative(R"({"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_max": 4})"),
        nullptr);
    REQUIRE(ngram.ok());
    CHECK(ngram->layers.size() == 32);
    // A draft model: all 16 of Llama-3.2-1B's layers (8 KV heads x 64) beside the target's 32.
    const ModelSpec small = fixture("meta-llama/Llama-3.2-1B-Instruct");
    auto sc = parse_vllm_speculative(R"({"model": "meta-llama/Llama-3.2-1B-Instruct", "num_speculative_tokens": 4})");
    REQUIRE(sc.ok());
    CHECK(sc->method == "draft_model");
    auto need = vllm_with_drafter(llama, *sc, nullptr);
    REQUIRE_FALSE(need.ok());
    CHECK(need.error().detail.code == "vllm_spec_needs_draft");
    auto draft = vllm_with_drafter(llama, *sc, &small);
    REQUIRE(draft.ok());
    REQUIRE(draft->layers.size() == 48);
    CHECK(draft->layers.back().k_head_dim == 64);
    // 32 x 8 x 128 x 2 x 2 + 16 x 8 x 64 x 2 x 2 = 131,072 + 32,768 B per token, all full attention of two page
    // sizes: one group of UniformTypeKVCacheSpecs, a block of 16 tokens is 2,621,440 B; 4 GiB holds 1,638 of them.
    VllmOptions o;
    o.max_model_len = 8192;
    auto c = vllm_capacity(*draft, o, int64_t(4) << 30);
    REQUIRE(c.ok());
    CHECK(c->num_blocks == 1638);
    CHECK(c->tokens == 26208);
    // Bad input is refused with its own message.
    CHECK(parse_vllm_speculative("eagle").error().detail.code == "vllm_spec_config_bad");
    CHECK(parse_vllm_speculative("{}").error().detail.code == "vllm_spec_config_bad");
    auto unknown = vllm_with_drafter(llama, *parse_vllm_speculative(R"({"method": "lookahead"})"), nullptr);
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().detail.code == "vllm_spec_method_unknown");
}

TEST_CASE("kvbudget vllm --pp-layer-partition") {
    Run r = run_cli("vllm " + cfg("meta-llama--Llama-3.1-8B") +
                    " --kv-cache-memory 8GiB --max-model-len 32768 -pp 2 --pp-layer-partition 15,17 --json");
    CHECK(r.status == 0);
    CHECK(r.out.find("\"stage_layers\":[15,17]") != std::string::npos);
    CHECK(r.out.find("\"num_blocks\":7710") != std::string::npos);
    r = run_cli("vllm " + cfg("meta-llama--Llama-3.1-8B") + " --kv-cache-memory 8GiB -pp 2 --pp-layer-partition 15,16",
                true);
    CHECK(r.status == 1);
    CHECK(r.out.find("ValueError: sum(partitions)=31 does not match num_hidden_layers=32.") != std::string::npos);
}
