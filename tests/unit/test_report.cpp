// The KV report shared by `kvbudget kv` and the page.
#include <dirent.h>
#include <doctest/doctest.h>

#include <algorithm>

#include "base/units.h"
#include "engines/transformers_cache.h"
#include "fixtures.h"
#include "kv/tables.h"
#include "report/kv_report.h"

using namespace kvb;
using kvb::test::fixture;

TEST_CASE("Qwen3-8B context table, as the seed article prints it") {
    auto e = engine_kv(fixture("Qwen/Qwen3-8B"), "vllm").value();
    auto rows = context_table(e, 2);
    REQUIRE(rows.size() == 5);
    const char* want[] = {"144.00 MiB", "576.00 MiB", "1.13 GiB", "4.50 GiB", "5.63 GiB"};
    const int64_t ctx[] = {1024, 4096, 8192, 32768, 40960};
    for (size_t i = 0; i < rows.size(); ++i) {
        CHECK(rows[i].context == ctx[i]);
        CHECK(format_bytes(rows[i].bytes_per_seq) == want[i]);
        CHECK(rows[i].bytes_total == 2 * rows[i].bytes_per_seq);
    }
    CHECK(rows.back().is_model_max);
}

TEST_CASE("formula groups: one group per distinct geometry, in order") {
    ModelSpec m = fixture("openai/gpt-oss-20b");
    auto e = engine_kv(m, "vllm").value();
    auto g = layer_groups(e.view, e.dtypes);
    REQUIRE(g.size() == 2);
    CHECK(g[0].layer.kind == LayerKind::Sliding);
    CHECK(g[0].layers == 12);
    CHECK(g[0].bytes_per_token_per_layer == 2 * 8 * 64 * 2);
    CHECK(g[1].layer.kind == LayerKind::Full);
    CHECK(g[1].bytes_per_token == 12 * 2048);
    auto next = engine_kv(fixture("Qwen/Qwen3-Next-80B-A3B-Thinking"), "vllm").value();
    auto gn = layer_groups(next.view, next.dtypes);
    REQUIRE(gn.size() == 2);
    CHECK(gn[0].state_bytes_per_layer == 1'097'728);
    CHECK(gn[0].state_bytes == 36 * 1'097'728);
}

TEST_CASE("MHA / actual / MQA") {
    auto e = engine_kv(fixture("Qwen/Qwen3-8B"), "vllm").value();
    auto v = head_variants(e, 32768, 1);
    REQUIRE(v.size() == 3);
    CHECK(v[0].kv_heads == 32);
    CHECK(v[0].bytes_per_token == 589'824);
    CHECK(v[1].kv_heads == 8);
    CHECK(v[1].bytes_per_token == 147'456);
    CHECK(v[2].kv_heads == 1);
    CHECK(v[2].bytes_per_token == 18'432);
    CHECK(*v[2].bytes_total == 18'432 * int64_t(32768));
}

TEST_CASE("optimization ladder for Qwen3-8B at 32K") {
    auto rows = optimization_ladder(fixture("Qwen/Qwen3-8B"), "vllm", 32768, 1);
    REQUIRE(rows.size() == 7);
    CHECK(rows[0].step == "mha");
    CHECK(rows[0].saving == doctest::Approx(-3.0));
    CHECK(rows[1].step == "model");
    CHECK(rows[1].kv_bytes == 147'456 * int64_t(32768));
    CHECK(rows[2].step == "fp8");
    CHECK(rows[2].saving == doctest::Approx(0.5));
    CHECK(rows[3].step == "q8_0");
    CHECK(rows[3].kv_bytes == 78'336 * int64_t(32768));
    CHECK(rows[4].step == "q4_0");
    CHECK(rows[4].kv_bytes == 41'472 * int64_t(32768));
    CHECK(rows[5].step == "contiguous");
    CHECK(rows[5].kv_bytes == 147'456 * int64_t(40960));
    CHECK_FALSE(rows[5].bytes_per_token);
    CHECK(rows[6].step == "mla");
    CHECK(*rows[6].bytes_per_token == 36 * 576 * 2);
}

// The ladder's baseline is the chosen engine's cache: llama.cpp keeps Qwen3.5's recurrent state in f32 (vLLM in the
// model dtype), so its "model" row is the context table's 32K row (736,952,320 B = 702.81 MiB), not vLLM's.
TEST_CASE("optimization ladder: the baseline is the chosen engine's cache") {
    const ModelSpec& m = fixture("Qwen/Qwen3.5-35B-A3B");
    KvReportInputs in;
    in.engine = "llamacpp";
    in.context = 32768;
    auto r = compute_kv_report(m, in);
    REQUIRE(r.ok());
    REQUIRE(r->ladder.size() > 1);
    CHECK(r->ladder[1].step == "model");
    CHECK(r->ladder[1].kv_bytes == r->bytes_total);
    CHECK(r->bytes_total == 736952320);
    auto vllm = optimization_ladder(m, "vllm", 32768, 1);
    REQUIRE(vllm.size() > 1);
    CHECK(vllm[1].kv_bytes < r->bytes_total);  // the state in bf16
}

TEST_CASE("the transformers view gives exactly transformers_cache's bytes, for every fixture") {
    DIR* d = opendir(KVB_FIXTURES "/configs");
    REQUIRE(d);
    int checked = 0;
    while (dirent* ent = readdir(d)) {
        std::string f = ent->d_name;
        if (f.size() < 6 || f.substr(f.size() - 5) != ".json") continue;
        CAPTURE(f);
        auto m = parse_config(kvb::test::read_file(std::string(KVB_FIXTURES) + "/configs/" + f), f);
        REQUIRE(m);
        auto e = engine_kv(m.value(), "transformers");
        if (std::any_of(m->layers.begin(), m->layers.end(), dsv4_layer)) {  // refused: test_dsv4.cpp
            CHECK(e.error().detail.code == "transformers_dsv4");
            continue;
        }
        if (m->family == "minimax_m3") {  // refused: test_minimax.cpp
            CHECK(e.error().detail.code == "transformers_minimax_m3");
            continue;
        }
        REQUIRE(e);
        for (int64_t ctx : {1, 100, 1000, 5000, 40000}) {
            CHECK(kv_bytes_at(e->view, e->dtypes, ctx, 3).value() ==
                  transformers_cache_bytes(m.value(), ctx, 3).value());
        }
        ++checked;
    }
    closedir(d);
    CHECK(checked == 57);  // and the DeepSeek-V4 and MiniMax-M3 fixtures, refused
}

TEST_CASE("engine element types and their refusals") {
    ModelSpec m = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    auto l = engine_kv(m, "llamacpp", "", "q8_0", "q4_0").value();
    CHECK(l.dtypes.k.name == "q8_0");
    CHECK(l.dtypes.v.name == "q4_0");
    CHECK(l.dtypes.ssm_state_bytes == 4);
    // vLLM's argparse refusal with the release's CacheDType (vllm/config/cache.py at v0.10.2).
    CHECK(engine_kv(m, "vllm", "fp4", "f16", "f16", "0.10.2").error().message ==
          "vllm serve: error: argument --kv-cache-dtype: invalid choice: 'fp4' (choose from 'auto', 'fp8', "
          "'fp8_e4m3', 'fp8_e5m2', 'fp8_inc')");
    CHECK(engine_kv(m, "llamacpp", "", "q3_k").error().message ==
          "unknown llama.cpp cache type 'q3_k' (choose from f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl)");
    CHECK(engine_kv(m, "transformers", "fp8").error().message ==
          "unknown transformers cache dtype 'fp8' (choose from auto, bfloat16, float16, float32)");
    CHECK(engine_kv(m, "tgi").error().message == "engine must be vllm, llamacpp or transformers, got 'tgi'");
}

// llama.cpp has no SWA cache for a model whose every layer slides (Mistral-7B-v0.1 is a "llama"
// GGUF): each layer keeps the whole context, as its llama_kv_cache line says, so its KV report
// counts full layers: 32 x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B per token.
TEST_CASE("llama.cpp's KV report follows its cache: a model whose every layer slides keeps the whole context") {
    const auto& m = fixture("mistralai/Mistral-7B-v0.1");
    KvReportInputs in;
    in.engine = "llamacpp";
    in.context = 32768;
    in.seqs = 2;
    auto r = compute_kv_report(m, in);
    REQUIRE(r.ok());
    CHECK(r.value().ideal.bytes_per_token == 131072);
    CHECK(r.value().bytes_total == 2LL * 32768 * 131072);
    // vLLM keeps the window (a sliding-window KV spec per layer): 4,096 tokens at most per sequence.
    in.engine = "vllm";
    auto v = compute_kv_report(m, in);
    REQUIRE(v.ok());
    CHECK(v.value().bytes_total == 2LL * 4096 * 131072);
}
