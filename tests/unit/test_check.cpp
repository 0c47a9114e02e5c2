// kvbudget check: every log in tests/fixtures/engine-logs.md read back and compared
// line by line with the engines' prediction; each line either agrees or its cause is
// named. Models without a fixture config are hand-built as in test_engine_logs.cpp
// (same V*/L* numbering, same published architecture numbers).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "check/check.h"
#include "check/log_reader.h"
#include "engines/llamacpp.h"
#include "fixtures.h"
#include "report/check_json.h"

using namespace kvb;
using kvb::test::dense;
using kvb::test::fixture;
using kvb::test::full;
using kvb::test::gdn;

namespace {

// The k-th code block under the "### <id>." heading of engine-logs.md.
std::string log_block(const std::string& id, int k = 0) {
    std::ifstream in(std::string(KVB_FIXTURES) + "/engine-logs.md");
    std::string line, out;
    bool in_section = false, in_block = false;
    int seen = 0;
    while (std::getline(in, line)) {
        if (line.rfind("### ", 0) == 0) {
            if (in_section && !in_block) break;
            in_section = line.rfind("### " + id + ".", 0) == 0;
            continue;
        }
        if (!in_section) continue;
        if (line.rfind("```", 0) == 0) {
            if (in_block) {
                if (seen++ == k) return out;
                out.clear();
            }
            in_block = !in_block;
            continue;
        }
        if (in_block) out += line + "\n";
    }
    FAIL("no code block " << k << " under ### " << id);
    return {};
}

ModelSpec qwen35_like(const std::string& name, int layers, int kv_heads, int hv) {
    ModelSpec m;
    m.name = name;
    m.dtype = "bfloat16";
    m.ssm_dtype = "float32";
    m.max_position_embeddings = 262144;
    m.dims.num_attention_heads = 16;
    for (int i = 0; i < layers; ++i) m.layers.push_back(i % 4 == 3 ? full(kv_heads, 256) : gdn(16, hv, 128));
    return m;
}

CheckReport check(const std::string& text, const ModelSpec* m) {
    auto f = read_engine_log(text);
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    return check_log(*f, m, m ? m->name : "", m ? "argument" : "");
}

// Every line agrees, each with the given note codes ("" = identical text).
void all_match(const CheckReport& r, std::vector<std::string> causes) {
    REQUIRE(r.lines.size() == causes.size());
    for (size_t i = 0; i < causes.size(); ++i) {
        CAPTURE(r.lines[i].printed);
        CAPTURE(r.lines[i].predicted);
        CHECK(r.lines[i].match);
        CHECK(r.lines[i].cause.code == causes[i]);
    }
    CHECK(r.unexplained == 0);
}

}  // namespace

// ---------------------------------------------------------------- vLLM logs of engine-logs.md

TEST_CASE("V1 LMCache#1739: both lines from 'Available KV cache memory: 6.51 GiB'") {
    ModelSpec m = dense("Qwen/Qwen3-14B (hand-built)", 40, 8, 128, 40, 40960);
    CheckReport r = check(log_block("V1"), &m);
    CHECK(r.engine == LogEngine::Vllm);
    all_match(r, {"", ""});
    CHECK(r.lines[0].predicted == "GPU KV cache size: 42,656 tokens");
    CHECK(r.lines[0].number == 2);
}

TEST_CASE("V2 vllm#40691: the concurrency names mamba cache mode none") {
    ModelSpec m = fixture("Qwen/Qwen3.5-27B");
    CheckReport r = check(log_block("V2"), &m);
    REQUIRE(r.lines.size() == 2);
    CHECK(r.lines[0].match);
    CHECK(r.lines[0].cause.code == "check_memory_inferred");
    CHECK_FALSE(r.lines[1].match);
    CHECK(r.lines[1].predicted == "Maximum concurrency for 32,768 tokens per request: 30.92x");
    CHECK(r.lines[1].cause.code == "check_mamba_mode");
    CHECK(r.lines[1].cause.param("mode") == "none");
    CHECK(r.explained == 1);
}

TEST_CASE("V4 club-3090#612/#652: two runs of vLLM 0.24 with fp8 KV") {
    // "Available KV cache memory: 5.98 / 6.01 GiB" printed: the memory is the log's, not inferred.
    ModelSpec m = qwen35_like("Qwen3.6-35B-A3B (hand-built)", 40, 2, 32);
    for (int k : {0, 1}) {
        CAPTURE(k);
        CheckReport r = check(log_block("V4", k), &m);
        REQUIRE(r.lines.size() == 2);
        for (const auto& l : r.lines) {
            CAPTURE(l.printed);
            CAPTURE(l.predicted);
            CHECK(l.match == false);
            // The fragment does not say v0.24 nor fp8: both together explain it (as engine-logs.md derives).
            CHECK(l.cause.code == "check_log_format");
            CHECK(l.cause.param("format") == "split");
            REQUIRE(l.more_causes.size() == 1);
            CHECK(l.more_causes[0].code == "check_kv_dtype");
            CHECK(l.more_causes[0].param("dtype") == "fp8");
        }
    }
}

TEST_CASE("V6 vllm#10517: the V0 engine's block lines and its error") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B-Instruct");
    all_match(check(log_block("V6", 0), &m), {"check_memory_inferred", ""});
    CheckReport r = check(log_block("V6", 1), &m);
    all_match(r, {"check_memory_inferred", "", ""});
    CHECK(r.lines[2].kind == "vllm_v0_too_long");
}

TEST_CASE("V7 Qwen3-0.6B: the current ValueError, recomputed") {
    ModelSpec m = fixture("Qwen/Qwen3-0.6B");
    CheckReport r = check(log_block("V7"), &m);
    all_match(r, {""});
    CHECK(r.lines[0].kind == "vllm_not_enough_memory");
}

TEST_CASE("V8 Qwen2.5-32B-AWQ: 1.0 GiB needed, 0.58 available") {
    ModelSpec m = dense("Qwen/Qwen2.5-32B-Instruct-AWQ (hand-built)", 64, 8, 128, 40, 32768);
    CheckReport r = check(log_block("V8"), &m);
    all_match(r, {""});
    CHECK(r.lines[0].predicted.find("(1.0 GiB KV cache is needed") != std::string::npos);
}

TEST_CASE("V9 Qwen2.5-14B: the 'models's' wording, same numbers") {
    ModelSpec m = dense("Qwen/Qwen2.5-14B (hand-built)", 48, 8, 128, 40, 131072);
    CheckReport r = check(log_block("V9"), &m);
    REQUIRE(r.lines.size() == 1);
    CHECK(r.lines[0].match);
}

TEST_CASE("V11 vllm#17327: Qwen3-30B-A3B, container prefixes") {
    ModelSpec m = fixture("Qwen/Qwen3-30B-A3B");
    CheckReport r = check(log_block("V11"), &m);
    all_match(r, {"check_memory_inferred", ""});
    CHECK(r.lines[0].printed == "GPU KV cache size: 198,784 tokens");
}

// ---------------------------------------------------------------- llama.cpp logs of engine-logs.md

TEST_CASE("L1-L3 kvcalc: -np 1, -np 4, q8_0") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B");
    for (int k : {0, 1, 2}) {
        CAPTURE(k);
        all_match(check(log_block("L1-L3", k), &m), {""});
    }
}

TEST_CASE("L4 ik_llama.cpp#822: gpt-oss-20b, both caches of the iswa pair") {
    ModelSpec m = fixture("openai/gpt-oss-20b");
    CheckReport r = check(log_block("L4"), &m);
    all_match(r, {"", "", "", ""});
    CHECK(r.lines[2].kind == "llama_swa_cache");
}

TEST_CASE("L5-L8: unified slots, q8_0, Phi-3, the b5712 llama_kv_cache_unified line") {
    ModelSpec q25 = fixture("Qwen/Qwen2.5-7B-Instruct");
    all_match(check(log_block("L5"), &q25), {""});
    ModelSpec vl = fixture("Qwen/Qwen2.5-VL-7B-Instruct");
    all_match(check(log_block("L6"), &vl), {""});
    ModelSpec phi = fixture("microsoft/Phi-3.5-mini-instruct");
    all_match(check(log_block("L7"), &phi), {""});
    ModelSpec q3 = fixture("Qwen/Qwen3-8B");
    all_match(check(log_block("L8"), &q3), {""});
}

TEST_CASE("L9-L10: recurrent state lines, spacing collapsed by their authors") {
    ModelSpec m4 = qwen35_like("Qwen3.5-4B (hand-built)", 32, 4, 32);
    all_match(check(log_block("L9"), &m4), {"check_wording"});
    ModelSpec m27 = fixture("Qwen/Qwen3.5-27B");
    all_match(check(log_block("L10", 0), &m27), {"check_wording", "check_wording"});
    all_match(check(log_block("L10", 1), &m4), {"check_wording", "check_wording"});
}

TEST_CASE("L11 gemma-4-12B: -np 2 without a unified cache") {
    ModelSpec m;
    m.name = "gemma-4-12B (hand-built)";
    m.max_position_embeddings = 131072;
    for (int i = 0; i < 48; ++i) {
        if (i % 6 == 5) {
            m.layers.push_back(full(1, 512));
        } else {
            Layer l = full(8, 256);
            l.kind = LayerKind::Sliding;
            l.window = 1024;
            m.layers.push_back(l);
        }
    }
    CheckReport r = check(log_block("L11"), &m);
    REQUIRE(r.lines.size() == 4);
    for (const auto& l : r.lines) {
        CAPTURE(l.printed);
        CAPTURE(l.predicted);
        CHECK(l.match);
    }
}

TEST_CASE("V3 talos PR #1995: the quoted two lines, without the settings the PR states in prose") {
    // The quote carries neither TP 2 nor the fp8 cache nor the memory: the two-line N = int(X*M)
    // format and an fp8 cache explain both lines at TP 1 too (a memory the log does not contradict).
    ModelSpec m = fixture("Qwen/Qwen3.5-27B");
    CheckReport r = check(log_block("V3"), &m);
    REQUIRE(r.lines.size() == 2);
    CHECK(r.lines[0].predicted == "GPU KV cache size: 302,624 tokens");
    for (const auto& l : r.lines) {
        CHECK_FALSE(l.match);
        CHECK(l.cause.code == "check_log_format");
        REQUIRE(l.more_causes.size() == 1);
        CHECK(l.more_causes[0].code == "check_kv_dtype");
    }
    CHECK(r.explained == 2);
}

// ---------------------------------------------------------------- what is not a log

TEST_CASE("bad input: each refusal has its own code, and nothing in a paste runs") {
    auto code = [](const std::string& text) {
        auto r = read_engine_log(text);
        return r.ok() ? std::string("ok") : r.error().detail.code;
    };
    CHECK(code("") == "check_empty");
    CHECK(code(" \n\t\r\n") == "check_empty");
    CHECK(code("Collecting numpy\n  Downloading numpy-2.1.0.tar.gz (18.9 MB)\nSuccessfully installed numpy-2.1.0\n") ==
          "check_not_engine_log");
    CHECK(code(std::string("GGUF\0\0\0\3", 8) + "binary") == "check_binary");
    CHECK(code("<html><body><script>alert(1)</script><p>hello</p></body></html>") == "check_markup_only");
    // A 50 MB paste is refused by its size before any line is read.
    auto big = read_engine_log(std::string(50u << 20, 'a'));
    REQUIRE_FALSE(big.ok());
    CHECK(big.error().detail.code == "check_too_large");
    CHECK(big.error().message ==
          "the paste is 50.00 MiB, more than the 8.00 MiB kvbudget reads: a start-up log is a "
          "few hundred kilobytes, paste the part up to the KV cache lines");
    // A vLLM log cut off after its arguments: the engine is known, its KV lines are missing.
    auto cut = read_engine_log(
        "(APIServer pid=1) INFO 10-03 16:20:01 [api_server.py:1885] vLLM API server version 0.10.2\n"
        "(APIServer pid=1) INFO 10-03 16:20:01 [utils.py:328] non-default args: {'model': 'Qwen/Qwen3-8B', "
        "'max_model_len': 32768}\n"
        "(EngineCore_DP0 pid=2) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.5");
    REQUIRE_FALSE(cut.ok());
    CHECK(cut.error().detail.code == "check_truncated");
    CHECK(cut.error().detail.param("engine") == "vLLM");
    CHECK(cut.error().detail.param("lines") == "3");
    // Markup around a real log: read as text, the note says so.
    auto wrapped = read_engine_log("<details><summary>log</summary><pre>\n" + log_block("V1") + "</pre></details>\n");
    REQUIRE(wrapped.ok());
    CHECK(wrapped->markup);
    CHECK(wrapped->lines.size() == 2);
    ModelSpec m = dense("Qwen/Qwen3-14B (hand-built)", 40, 8, 128, 40, 40960);
    CheckReport r = check_log(*wrapped, &m, "", "");
    REQUIRE_FALSE(r.notes.empty());
    CHECK(r.notes[0].code == "check_markup_ignored");
    CHECK(r.matched == 2);
}

TEST_CASE("settings, version and model from a log's own lines") {
    const std::string text =
        "(APIServer pid=17943) INFO 09-09 05:20:01 [api_server.py:1805] vLLM API server version 0.20.1\n"
        "(APIServer pid=17943) INFO 09-09 05:20:01 [utils.py:328] non-default args: {'model_tag': "
        "'Qwen/Qwen3-0.6B', 'model': 'Qwen/Qwen3-0.6B', 'max_model_len': 4096, 'tensor_parallel_size': 2, "
        "'speculative_config': {'method': 'eagle3', 'model': 'x/y', 'num_speculative_tokens': 3}, "
        "'kv_cache_dtype': 'fp8'}\n"
        "\x1b[1;36m(EngineCore_DP0 pid=2)\x1b[0m INFO 09-09 05:21:00 [kv_cache_utils.py:1087] GPU KV cache size: "
        "1,024 tokens\n";
    auto f = read_engine_log(text);
    REQUIRE(f.ok());
    CHECK(f->version == "0.20.1");
    CHECK(f->model == "Qwen/Qwen3-0.6B");
    CHECK(f->setting("max_model_len") == "4096");
    CHECK(f->setting("tensor_parallel_size") == "2");
    CHECK(f->setting("kv_cache_dtype") == "fp8");
    CHECK(f->setting("speculative_config").find("eagle3") != std::string::npos);
    REQUIRE(f->lines.size() == 1);
    CHECK(f->lines[0].text == "GPU KV cache size: 1,024 tokens");
    CHECK(f->lines[0].number == 3);
}

// vLLM's tags: v0.20.0 prints num_blocks // groups x block, v0.20.1 int(X x M) (PR #41069 cherry-picked).
TEST_CASE("vLLM versions to log formats: 0.20.0 still prints the legacy count, 0.20.1 int(X x M)") {
    CHECK(vllm_format_for_version("0.19.0") == VllmLogFormat::Legacy);
    CHECK(vllm_format_for_version("0.20.0") == VllmLogFormat::Legacy);
    CHECK(vllm_format_for_version("0.20.1") == VllmLogFormat::Split);
    CHECK(vllm_format_for_version("v0.20.2") == VllmLogFormat::Split);
    CHECK(vllm_format_for_version("0.24.0rc1") == VllmLogFormat::Split);
    CHECK(vllm_format_for_version("0.27.1") == VllmLogFormat::Current);
    CHECK(vllm_format_for_version("0.8.5.post1") == VllmLogFormat::Legacy);
    CHECK_FALSE(vllm_format_for_version("b6699").has_value());
    CHECK_FALSE(vllm_format_for_version("").has_value());
}

TEST_CASE("the catalog entry a log's model names, and none when it is ambiguous") {
    const std::vector<std::string> ids = {"Qwen/Qwen3-8B", "Qwen/Qwen3-0.6B", "meta-llama/Llama-3.1-8B",
                                          "meta-llama/Llama-3.1-8B-Instruct", "openai/gpt-oss-20b"};
    CHECK(match_catalog("Qwen/Qwen3-8B", ids) == "Qwen/Qwen3-8B");
    CHECK(match_catalog("qwen/qwen3-8b", ids) == "Qwen/Qwen3-8B");
    CHECK(match_catalog("/models/Qwen3-0.6B/", ids) == "Qwen/Qwen3-0.6B");
    CHECK(match_catalog("/root/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B-Instruct/snapshots/0e9e39f",
                        ids) == "meta-llama/Llama-3.1-8B-Instruct");
    CHECK(match_catalog("/models/gpt-oss-20b-mxfp4.gguf", ids) == "openai/gpt-oss-20b");
    CHECK(match_catalog("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", ids) == "");  // not the same name
    CHECK(match_catalog("Qwen3-14B", ids) == "");
    CHECK(match_catalog("", ids) == "");
}

TEST_CASE("kvbudget check: text, --json, the catalog and exit status") {
    const std::string v7 = "/tmp/kvb-check-v7.log";
    {
        std::ofstream(v7) << "(APIServer pid=1) INFO [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-0.6B', "
                             "'gpu_memory_utilization': 0.2}\n"
                          << "(EngineCore_DP0 pid=2) ERROR [core.py:708] ValueError: " << log_block("V7");
    }
    auto r = kvb::test::run_cli("check " + v7 + " --json", false);
    CHECK(r.status == 0);
    CHECK(r.out.find("\"config\":\"Qwen/Qwen3-0.6B\",\"config_source\":\"catalog\"") != std::string::npos);
    CHECK(r.out.find("\"match\":true") != std::string::npos);
    CHECK(r.out.find("\"engine\":\"vllm\"") != std::string::npos);
    r = kvb::test::run_cli("check " + v7);
    CHECK(r.status == 0);
    CHECK(r.out.find("1 matched, 0 explained, 0 unexplained") != std::string::npos);
    r = kvb::test::run_cli("check /dev/null");
    CHECK(r.status == 1);
    CHECK(r.out ==
          "kvbudget: error: the log is empty: paste the start-up log of vLLM or llama.cpp (from the launch command to "
          "the first request)\n");
    r = kvb::test::run_cli("check - < " + kvb::test::config_path("Qwen--Qwen3-8B"));
    CHECK(r.status == 1);
    CHECK(r.out.find("is a vLLM or llama.cpp start-up line") != std::string::npos);
    r = kvb::test::run_cli("check");
    CHECK(r.status == 2);
}

// ---------------------------------------------------------------- more real logs (engine-logs.md C1-C10)

TEST_CASE("C1 vllm#19996: an EAGLE head's layer in the KV pool explains 410,128 tokens") {
    ModelSpec m = fixture("meta-llama/Llama-3.1-8B-Instruct");
    CheckReport r = check(log_block("C1"), &m);
    REQUIRE(r.lines.size() == 1);
    CHECK_FALSE(r.lines[0].match);
    CHECK(r.lines[0].predicted == "GPU KV cache size: 422,944 tokens");
    CHECK(r.lines[0].cause.code == "check_drafter_layers");
    CHECK(r.lines[0].cause.param("layers") == "1");
    REQUIRE(r.lines[0].deviation_percent.has_value());
    CHECK(*r.lines[0].deviation_percent == doctest::Approx(-3.0302).epsilon(1e-4));
    // With the speculative config in the log, the drafter is counted from the start.
    const std::string with_args =
        "INFO 06-23 14:20:01 [utils.py:328] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', "
        "'speculative_config': {'method': 'eagle', 'model': 'yuhuili/EAGLE-LLaMA3.1-Instruct-8B', "
        "'num_speculative_tokens': 3}}\n" +
        log_block("C1");
    r = check(with_args, &m);
    all_match(r, {""});
    REQUIRE_FALSE(r.notes.empty());
    CHECK(r.notes.back().code == "check_drafter_counted");
    // Without a method vLLM infers EAGLE from the head's name; check reads it by the same rule as
    // `kvbudget vllm --speculative-config`.
    r = check(
        "INFO 06-23 14:20:01 [utils.py:328] non-default args: {'speculative_config': {'model': "
        "'yuhuili/EAGLE-LLaMA3.1-Instruct-8B', 'num_speculative_tokens': 3}}\n" +
            log_block("C1"),
        &m);
    all_match(r, {""});
    CHECK(r.notes.back().param("method") == "eagle");
}

TEST_CASE("C2 vllm#34076: the PP error over all 48 layers") {
    ModelSpec m = dense("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8 (hand-built)", 48, 4, 128, 32, 262144);
    CheckReport r = check(log_block("C2"), &m);
    REQUIRE(r.lines.size() == 1);
    CHECK(r.lines[0].match);
    CHECK(r.lines[0].kind == "vllm_not_enough_memory");
    CHECK(r.lines[0].predicted.find("(24.0 GiB KV cache is needed") != std::string::npos);
    CHECK(r.lines[0].predicted.find("estimated maximum model length is 34736") != std::string::npos);
}

// With the launch command: PP 2 and VLLM_PP_LAYER_PARTITION=16,32 are read; a per-stage check would print
// the 16-layer first stage's 8.0 GiB and 104,208, so without a version the all-layer check of 0.14 / 0.15 is the named
// cause, and with the build's version (the issue's environment) the prediction is the printed line, word for word.
TEST_CASE("C2 vllm#34076 with its command: the uneven split, and 0.15's all-layer check") {
    ModelSpec m = dense("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8 (hand-built)", 48, 4, 128, 32, 262144);
    auto f = read_engine_log(log_block("C2", 1));
    REQUIRE(f.ok());
    CHECK(f->setting("pp_layer_partition") == "16,32");
    CHECK(f->setting("pipeline_parallel_size") == "2");
    CheckReport r = check_log(*f, &m, m.name, "argument");
    REQUIRE(r.lines.size() == 1);
    CHECK_FALSE(r.lines[0].match);
    CHECK(r.lines[0].predicted.find("(8.0 GiB KV cache is needed") != std::string::npos);
    CHECK(r.lines[0].cause.code == "check_pp_all_layers");
    CHECK(r.lines[0].cause.param("layers") == "48");
    CHECK(r.explained == 1);
    CHECK(r.unexplained == 0);

    LogFacts with_version = f.value();
    with_version.version = "0.15.2rc1.dev93+g11a4c9d30";
    r = check_log(with_version, &m, m.name, "argument");
    all_match(r, {""});
    CHECK(r.lines[0].predicted == r.lines[0].printed);

    // A log claiming a release with the fix: the per-stage check is predicted, and the all-layer check is
    // named as what makes the printed figures agree.
    with_version.version = "0.17.0";
    r = check_log(with_version, &m, m.name, "argument");
    REQUIRE(r.lines.size() == 1);
    CAPTURE(r.lines[0].predicted);
    CHECK(r.lines[0].predicted.find("(8.0 GiB KV cache is needed") != std::string::npos);
    // From the least memory that prints as 3.18 GiB (3.175 GiB: 6,502 blocks of the 16-layer stage).
    CHECK(r.lines[0].predicted.find("estimated maximum model length is 104032") != std::string::npos);
    CHECK_FALSE(r.lines[0].match);
    CHECK(r.lines[0].deviation_percent.has_value());
    CHECK(r.lines[0].cause.code == "check_pp_all_layers");
}

// The launch command in the issue is wrapped over lines with "\", so its flags are given here as check would read
// them from a one-line paste (TP 2, --enable_prefix_caching); the release is the one its PyTorch 2.9.0 points to.
TEST_CASE("C11 vllm#28228: Kimi Linear TP 2 on two RTX 3090, 2.30 GiB, 75,840 tokens, 2.48x") {
    ModelSpec m = fixture("moonshotai/Kimi-Linear-48B-A3B-Instruct");
    auto f = read_engine_log(log_block("C11"));
    REQUIRE(f.ok());
    LogFacts facts = f.value();
    facts.settings.emplace_back("tensor_parallel_size", "2");
    facts.settings.emplace_back("enable_prefix_caching", "True");
    facts.version = "0.11.1";
    CheckReport r = check_log(facts, &m, m.name, "argument");
    for (const CheckLine& l : r.lines) {
        CAPTURE(l.printed);
        CAPTURE(l.predicted);
        CAPTURE(l.cause.code);
        CHECK(l.match);
    }
    CHECK(r.unexplained == 0);
    CHECK(r.explained == 0);
    // The same paste read with today's release: prefix caching gives "align" (2 state blocks per KDA group) and
    // the 16-token alignment of 0.17 on gives blocks of 944 tokens; check names what makes the lines agree.
    facts.version = "";
    r = check_log(facts, &m, m.name, "argument");
    CHECK(r.unexplained == 0);
}

TEST_CASE("C3 vllm#5248: the pasted command's TP 2 gives 1,024 CPU blocks") {
    ModelSpec m = dense("deepseek-coder-6.7b-instruct (hand-built)", 32, 32, 128, 32, 16384, "float16");
    CheckReport r = check(log_block("C3"), &m);
    CHECK(r.settings.size() >= 2);
    all_match(r, {"check_memory_inferred"});
    CHECK(r.lines[0].predicted == "# GPU blocks: 507, # CPU blocks: 1024");
}

TEST_CASE("C4 vllm PR #10927: a pre-MLA V0 layout kvbudget does not model is said plainly") {
    ModelSpec m = kvb::test::mla("deepseek-ai/DeepSeek-V2-Lite-Chat (hand-built)", 27, 16);
    CheckReport r = check(log_block("C4"), &m);
    REQUIRE(r.lines.size() == 2);
    CHECK_FALSE(r.lines[0].match);
    CHECK(r.lines[0].cause.code == "check_no_known_cause");
    CHECK(r.lines[1].match);  // 5373 x 16 / 8192 = 10.49x
    CHECK(r.unexplained == 1);
}

TEST_CASE("C5-C8: logs that name no model are read and say that a config is needed") {
    struct Case {
        const char* id;
        size_t lines;
        LogEngine engine;
    };
    for (const Case& c : {Case{"C5", 1, LogEngine::Vllm}, Case{"C6", 1, LogEngine::Vllm},
                          Case{"C7", 2, LogEngine::Vllm}, Case{"C8", 2, LogEngine::Llamacpp}}) {
        CAPTURE(c.id);
        CheckReport r = check(log_block(c.id), nullptr);
        CHECK(r.engine == c.engine);
        REQUIRE(r.lines.size() == c.lines);
        for (const auto& l : r.lines)
            CHECK(render_english(l.cause) ==
                  "the log does not name its model: give --config CONFIG (config.json or .gguf) to compare this line");
        CHECK(r.unexplained == static_cast<int64_t>(c.lines));
    }
    // C6 is the one-line format: both numbers come from one line.
    auto f = read_engine_log(log_block("C6"));
    REQUIRE(f.ok());
    CHECK(f->lines[0].num("tokens") == 2558976);
    CHECK(f->lines[0].num("mml") == 1048576);
    CHECK(f->lines[0].num("concurrency") == doctest::Approx(2.44));
}

TEST_CASE("C9-C10: real pastes cut short are refused with their own codes") {
    auto c9 = read_engine_log(log_block("C9"));
    REQUIRE_FALSE(c9.ok());
    CHECK(c9.error().detail.code == "check_truncated");
    CHECK(c9.error().detail.param("engine") == "llama.cpp");
    CHECK(c9.error().detail.param("lines") == "17");
    auto c10 = read_engine_log(log_block("C10"));
    REQUIRE_FALSE(c10.ok());
    CHECK(c10.error().detail.code == "check_not_engine_log");
    auto c10h = read_engine_log(
        "INFO 11-21 07:00:00 llm_engine.py:174] Initializing an LLM engine (v0.5.4) with config: " + log_block("C10"));
    REQUIRE_FALSE(c10h.ok());
    CHECK(c10h.error().detail.code == "check_truncated");
}

// ---------------------------------------------------------------- engine cases real logs expose

// falcon-40b's published config.json (tiiuae/falcon-40b, model_type RefinedWeb): n_head_kv 8, no
// new_decoder_architecture. Written here from the published values (the file is not in
// /work/shared/hf-configs). vLLM's RWConfig sets new_decoder_architecture for hidden_size 8192.
TEST_CASE("falcon-40b RefinedWeb config: 8 KV heads, as vLLM and llama.cpp cache them") {
    const std::string cfg = R"({"alibi": false, "apply_residual_connection_post_layernorm": false,
        "architectures": ["RWForCausalLM"], "bias": false, "bos_token_id": 11, "eos_token_id": 11,
        "hidden_dropout": 0.0, "hidden_size": 8192, "initializer_range": 0.02, "layer_norm_epsilon": 1e-05,
        "model_type": "RefinedWeb", "n_head": 128, "n_head_kv": 8, "n_layer": 60, "parallel_attn": true,
        "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 65024})";
    auto m = parse_config(cfg, "tiiuae/falcon-40b");
    REQUIRE(m.ok());
    REQUIRE(m->layers.size() == 60);
    CHECK(m->layers[0].kv_heads == 8);
    CHECK(m->layers[0].k_head_dim == 64);
    bool noted = false;
    for (const auto& n : m->notes) noted = noted || n.code == "falcon_rw_new_arch";
    CHECK(noted);
    // 60 layers x 8 heads x 64 x 2 (K, V) x 2 B = 122,880 B per token.
    auto lay = vllm_layout(*m, VllmOptions{});
    REQUIRE(lay.ok());
    CHECK(lay->page_size_bytes == 16 * 8 * 64 * 2 * 2);
    // falcon-7b (RefinedWebModel, hidden 4544, multi_query) stays multi-query.
    CHECK(fixture("tiiuae/falcon-7b").layers[0].kv_heads == 1);
}

TEST_CASE("--engine-version: vLLM releases and llama.cpp builds to their log formats") {
    CHECK(vllm_log_format_for_version("0.20.0").value() == VllmLogFormat::Legacy);
    CHECK(vllm_log_format_for_version("0.20.1").value() == VllmLogFormat::Split);
    CHECK(vllm_log_format_for_version("0.20.2").value() == VllmLogFormat::Split);
    CHECK(vllm_log_format_for_version("0.26.1rc1.dev457+gc810e5ee9").value() == VllmLogFormat::Current);
    auto bad = vllm_log_format_for_version("latest");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message ==
          "latest is not a vLLM version: give a release such as 0.20.1 (vLLM) or a build such as b6699 (llama.cpp)");
    CHECK(llama_log_format_for_version("b5712").value() == LlamaLogFormat::Unified);
    CHECK(llama_log_format_for_version("6100").value() == LlamaLogFormat::UnifiedStreams);
    CHECK(llama_log_format_for_version("b6600").value() == LlamaLogFormat::Y2025);
    CHECK(llama_log_format_for_version("b6699").value() == LlamaLogFormat::Y2025);
    CHECK_FALSE(llama_log_format_for_version("b66x").ok());

    // V10's Qwen3-8B numbers (22,900 blocks): 0.20.0 prints the legacy two lines, 0.27.1 still two, 0.28 one line.
    const std::string cfg = kvb::test::config_path("Qwen--Qwen3-8B");
    const std::string mem = std::to_string(int64_t(22900) * 16 * 147456);
    auto r = kvb::test::run_cli("vllm " + cfg + " --kv-cache-memory " + mem + " --engine-version 0.20.0");
    CHECK(r.status == 0);
    CHECK(r.out.find("GPU KV cache size: 366,400 tokens\nMaximum concurrency for 40,960 tokens per request: 8.95x\n") !=
          std::string::npos);
    r = kvb::test::run_cli("vllm " + cfg + " --kv-cache-memory " + mem + " --engine-version 0.27.1");
    CHECK(r.out.find("GPU KV cache size: 366,400 tokens\nMaximum concurrency for 40,960 tokens per request: 8.95x\n") !=
          std::string::npos);
    r = kvb::test::run_cli("vllm " + cfg + " --kv-cache-memory " + mem + " --engine-version 0.28.0");
    CHECK(r.out.find("GPU KV cache size: 366,400 tokens, Maximum concurrency for 40,960 tokens per request: 8.95x") !=
          std::string::npos);
    r = kvb::test::run_cli("vllm " + cfg + " --kv-cache-memory " + mem + " --engine-version nightly");
    CHECK(r.status == 2);

    // llama.cpp b6072..b6232: the old prefix with streams.
    r = kvb::test::run_cli("llamacpp " + cfg + " -c 8192 --engine-version b6200");
    CHECK(r.out.find("llama_kv_cache_unified: size = 1152.00 MiB (  8192 cells,  36 layers,  1/1 seqs), K (f16):  "
                     "576.00 MiB, V (f16):  576.00 MiB") != std::string::npos);
}

// The July 2025 LM Studio line quoted under L8 of engine-logs.md ("%2u/%2u seqs", Qwen3-8B geometry): the
// format of b5913..b6071 (#14363 to #15040), read off its " 1/ 1"; b6072's "1/1" is another build's spacing.
TEST_CASE("a llama_kv_cache_unified line with streams reads as the b5913..b6071 format") {
    ModelSpec m = fixture("Qwen/Qwen3-8B");
    CheckReport r = check(
        "llama_kv_cache_unified: size = 18432.00 MiB (131072 cells,  36 layers,  1/ 1 seqs), K (f16): "
        "9216.00 MiB, V (f16): 9216.00 MiB\n",
        &m);
    all_match(r, {""});
    CHECK(r.lines[0].predicted ==
          "llama_kv_cache_unified: size = 18432.00 MiB (131072 cells,  36 layers,  1/ 1 seqs), K (f16): 9216.00 MiB, V "
          "(f16): 9216.00 MiB");
    r = check(
        "llama_kv_cache_unified: size = 18432.00 MiB (131072 cells,  36 layers,  1/1 seqs), K (f16): "
        "9216.00 MiB, V (f16): 9216.00 MiB\n",
        &m);
    all_match(r, {""});
    CHECK(r.lines[0].predicted.find(" 1/1 seqs)") != std::string::npos);
}

TEST_CASE("hostile numbers in a paste are refused by the engines, never overflow") {
    ModelSpec m = fixture("Qwen/Qwen3-8B");
    for (const char* text :
         {"Available KV cache memory: 99999999999999999999 GiB\nGPU KV cache size: 999,999,999,999,999,999,999 "
          "tokens\n",
          "# GPU blocks: 99999999999999999999, # CPU blocks: 1\nMaximum concurrency for 99999999999999999 tokens per "
          "request: 1.00x\n",
          "llama_kv_cache: size = 1.00 MiB (99999999999999 cells, 36 layers, 99999999/1 seqs), K (f16): 1.00 MiB, V "
          "(f16): 1.00 MiB\n"}) {
        CAPTURE(text);
        CheckReport r = check(text, &m);
        CHECK_FALSE(r.lines.empty());
        for (const auto& l : r.lines) CHECK_FALSE(l.match);
    }
}

// ---------------------------------------------------------------- out-of-memory messages (O1-O7)

namespace {

// The one out-of-memory line of a block, explained without a config.
CheckLine oom_line(const std::string& id, const char* kind) {
    CheckReport r = check(log_block(id), nullptr);
    CheckLine found;
    int n = 0;
    for (const auto& l : r.lines)
        if (l.kind == kind) {
            found = l;
            ++n;
        }
    CHECK(n == 1);
    CHECK_FALSE(found.match);
    CHECK(found.predicted.empty());
    CHECK(r.unexplained == 0);
    CHECK(r.explained == 1);
    return found;
}

}  // namespace

TEST_CASE("O1 vllm#783: PyTorch's older wording; 16.08 GiB outside PyTorch covers the 1.08 GiB missing") {
    CheckLine l = oom_line("O1", "torch_out_of_memory");
    CHECK(l.number == 1);
    CHECK(l.printed.rfind("CUDA out of memory. Tried to allocate 1.63 GiB (GPU 0;", 0) == 0);
    CHECK(l.cause.code == "check_torch_oom");
    CHECK(l.cause.param("tried") == "1.63 GiB");
    CHECK(l.cause.param("total") == "44.56 GiB");
    CHECK(l.cause.param("free") == "565.31 MiB");
    CHECK(l.cause.param("pytorch") == "27.91 GiB");
    CHECK(l.cause.param("cached") == "20.48 MiB");
    CHECK(l.cause.param("outside") == "16.08 GiB");
    REQUIRE(l.more_causes.size() == 1);
    CHECK(l.more_causes[0].code == "check_oom_outside");
    CHECK(l.more_causes[0].param("short") == "1.08 GiB");
}

TEST_CASE("O2 vllm#2140: 'capacty' (PyTorch 2.1); the 0.41 GiB missing is outside PyTorch") {
    CheckLine l = oom_line("O2", "torch_out_of_memory");
    CHECK(l.cause.param("total") == "23.69 GiB");
    CHECK(l.cause.param("free") == "3.09 GiB");
    CHECK(l.cause.param("pytorch") == "20.13 GiB");
    CHECK(l.cause.param("cached") == "755.50 KiB");
    CHECK(l.cause.param("outside") == "480.54 MiB");  // 0.47 GiB
    REQUIRE(l.more_causes.size() == 1);
    CHECK(l.more_causes[0].code == "check_oom_outside");
    CHECK(l.more_causes[0].param("short") == "419.84 MiB");  // 0.41 GiB
}

TEST_CASE("O3 vllm#12529: 1.17 GiB free for 1.16 GiB asked is said plainly") {
    CheckReport r = check(log_block("O3"), nullptr);
    CHECK(r.engine == LogEngine::Vllm);
    CheckLine l = oom_line("O3", "torch_out_of_memory");
    CHECK(l.cause.param("gpu") == "0");
    CHECK(l.cause.param("outside") == "1.75 GiB");
    REQUIRE(l.more_causes.size() == 1);
    CHECK(l.more_causes[0].code == "check_oom_free_enough");
    CHECK(l.more_causes[0].param("free") == "1.17 GiB");
}

TEST_CASE("O4 dots.ocr#196: 74.16 GiB asked of a 44.40 GiB GPU") {
    CheckLine l = oom_line("O4", "torch_out_of_memory");
    REQUIRE(l.more_causes.size() == 1);
    CHECK(l.more_causes[0].code == "check_oom_larger_than_gpu");
    CHECK(l.more_causes[0].param("tried") == "74.16 GiB");
    CHECK(l.more_causes[0].param("total") == "44.40 GiB");
}

TEST_CASE("O5-O7: llama.cpp's cudaMalloc failures name the buffer that did not fit") {
    CheckReport r5 = check(log_block("O5"), nullptr);
    CHECK(r5.engine == LogEngine::Llamacpp);
    CheckLine w = oom_line("O5", "llama_cuda_out_of_memory");
    CHECK(w.number == 2);
    CHECK(w.printed ==
          "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of "
          "memory");
    CHECK(w.cause.code == "check_llama_oom_weights");
    CHECK(w.cause.param("size") == "141.42 GiB");  // 151,851,674,624 B
    CHECK(w.cause.param("device") == "CUDA0");
    CheckLine c = oom_line("O6", "llama_cuda_out_of_memory");
    CHECK(c.cause.code == "check_llama_oom_compute");
    CHECK(c.cause.param("size") == "144.00 MiB");  // 150,995,968 B
    CHECK(c.cause.param("device") == "CUDA4");
    CheckLine c7 = oom_line("O7", "llama_cuda_out_of_memory");
    CHECK(c7.cause.code == "check_llama_oom_compute");
    CHECK(c7.cause.param("size") == "50.54 GiB");  // 54,262,464,512 B
    CHECK(c7.cause.param("device") == "CUDA1");
}

TEST_CASE("O8 llama-cpp-python#1944: the line after the failure names the KV cache") {
    CheckLine kv = oom_line("O8", "llama_cuda_out_of_memory");
    CHECK(kv.cause.code == "check_llama_oom_kv");
    CHECK(kv.cause.param("size") == "200.00 GiB");
    // The paste does not hold the device's free memory: what to give kvbudget budget instead.
    REQUIRE(kv.more_causes.size() == 1);
    CHECK(kv.more_causes[0].code == "check_llama_oom_no_free");
    CHECK(kv.more_causes[0].param("device") == "CUDA0");
}

TEST_CASE("the free memory llama.cpp printed at load gives the shortfall; alloc_tensor_range of a KV cache") {
    // llama.cpp's own lines (llama_model_load_from_file_impl's device line, the KV allocation through
    // alloc_tensor_range as in O5, then the KV error of O8), numbers of a 24 GB card asked for 32 GiB.
    CheckReport r = check(
        "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3090) - 23287 MiB free\n"
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 32768.00 MiB on device 0: cudaMalloc failed: out of "
        "memory\n"
        "alloc_tensor_range: failed to allocate CUDA0 buffer of size 34359738368\n"
        "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n",
        nullptr);
    REQUIRE(r.lines.size() == 1);
    CHECK(r.lines[0].cause.code == "check_llama_oom_kv");
    CHECK(r.lines[0].cause.param("size") == "32.00 GiB");
    REQUIRE(r.lines[0].more_causes.size() == 2);
    CHECK(r.lines[0].more_causes[0].code == "check_oom_device_free");
    CHECK(r.lines[0].more_causes[0].param("free") == "22.74 GiB");
    CHECK(r.lines[0].more_causes[0].param("short") == "9.26 GiB");
    // No layer count and no context in the paste: which -ngl or -c fits is budget's to say.
    CHECK(r.lines[0].more_causes[1].code == "check_llama_oom_few_numbers");
    CHECK(r.lines[0].more_causes[1].param("free") == "22.74 GiB");
}

TEST_CASE("O9 ik_llama.cpp#749: a 272.81 GiB compute buffer, no free memory printed") {
    CheckLine c = oom_line("O9", "llama_cuda_out_of_memory");
    CHECK(c.cause.code == "check_llama_oom_compute");
    CHECK(c.cause.param("size") == "272.81 GiB");  // 292,926,534,144 B
    REQUIRE(c.more_causes.size() == 1);
    CHECK(c.more_causes[0].code == "check_llama_oom_no_free");
    CHECK(render_english(c.more_causes[0]) ==
          "the log does not print CUDA0's free memory: give it to kvbudget budget CONFIG --engine llamacpp "
          "--gpu-memory FREE --max-model-len N to get the -ngl and -c that fit");
}

// Which -ngl or -c would fit, from the numbers llama.cpp printed before the failure. Constructed
// from llama.cpp's own line formats (llama_model_load_from_file_impl's device line, load_tensors,
// llama_context, the KV allocation of the O8 / "free memory" cases) with Qwen3-8B's KV at 65,536
// cells (36 layers x 147,456 B per token = 9216 MiB) and a 4455.35 MiB weights buffer.
TEST_CASE("llama.cpp out of memory: the -ngl and -c that fit the free memory the log printed") {
    const std::string head =
        "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4070) - 11805 MiB free\n"
        "load_tensors: offloaded 37/37 layers to GPU\n"
        "load_tensors:        CUDA0 model buffer size =  4455.35 MiB\n"
        "llama_context: n_ctx         = 65536\n";
    CheckReport r = check(head +
                              "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9216.00 MiB on device 0: "
                              "cudaMalloc failed: out of memory\n"
                              "alloc_tensor_range: failed to allocate CUDA0 buffer of size 9663676416\n"
                              "llama_init_from_model: failed to initialize the context: failed to allocate buffer for "
                              "kv cache\n",
                          nullptr);
    REQUIRE(r.lines.size() == 1);
    CHECK(r.lines[0].cause.code == "check_llama_oom_kv");
    REQUIRE(r.lines[0].more_causes.size() == 1);  // 9216 MiB asked of 11805 free: no shortfall line
    const Message& fit = r.lines[0].more_causes[0];
    CHECK(fit.code == "check_llama_oom_fit_both");
    // A layer's share: (4455.35 + 9216) MiB / 37 slots = 369.50 MiB; 11805 / 369.50 -> 31 slots.
    CHECK(fit.param("ngl") == "31");
    CHECK(fit.param("slots") == "37");
    CHECK(fit.param("per_layer") == "369.50 MiB");
    // Every layer: (11805 - 4455.35) MiB / 144 KiB per token = 52,263 -> 52,224 (256-aligned).
    CHECK(fit.param("ctx") == "52,224");
    CHECK(fit.param("per_token") == "144.00 KiB");
    // The same weights failing at load: only -ngl can be said, and the KV and compute buffer are still to come.
    CheckReport w = check(
        "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3050) - 3811 MiB free\n"
        "print_info: arch             = qwen3\n"
        "print_info: n_layer          = 36\n"
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4455.35 MiB on device 0: cudaMalloc failed: out of "
        "memory\n"
        "alloc_tensor_range: failed to allocate CUDA0 buffer of size 4671713280\n"
        "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n",
        nullptr);
    REQUIRE(w.lines.size() == 1);
    CHECK(w.lines[0].cause.code == "check_llama_oom_weights");
    REQUIRE(w.lines[0].more_causes.size() == 2);
    CHECK(w.lines[0].more_causes[1].code == "check_llama_oom_fit_ngl_weights");
    CHECK(w.lines[0].more_causes[1].param("ngl") == "31");  // 3811 / (4455.35 / 37) = 31.65
    CHECK(w.lines[0].more_causes[1].param("slots") == "37");
}

TEST_CASE("S1 llama.cpp PR #23269: an MTP target keeps 2 rollback snapshots of its recurrent state") {
    ModelSpec m = qwen35_like("Qwen3.6-35B-A3B (hand-built)", 40, 2, 32);
    Layer mtp;
    mtp.kind = LayerKind::None;  // the MTP layer the GGUF counts in block_count: "41 layers"
    m.layers.push_back(mtp);
    CheckReport r = check(log_block("S1"), &m);
    all_match(r, {"", ""});
    CHECK(r.lines[1].kind == "llama_recurrent");
    CHECK(r.lines[1].predicted ==
          "llama_memory_recurrent: size =  188.44 MiB (     1 cells,  41 layers,  1 seqs  2 rs_seq), R (f32):    8.44 "
          "MiB, S (f32):  180.00 MiB");
}

TEST_CASE("S2 llama.cpp PR #22673: the MTP draft context caches one layer") {
    ModelSpec m = qwen35_like("Qwen3.5-4B (hand-built)", 32, 4, 32);
    CheckReport r = check(log_block("S2"), &m);
    all_match(r, {""});
    bool noted = false;
    for (const Message& n : r.notes)
        if (n.code == "check_draft_mtp") {
            noted = true;
            CHECK(n.param("layers") == "1");
        }
    CHECK(noted);
}

TEST_CASE("S3 llama.cpp PR #24125: a separate draft model's context is named, not compared with the target") {
    CheckReport r = check(log_block("S3"), nullptr);
    REQUIRE(r.lines.size() == 2);
    for (const CheckLine& l : r.lines) {
        CHECK_FALSE(l.match);
        CHECK(l.cause.code == "check_draft_context");
        CHECK(l.cause.param("model") == "/xxx/Step3.7-flash-mtp-Q8_0.gguf");
    }
    CHECK(r.explained == 2);
    CHECK(r.unexplained == 0);
}

TEST_CASE("an out-of-memory line among a log's KV lines keeps its place; fragmentation is named") {
    ModelSpec m = fixture("Qwen/Qwen3-0.6B");
    const std::string text =
        log_block("V7") +
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.58 "
        "GiB of which 1.50 GiB is free. Including non-PyTorch memory, this process has 22.07 GiB memory in use. Of "
        "the allocated memory 19.00 GiB is allocated by PyTorch, and 2.50 GiB is reserved by PyTorch but "
        "unallocated.\n";
    CheckReport r = check(text, &m);
    REQUIRE(r.lines.size() == 2);
    CHECK(r.lines[0].kind == "vllm_not_enough_memory");
    CHECK(r.lines[0].match);
    CHECK(r.lines[1].kind == "torch_out_of_memory");
    CHECK(r.lines[1].number == 2);
    REQUIRE(r.lines[1].more_causes.size() == 1);
    CHECK(r.lines[1].more_causes[0].code == "check_oom_fragmentation");
    CHECK(r.lines[1].more_causes[0].param("cached") == "2.50 GiB");
    CHECK(r.lines[1].more_causes[0].param("short") == "512.00 MiB");
}

TEST_CASE("PyTorch OOM in a vLLM log that gives gpu_memory_utilization: the shortfall as a lower fraction") {
    // O3's wording (vLLM V1) with numbers where neither PyTorch's cache nor what is outside it
    // covers the shortfall, after vLLM's non-default args: 2.50 GiB short of a 23.57 GiB GPU,
    // vLLM given 0.95 x 23.57 = 22.39 GiB; (22.39 - 2.50) / 23.57 = 0.8439 -> 0.84.
    const std::string oom =
        "ERROR 03-13 09:00:43 [core.py:330] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. "
        "GPU 0 has a total capacity of 23.57 GiB of which 1.50 GiB is free. Including non-PyTorch memory, this "
        "process has 22.05 GiB memory in use. Of the allocated memory 21.00 GiB is allocated by PyTorch, and 100.00 "
        "MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n";
    CheckReport r = check(
        "INFO 03-13 08:59:58 [api_server.py:1043] non-default args: {'model': 'Qwen/Qwen3-8B', "
        "'gpu_memory_utilization': 0.95}\n" +
            oom,
        nullptr);
    REQUIRE(r.lines.size() == 1);
    REQUIRE(r.lines[0].more_causes.size() == 1);
    CHECK(render_english(r.lines[0].more_causes[0]) ==
          "2.50 GiB more than the GPU had free was needed: vLLM was given 22.39 GiB of the GPU "
          "(gpu_memory_utilization = 0.95); --gpu-memory-utilization 0.84 leaves 2.50 GiB more for the rest, or a "
          "lower --max-model-len needs less");
    // Without the setting, the general advice.
    CheckReport plain = check(oom, nullptr);
    CHECK(plain.lines[0].more_causes[0].code == "check_oom_short");
}

// ---------------------------------------------------------------- the not-enough-memory error by release (W1-W6)
// Every era's wording as a user pasted it: read as vLLM's error, and each line matched or its cause named
// (none of these logs names a model kvbudget has, so the cause is the missing config).
TEST_CASE("W1-W6: vLLM's not-enough-memory error in each release's wording, read and explained") {
    for (const char* id : {"W1", "W2", "W3", "W4", "W5", "W6"}) {
        CAPTURE(id);
        const std::string text = log_block(id);
        auto f = read_engine_log(text);
        REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
        CheckReport r = check(text, nullptr);
        CHECK(r.engine == LogEngine::Vllm);
        REQUIRE_FALSE(r.lines.empty());
        bool error_line = false;
        for (const auto& l : r.lines) {
            CAPTURE(l.printed);
            CHECK((l.match || !l.cause.code.empty()));
            if (l.kind == "vllm_not_enough_memory") error_line = true;
        }
        CHECK(error_line);
    }
}
