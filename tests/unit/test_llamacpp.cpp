// llama.cpp KV cache: exact bytes per cache type, context padding, streams,
// the separate SWA cache, MLA, recurrent state, and the printed lines.
#include <doctest/doctest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/units.h"
#include "engines/llamacpp.h"
#include "fixtures.h"

using namespace kvb;
using kvb::test::fixture;
using kvb::test::gemma3;
using kvb::test::mla;

namespace {

LlamaLayout run(const ModelSpec& m, LlamaOptions o) {
    auto r = llamacpp_layout(m, o);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

LlamaLayout ctx(const ModelSpec& m, int64_t c, const std::string& tk = "f16", const std::string& tv = "f16") {
    LlamaOptions o;
    o.n_ctx = c;
    o.type_k = tk;
    o.type_v = tv;
    return run(m, o);
}

}  // namespace

TEST_CASE("Llama-3.1-8B bytes per token for every cache type") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    CHECK(ctx(m, 256).bytes_per_token == 131072);
    CHECK(ctx(m, 256, "q8_0", "q8_0").bytes_per_token == 69632);
    CHECK(ctx(m, 256, "q5_1", "q5_1").bytes_per_token == 49152);
    CHECK(ctx(m, 256, "q5_0", "q5_0").bytes_per_token == 45056);
    CHECK(ctx(m, 256, "q4_1", "q4_1").bytes_per_token == 40960);
    CHECK(ctx(m, 256, "q4_0", "q4_0").bytes_per_token == 36864);
    CHECK(ctx(m, 256, "iq4_nl", "iq4_nl").bytes_per_token == 36864);
    CHECK(ctx(m, 256, "f32", "f32").bytes_per_token == 262144);
    CHECK(ctx(m, 256, "q8_0", "f16").bytes_per_token == 32 * (1088 + 2048));  // K and V set separately
}

TEST_CASE("Llama-3.1-8B -c 8192: llama.cpp's exact line") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    LlamaLayout l = ctx(m, 8192);
    REQUIRE(l.log_lines.size() == 1);
    CHECK(l.log_lines[0] ==
          "llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  "
          "512.00 MiB");
    CHECK(l.total_bytes == 1024 * MiB);

    LlamaOptions o;
    o.n_ctx = 8192;
    o.log_format = LlamaLogFormat::Unified;
    CHECK(run(m, o).log_lines[0] ==
          "llama_kv_cache_unified: size = 1024.00 MiB (  8192 cells,  32 layers,  1 seqs), K (f16):  512.00 MiB, V "
          "(f16):  512.00 MiB");
}

TEST_CASE("context padding to 256 and per-sequence streams") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    CHECK(ctx(m, 8000).n_ctx == 8192);
    CHECK(ctx(m, 1).caches[0].cells == 256);
    LlamaOptions o;
    o.n_ctx = 10000;
    o.n_seq_max = 3;  // n_ctx 10240 -> 3413 per seq -> padded 3584 per stream -> n_ctx 10752
    LlamaLayout l = run(m, o);
    CHECK(l.n_ctx_seq == 3584);
    CHECK(l.n_ctx == 10752);
    CHECK(l.n_stream == 3);
    CHECK(l.caches[0].cells == 3584);
    CHECK(l.kv_bytes == int64_t(3584) * 3 * 131072);
    CHECK(l.log_lines[0].find("(  3584 cells,  32 layers,  3/3 seqs)") != std::string::npos);
    o.kv_unified = true;
    l = run(m, o);
    CHECK(l.n_stream == 1);
    CHECK(l.caches[0].cells == 10240);
    CHECK(l.log_lines[0].find("( 10240 cells,  32 layers,  3/1 seqs)") != std::string::npos);
    o.n_pad = 32;  // older builds without flash attention
    o.kv_unified = false;
    o.n_seq_max = 1;
    o.n_ctx = 8200;
    CHECK(run(m, o).n_ctx == 8224);
}

TEST_CASE("Qwen3-8B: q8_0 78336 and q4_0 41472 B/token") {
    ModelSpec m = fixture("Qwen/Qwen3-8B");
    CHECK(ctx(m, 256).bytes_per_token == 147456);
    CHECK(ctx(m, 256, "q8_0", "q8_0").bytes_per_token == 78336);
    CHECK(ctx(m, 256, "q4_0", "q4_0").bytes_per_token == 41472);
}

TEST_CASE("MLA: current builds cache K only (576 wide); older ones also a 512-wide V") {
    ModelSpec m = mla("DeepSeek-V2 (hand-built)", 60, 128);
    LlamaLayout l = ctx(m, 4096);
    CHECK(l.bytes_per_token == 69120);
    CHECK(l.caches[0].v_bytes == 0);
    CHECK(l.log_lines[0] ==
          "llama_kv_cache: size =  270.00 MiB (  4096 cells,  60 layers,  1/1 seqs), K (f16):  270.00 MiB, V (f16):    "
          "0.00 MiB");
    CHECK(ctx(m, 256, "q8_0", "q8_0").bytes_per_token == 36720);
    LlamaOptions o;
    o.n_ctx = 256;
    o.mla_v_cache = true;
    CHECK(run(m, o).bytes_per_token == 130560);
    CHECK(ctx(fixture("deepseek-ai/DeepSeek-V3"), 256).bytes_per_token == 61 * 1152);
}

TEST_CASE("gpt-oss-20b: 12 layers x n_ctx + 12 layers x 768 SWA cells") {
    ModelSpec m = fixture("openai/gpt-oss-20b");
    LlamaLayout l = ctx(m, 131072);
    REQUIRE(l.caches.size() == 2);
    CHECK(l.caches[0].role == "non-SWA");
    CHECK(l.caches[0].layers == 12);
    CHECK(l.caches[1].role == "SWA");
    CHECK(l.caches[1].cells == 768);
    CHECK(l.caches[1].k_bytes + l.caches[1].v_bytes == int64_t(12) * 768 * 2048);
    CHECK(l.bytes_per_token == 12 * 2048);
    REQUIRE(l.log_lines.size() == 4);
    CHECK(l.log_lines[0] == "llama_kv_cache_iswa: creating non-SWA KV cache, size = 131072 cells");
    CHECK(l.log_lines[2] == "llama_kv_cache_iswa: creating     SWA KV cache, size = 768 cells");
    CHECK(l.log_lines[3] ==
          "llama_kv_cache: size =   18.00 MiB (   768 cells,  12 layers,  1/1 seqs), K (f16):    9.00 MiB, V (f16):    "
          "9.00 MiB");

    LlamaOptions o;
    o.n_ctx = 131072;
    o.swa_full = true;
    l = run(m, o);
    CHECK(l.caches[1].cells == 131072);
    CHECK(l.log_lines[0] ==
          "llama_kv_cache_iswa: using full-size SWA cache (ref: "
          "https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)");
    o.swa_full = false;
    o.n_ubatch = 1024;
    CHECK(run(m, o).caches[1].cells == 1280);  // pad(128 + 1024, 256)
    o.n_ubatch = 512;
    o.n_seq_max = 4;
    o.kv_unified = true;  // unified: the window is kept for every sequence
    CHECK(run(m, o).caches[1].cells == 1024);
    o.kv_unified = false;  // one stream per sequence: n_swa once per stream
    l = run(m, o);
    CHECK(l.caches[1].cells == 768);
    CHECK(l.caches[1].n_stream == 4);
    o.n_ctx = 256;  // never more than the context
    o.n_seq_max = 1;
    CHECK(run(m, o).caches[1].cells == 256);
}

TEST_CASE("Gemma-3-27b (hand-built): 10 x n_ctx + 52 x 1536 cells x 8192 B") {
    ModelSpec m = gemma3("gemma-3-27b (hand-built)", 62, 16, 128, 1024, 131072);
    LlamaLayout l = ctx(m, 32768);
    CHECK(l.caches[0].layers == 10);
    CHECK(l.caches[0].k_bytes + l.caches[0].v_bytes == int64_t(10) * 32768 * 8192);
    CHECK(l.caches[1].layers == 52);
    CHECK(l.caches[1].cells == 1536);
    CHECK(l.caches[1].k_bytes + l.caches[1].v_bytes == int64_t(52) * 1536 * 8192);
}

TEST_CASE("gemma-3-4b-it fixture: 5 global + 29 SWA layers, window 1024") {
    LlamaLayout l = ctx(fixture("google/gemma-3-4b-it"), 8192);
    CHECK(l.caches[0].layers == 5);
    CHECK(l.caches[1].layers == 29);
    CHECK(l.caches[1].cells == 1536);
    CHECK(l.log_lines[1] ==
          "llama_kv_cache: size =  160.00 MiB (  8192 cells,   5 layers,  1/1 seqs), K (f16):   80.00 MiB, V (f16):   "
          "80.00 MiB");
}

TEST_CASE("Qwen3-Next: attention 24576 B/token, recurrent R 98304 + S 2,097,152 per layer in f32") {
    ModelSpec m = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    LlamaLayout l = ctx(m, 4096);
    CHECK(l.bytes_per_token == 24576);
    REQUIRE(l.recurrent.present);
    CHECK(l.recurrent.state_layers == 36);
    CHECK(l.recurrent.r_bytes == 36 * 98304);
    CHECK(l.recurrent.s_bytes == int64_t(36) * 2097152);
    CHECK(llamacpp_mib(l.recurrent.r_bytes + l.recurrent.s_bytes) == "  75.38");
    REQUIRE(l.log_lines.size() == 2);
    CHECK(l.log_lines[1] ==
          "llama_memory_recurrent: size =   75.38 MiB (     1 cells,  48 layers,  1 seqs  0 rs_seq), R (f32):    3.38 "
          "MiB, S (f32):   72.00 MiB, P (f32):    0.00 MiB");
    LlamaOptions o;
    o.n_ctx = 4096;
    o.log_format = LlamaLogFormat::Y2025;
    o.type_k = o.type_v = "q8_0";  // the recurrent state stays f32 whatever the KV types
    l = run(m, o);
    CHECK(l.log_lines[1] ==
          "llama_memory_recurrent: size =   75.38 MiB (     1 cells,  48 layers,  1 seqs), R (f32):    3.38 MiB, S "
          "(f32):   72.00 MiB");
    o.log_format = LlamaLogFormat::RsSeq;
    o.n_seq_max = 4;
    o.kv_unified = true;
    l = run(m, o);
    CHECK(l.recurrent.cells == 4);  // one state per sequence even with a unified KV cache
    CHECK(l.log_lines[1] ==
          "llama_memory_recurrent: size =  301.50 MiB (     4 cells,  48 layers,  4 seqs  0 rs_seq), R (f32):   13.50 "
          "MiB, S (f32):  288.00 MiB");
}

TEST_CASE("all-sliding Mistral-7B-v0.1 keeps the full context in llama.cpp") {
    LlamaLayout l = ctx(fixture("mistralai/Mistral-7B-v0.1"), 32768);
    REQUIRE(l.caches.size() == 1);
    CHECK(l.caches[0].cells == 32768);
    CHECK(l.bytes_per_token == 131072);
    CHECK_FALSE(l.notes.empty());
}

TEST_CASE("bad llama.cpp options are refused with the option named") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    LlamaOptions o;
    o.type_k = "q3_k";
    auto r = llamacpp_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("q3_k") != std::string::npos);
    o = {};
    o.n_seq_max = 0;
    r = llamacpp_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "-np must be between 1 and 4096, got 0");
    o = {};
    o.n_ctx = int64_t(1) << 40;
    CHECK_FALSE(llamacpp_layout(m, o).ok());
    CHECK_FALSE(parse_llama_log_format("old").ok());
    // -c 0 uses the training context.
    o = {};
    CHECK(run(m, o).n_ctx == 131072);
}

// ---------------------------------------------------------------- the `kvbudget llamacpp` command

namespace {

kvb::test::CliRun llama_cli(const std::string& args) {
    return kvb::test::run_cli("llamacpp " + args, false);
}
using kvb::test::config_path;

}  // namespace

TEST_CASE("kvbudget llamacpp prints llama.cpp's lines") {
    kvb::test::CliRun r = llama_cli(config_path("meta-llama--Llama-3.1-8B") + " -c 8192");
    CHECK(r.status == 0);
    CHECK(r.out ==
          "llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  512.00 MiB, V (f16):  "
          "512.00 MiB\n");
    r = llama_cli(config_path("Qwen--Qwen3-Next-80B-A3B-Thinking") + " -c 4096 -np 2 --kv-unified -ctk q8_0 -ctv q8_0");
    CHECK(r.status == 0);
    CHECK(r.out.find("(  4096 cells,  12 layers,  2/1 seqs), K (q8_0)") != std::string::npos);
    CHECK(r.out.find("llama_memory_recurrent: size =  150.75 MiB (     2 cells,  48 layers,  2 seqs  0 rs_seq)") !=
          std::string::npos);
    r = llama_cli(config_path("openai--gpt-oss-20b") + " -c 131072 --json");
    CHECK(r.status == 0);
    const auto swa = nlohmann::json::parse(r.out)["caches"][1];
    CHECK(swa["role"] == "SWA");
    CHECK(swa["cells"] == 768);

    CHECK(llama_cli(config_path("Qwen--Qwen3-8B")).status == 2);  // -c missing
    CHECK(llama_cli(config_path("Qwen--Qwen3-8B") + " -c 4096 -ctk q3_k").status == 1);
    CHECK(llama_cli(config_path("Qwen--Qwen3-8B") + " -c -5").status == 1);
    CHECK(llama_cli(config_path("Qwen--Qwen3-8B") + " -c 4096 --nope").status == 2);
    CHECK(llama_cli("--help").status == 0);
}

TEST_CASE("large contexts stay exact") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    LlamaOptions o;
    o.n_ctx = 4194304;  // 4M cells, far past the training context: llama.cpp warns but allocates
    LlamaLayout l = run(m, o);
    CHECK(l.kv_bytes == int64_t(4194304) * 131072);
    CHECK(l.log_lines[0].find("size = 524288.00 MiB (4194304 cells,  32 layers,  1/1 seqs)") != std::string::npos);
    CHECK_FALSE(l.notes.empty());
    o.n_seq_max = 4096;
    o.n_ctx = 1048576 * 8;
    l = run(m, o);
    CHECK(l.n_ctx_seq == 2048);
    CHECK(l.kv_bytes == int64_t(2048) * 4096 * 131072);
}

TEST_CASE("llama.cpp's notes and refusals are coded, in the same English") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    LlamaOptions o;
    o.n_seq_max = 0;
    auto r = llamacpp_layout(m, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail.code == "llama_np_range");
    CHECK(r.error().detail.param("value") == "0");
    o = {};
    o.n_ctx = 1000;
    o.n_seq_max = 3;
    LlamaLayout l = run(m, o);
    // 1000 pads to 1024; 1024 / 3 = 341 pads to 512 per stream, so n_ctx becomes 1536.
    REQUIRE(l.notes.size() == 1);
    CHECK(l.notes[0].code == "llama_ctx_rounded");
    CHECK(render_english(l.notes[0]) == "llama_context: n_ctx is not divisible by n_seq_max - rounding down to 1536");
}

TEST_CASE("LFM2: llama.cpp's recurrent cache holds n_embd x (shortconv.l_cache - 1) f32 values per conv layer") {
    // llama_hparams::n_embd_r for LFM2 is n_embd * (n_shortconv_l_cache - 1); n_embd_s is 0 (no SSM);
    // recurrent layers are those with n_head_kv(il) == 0 (LLM_ARCH_LFM2).
    ModelSpec m = fixture("LiquidAI/LFM2.5-VL-1.6B");
    LlamaLayout l = ctx(m, 32768);
    REQUIRE(l.recurrent.present);
    CHECK(l.recurrent.state_layers == 10);
    CHECK(l.recurrent.r_bytes == 10 * 2048 * 2 * 4);
    CHECK(l.recurrent.s_bytes == 0);
    REQUIRE(l.log_lines.size() == 2);
    CHECK(l.log_lines[0] ==
          "llama_kv_cache: size =  384.00 MiB ( 32768 cells,   6 layers,  1/1 seqs), K (f16):  192.00 MiB, V (f16):  "
          "192.00 MiB");
    CHECK(l.log_lines[1] ==
          "llama_memory_recurrent: size =    0.16 MiB (     1 cells,  16 layers,  1 seqs  0 rs_seq), R (f32):    0.16 "
          "MiB, S (f32):    0.00 MiB, P (f32):    0.00 MiB");
}
