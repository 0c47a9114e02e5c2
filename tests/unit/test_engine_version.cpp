// Engine versions (issue 12): one parser (engines/engine_version.h) for `kvbudget vllm|llamacpp|budget|check
// --engine-version` and the page, and every version-dependent format derived from it: vLLM's token count
// and error wordings, its MLA block sizes and its pipeline-parallel memory check; llama.cpp's KV line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>

#include "budget/budget.h"
#include "check/check.h"
#include "engines/engine_version.h"
#include "engines/llamacpp.h"
#include "engines/vllm.h"
#include "fixtures.h"
#include "report/answer.h"

using namespace kvb;
using kvb::test::dense;
using kvb::test::fixture;

namespace {

const int64_t GiB = int64_t(1) << 30;

VllmCapacity cap_for(const ModelSpec& m, const std::string& version, int64_t avail, int64_t pp = 1,
                     const std::string& partition = "") {
    auto rel = vllm_release(version);
    REQUIRE(rel.ok());
    VllmOptions o;
    o.log_format = rel->log_format;
    o.error_wording = rel->error_wording;
    o.mla_forced_block_sizes = rel->mla_forced_block_sizes;
    o.pp_check_all_layers = rel->pp_check_all_layers;
    o.pipeline_parallel_size = pp;
    o.pp_layer_partition = partition;
    auto c = vllm_capacity(m, o, avail);
    REQUIRE_MESSAGE(c.ok(), (c.ok() ? "" : c.error().message));
    return c.value();
}

}  // namespace

TEST_CASE("parse_engine_version: vLLM releases and llama.cpp builds, each for its engine") {
    auto v = parse_engine_version("0.9.1.dev705+g01220ce89", "vllm");
    REQUIRE(v.ok());
    CHECK(v->major == 0);
    CHECK(v->minor == 9);
    CHECK(v->patch == 1);
    CHECK(v->rc == -1);
    CHECK(v->dev == 705);
    v = parse_engine_version("v0.24.0rc1", "vllm");
    REQUIRE(v.ok());
    CHECK(v->minor == 24);
    CHECK(v->rc == 1);
    CHECK(v->dev == -1);
    v = parse_engine_version("0.15.2rc1.dev93+g11a4c9d30", "vllm");
    REQUIRE(v.ok());
    CHECK(v->patch == 2);
    CHECK(v->rc == 1);
    CHECK(v->dev == 93);
    v = parse_engine_version(" vllm=0.20.1 ", "vllm");
    REQUIRE(v.ok());
    CHECK(v->text == "0.20.1");
    CHECK(v->patch == 1);
    v = parse_engine_version("0.15", "vllm");
    REQUIRE(v.ok());
    CHECK(v->minor == 15);
    CHECK(v->patch == 0);
    auto b = parse_engine_version("llama.cpp=b6500", "llamacpp");
    REQUIRE(b.ok());
    CHECK(b->build == 6500);
    b = parse_engine_version("6699 (c08002a1)", "llama.cpp");
    REQUIRE(b.ok());
    CHECK(b->build == 6699);

    // The other engine's form, or its prefix, is refused with the value and the engine named.
    auto bad = parse_engine_version("b6500", "vllm");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message ==
          "b6500 is not a vLLM version: give a release such as 0.20.1 (vLLM) or a build such as b6699 (llama.cpp)");
    CHECK_FALSE(parse_engine_version("llamacpp=b6500", "vllm").ok());
    CHECK_FALSE(parse_engine_version("vllm=0.20.1", "llamacpp").ok());
    CHECK_FALSE(parse_engine_version("0.20.1", "llamacpp").ok());
    CHECK_FALSE(parse_engine_version("66x", "llamacpp").ok());
    CHECK_FALSE(parse_engine_version("", "vllm").ok());
    CHECK_FALSE(parse_engine_version("20", "vllm").ok());
    CHECK_FALSE(parse_engine_version("0.1234567890", "vllm").ok());
}

TEST_CASE("vllm_release: every boundary, and the newest when no version is given") {
    auto r = vllm_release("");
    REQUIRE(r.ok());
    CHECK(r->log_format == VllmLogFormat::Current);
    CHECK(r->one_line_capacity);
    CHECK(r->error_wording == VllmErrorWording::Current);
    CHECK_FALSE(r->mla_forced_block_sizes);
    CHECK_FALSE(r->pp_check_all_layers);
    using F = VllmLogFormat;
    using W = VllmErrorWording;
    struct Row {
        const char* version;
        F format;
        bool one_line;
        W wording;
        bool mla_forced, pp_all;
    };
    // Each boundary at the last release without the change and the first with it (vLLM's tags), and main
    // builds on either side of the commit that made it ("0.13.0rc2.dev25" = 25 commits past v0.13.0rc1).
    const Row rows[] = {
        {"0.8.3", F::Legacy, false, W::NoEstimate2f, true, false},
        {"0.8.3rc2.dev78", F::Legacy, false, W::NoEstimate2f, true, false},
        {"0.8.3rc2.dev79+g4716377fb", F::Legacy, false, W::NoDocs2f, true, false},
        {"0.8.4", F::Legacy, false, W::NoDocs2f, true, false},
        {"0.10.1", F::Legacy, false, W::NoDocs2f, true, false},
        {"0.11.2", F::Legacy, false, W::NoDocs2f, true, false},
        {"0.12.0", F::Legacy, false, W::NoDocs2f, true, false},
        {"0.13.0rc2.dev24+g166ac3c94", F::Legacy, false, W::NoDocs2f, true, false},
        {"0.13.0rc2.dev25+g8580919ac", F::Legacy, false, W::SeeDocs2f, true, false},
        {"0.13.0", F::Legacy, false, W::SeeDocs2f, true, false},
        {"0.14.0rc1.dev103", F::Legacy, false, W::SeeDocs2f, true, false},
        {"0.14.0rc1.dev104", F::Legacy, false, W::SeeDocs2f, true, true},
        {"0.14.0rc1.dev346+gc907d2215", F::Legacy, false, W::SeeDocsGib, true, true},
        {"0.14.0", F::Legacy, false, W::SeeDocsGib, true, true},
        {"0.15.2rc1.dev93+g11a4c9d30", F::Legacy, false, W::SeeDocsGib, true, true},
        {"0.16.0", F::Legacy, false, W::SeeDocsGib, true, true},
        {"0.16.0rc2.dev52+gc5a66d169", F::Legacy, false, W::SeeDocsGib, true, false},
        {"0.17.0", F::Legacy, false, W::SeeDocsGib, true, false},
        {"0.17.1", F::Legacy, false, W::SeeDocsGib, true, false},
        {"0.18.0", F::Legacy, false, W::SeeDocsGib, false, false},
        {"0.20.0", F::Legacy, false, W::SeeDocsGib, false, false},
        {"0.20.1rc1.dev30", F::Legacy, false, W::SeeDocsGib, false, false},
        {"0.20.1rc1.dev31+ge68fa1b90", F::Split, false, W::SeeDocsGib, false, false},
        {"0.20.1", F::Split, false, W::SeeDocsGib, false, false},
        {"0.20.2rc1.dev372", F::Split, false, W::SeeDocsGib, false, false},
        {"0.20.2rc1.dev373+g27b85d208", F::Split, false, W::Current, false, false},
        {"0.21.0", F::Split, false, W::SeeDocsGib, false, false},
        {"0.21.1rc1.dev5", F::Split, false, W::Current, false, false},
        {"0.22.0", F::Split, false, W::Current, false, false},
        {"0.25.1", F::Split, false, W::Current, false, false},
        {"0.26.0", F::Current, false, W::Current, false, false},
        {"0.27.1", F::Current, false, W::Current, false, false},
        {"0.26.1rc1.dev315", F::Current, false, W::Current, false, false},
        {"0.26.1rc1.dev457+gc810e5ee9", F::Current, true, W::Current, false, false},
        {"0.28.0", F::Current, true, W::Current, false, false},
        {"1.0.0", F::Current, true, W::Current, false, false},
    };
    for (const Row& row : rows) {
        CAPTURE(row.version);
        auto x = vllm_release(row.version);
        REQUIRE(x.ok());
        CHECK(x->log_format == row.format);
        CHECK(x->one_line_capacity == row.one_line);
        CHECK(x->error_wording == row.wording);
        CHECK(x->mla_forced_block_sizes == row.mla_forced);
        CHECK(x->pp_check_all_layers == row.pp_all);
    }
    CHECK_FALSE(vllm_release("b6500").ok());
    // The llama.cpp side reads the same parser.
    CHECK(llama_log_format_for_version("b6099").value() == LlamaLogFormat::Unified);
    CHECK(llama_log_format_for_version("llamacpp=b6100").value() == LlamaLogFormat::UnifiedStreams);
    CHECK(llama_log_format_for_version("6600").value() == LlamaLogFormat::UnifiedStreams);
    CHECK(llama_log_format_for_version("b6601").value() == LlamaLogFormat::Y2025);
    CHECK_FALSE(llama_log_format_for_version("0.20.1").ok());
}

// V9's numbers (Qwen2.5-14B, 24 GiB needed for 131,072 tokens, 3,724 blocks = 10.91 GiB, estimate 59,584) in
// each wording vLLM printed them in, at the releases either side of each change (read from vLLM's tags).
TEST_CASE("vLLM's not-enough-memory error in the wording of each release") {
    ModelSpec m = dense("Qwen/Qwen2.5-14B (hand-built)", 48, 8, 128, 40, 131072);
    const int64_t avail = int64_t(3724) * 48 * 65536;
    const std::string see = " See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.";
    const std::string no_docs =
        "To serve at least one request with the models's max seq len (131072), (24.00 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (10.91 GiB). Based on the available memory, the "
        "estimated maximum model length is 59584. Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine.";
    // Up to 0.8.3 (vllm#16118's quote): no estimate either.
    CHECK(cap_for(m, "0.8.3", avail).error_text ==
          "To serve at least one request with the models's max seq len (131072), (24.00 GiB KV cache is needed, "
          "which is larger than the available KV cache memory (10.91 GiB). Try increasing `gpu_memory_utilization` "
          "or decreasing `max_model_len` when initializing the engine.");
    // 0.8.4 to 0.12 (tpu-inference#223's log, vllm#27508's 0.11.0): "%.2f", the estimate, no link.
    CHECK(cap_for(m, "0.10.1", avail).error_text == no_docs);
    CHECK(cap_for(m, "0.12.0", avail).error_text == no_docs);
    // 0.13 adds the link (V9's own wording, late 2025).
    CHECK(cap_for(m, "0.13.0", avail).error_text == no_docs + see);
    // 0.14 to 0.21: format_gib's "24.0" (C2's 0.15.2rc1, the ROCm log of 0.20.1/0.20.2).
    const std::string gib =
        "To serve at least one request with the models's max seq len (131072), (24.0 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (10.91 GiB). Based on the available memory, the "
        "estimated maximum model length is 59584. Try increasing `gpu_memory_utilization` or decreasing "
        "`max_model_len` when initializing the engine." +
        see;
    CHECK(cap_for(m, "0.14.0", avail).error_text == gib);
    CHECK(cap_for(m, "0.21.0", avail).error_text == gib);
    CHECK(cap_for(m, "0.20.2rc1.dev372", avail).error_text == gib);
    // 0.22 on: "model's" and the CPU-backend clause (C5's 0.22); main builds from PR #42479 on too.
    const std::string cur =
        "To serve at least one request with the model's max seq len (131072), (24.0 GiB KV cache is needed, "
        "which is larger than the available KV cache memory (10.91 GiB). Based on the available memory, the "
        "estimated maximum model length is 59584. Try increasing `gpu_memory_utilization` (which also controls "
        "CPU memory on the CPU backend) or decreasing `max_model_len` when initializing the engine." +
        see;
    CHECK(cap_for(m, "0.22.0", avail).error_text == cur);
    CHECK(cap_for(m, "0.20.2rc1.dev373+g27b85d208", avail).error_text == cur);
    CHECK(cap_for(m, "0.21.1rc1.dev5", avail).error_text == cur);

    // Less than one block: no estimate. Up to 0.13 the f-string's own space after the (empty) estimate
    // leaves two; from 0.14 the estimate carries its space and there is one.
    const int64_t tiny = 48 * 65536 - 1;
    CHECK(cap_for(m, "0.13.0", tiny).error_text.find("memory (0.00 GiB).  Try increasing") != std::string::npos);
    CHECK(cap_for(m, "0.12.0", tiny).error_text.find("memory (0.00 GiB).  Try increasing") != std::string::npos);
    CHECK(cap_for(m, "0.14.0", tiny).error_text.find("memory (0.0 GiB). Try increasing") != std::string::npos);

    // No memory at all: vllm#27508's 0.11-era text up to 0.12, then the link, then the CPU-backend clause.
    const std::string none =
        "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the "
        "engine.";
    CHECK(cap_for(m, "0.11.0", 0).error_text == none);
    CHECK(cap_for(m, "0.12.0", 0).error_text == none);
    CHECK(cap_for(m, "0.13.0", 0).error_text == none + see);
    CHECK(cap_for(m, "0.21.0", 0).error_text == none + see);
    CHECK(cap_for(m, "0.22.0", 0).error_text ==
          "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the "
          "engine (this flag also controls CPU memory reservation on the CPU backend, despite its name)." +
              see);
    CHECK(cap_for(m, "", 0).error_text == cap_for(m, "0.22.0", 0).error_text);
}

// W3 (vllm#27508, v0.11.0 by its traceback's line numbers): gpt-oss-120b (gpt-oss-20b's layers, 36 of them)
// with --max-num-batched-tokens 1024 needs 18 full layers x 131,072 tokens (4.5 GiB) and 18 sliding layers x
// 73 blocks (41.06 MiB) = 4.54 GiB in "%.2f", no link; 0.14 would have printed the same figure through format_gib.
TEST_CASE("W3 vllm#27508: gpt-oss-120b's 4.54 GiB in 0.11.0's wording") {
    ModelSpec m20 = fixture("openai/gpt-oss-20b");
    ModelSpec m = m20;
    m.name = "openai/gpt-oss-120b (gpt-oss-20b's layers, 36)";
    m.layers.clear();
    for (int i = 0; i < 36; ++i) m.layers.push_back(m20.layers[i % 2]);
    REQUIRE(m.layers[0].kind != m.layers[1].kind);
    auto rel = vllm_release("0.11.0");
    REQUIRE(rel.ok());
    VllmOptions o;
    o.log_format = rel->log_format;
    o.error_wording = rel->error_wording;
    o.max_num_batched_tokens = 1024;
    o.max_model_len = 131072;
    auto c = vllm_capacity(m, o, int64_t(1836) << 20);  // 1.79 GiB: less than one request
    REQUIRE(c.ok());
    CHECK(c->request_bytes == int64_t(18) * 131072 * 2048 + int64_t(18) * 73 * 16 * 2048);
    CHECK(
        c->error_text.rfind("To serve at least one request with the models's max seq len (131072), (4.54 GiB KV cache "
                            "is needed, which is larger than the available KV cache memory (1.79 GiB). Based on the "
                            "available memory, the estimated maximum model length is ",
                            0) == 0);
    CHECK(c->error_text.find("See https") == std::string::npos);
}

// C2 (vllm#34076): 48 layers split 16,32 over two stages. 0.14 to 0.16 check one request as if a stage held
// all 48 (24.0 GiB, estimate 34,736 from 3.18 GiB); the other releases check each stage in turn against the
// memory given, and the 16-layer first one already fails (8.0 GiB, 6,513 blocks of 16 x 16 x 2,048 B).
TEST_CASE("the pipeline-parallel memory check of 0.14 to 0.16 counts every layer") {
    ModelSpec m = dense("Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8 (hand-built)", 48, 4, 128, 32, 262144);
    const int64_t avail = int64_t(2171) * 16 * 48 * 2048;  // 2,171 blocks of all 48 layers: "3.18 GiB"
    VllmCapacity old = cap_for(m, "0.15.2rc1.dev93", avail, 2, "16,32");
    CHECK(old.request_bytes == 24 * GiB);
    CHECK(old.estimated_max_model_len == 34736);
    CHECK(old.error_text.find("(24.0 GiB KV cache is needed, which is larger than the available KV cache memory "
                              "(3.18 GiB)") != std::string::npos);
    CHECK(cap_for(m, "0.16.0", avail, 2, "16,32").request_bytes == 24 * GiB);  // PR #33698 is in 0.17
    VllmCapacity fixed = cap_for(m, "0.17.0", avail, 2, "16,32");
    CHECK(fixed.layout.stage_layers == std::vector<int64_t>{16, 32});
    CHECK(fixed.request_bytes == 8 * GiB);
    CHECK(fixed.estimated_max_model_len == 104208);
    // Releases before the regression checked the stage too.
    CHECK(cap_for(m, "0.13.0", avail, 2, "16,32").estimated_max_model_len == 104208);
}

namespace {

BudgetResult budget_at(const std::string& id, BudgetInputs in) {
    auto r = compute_budget(fixture(id), in);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

}  // namespace

// gpt-oss-20b (12 sliding + 12 full layers, two groups) on an H100 at 32K, 145,067 blocks: 0.20.0 counts
// blocks // groups x 16, 0.20.1 int(X x M) in the same two lines (PR #41069, cherry-picked into 0.20.1), 0.26
// reserves async scheduling's two batches in flight for the sliding layers (fewer requests fit), still on two
// lines up to 0.27, on one line after.
TEST_CASE("budget --engine-version: gpt-oss-20b's start-up lines and numbers per vLLM release") {
    BudgetInputs in;
    in.gpu = "h100-sxm";
    in.context = 32768;
    in.engine_version = "0.20.0";
    BudgetResult r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.capacity.num_blocks == 145067);
    CHECK(r.log_lines == std::vector<std::string>{"GPU KV cache size: 1,160,528 tokens",
                                                  "Maximum concurrency for 32,768 tokens per request: 56.47x"});
    CHECK(r.max_concurrency == 56);
    in.engine_version = "vllm=0.20.1";
    r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.log_lines == std::vector<std::string>{"GPU KV cache size: 1,850,352 tokens",
                                                  "Maximum concurrency for 32,768 tokens per request: 56.47x"});
    in.engine_version = "0.27.1";
    r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.log_lines == std::vector<std::string>{"GPU KV cache size: 1,542,861 tokens",
                                                  "Maximum concurrency for 32,768 tokens per request: 47.08x"});
    CHECK(r.max_concurrency == 47);
    in.engine_version = "0.28.0";
    r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.log_lines ==
          std::vector<std::string>{
              "GPU KV cache size: 1,542,861 tokens, Maximum concurrency for 32,768 tokens per request: 47.08x"});
    in.engine_version = "";
    CHECK(budget_at("openai/gpt-oss-20b", in).log_lines == r.log_lines);  // the newest by default

    // llama.cpp b6500: the unified prefix with streams; transformers takes no version.
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.engine_version = "b6500";
    CHECK(budget_at("meta-llama/Llama-3.1-8B", in).log_lines ==
          std::vector<std::string>{"llama_kv_cache_unified: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), "
                                   "K (f16):  512.00 MiB, V (f16):  512.00 MiB"});
    in.engine = BudgetEngine::Transformers;
    auto bad = validate(in);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message ==
          "transformers has no version-dependent format in kvbudget: leave the engine version (b6500) empty");
    in.engine = BudgetEngine::Vllm;
    CHECK(validate(in).error().detail.code == "engine_version_bad");

    auto cli = kvb::test::run_cli("budget " + kvb::test::config_path("meta-llama--Llama-3.1-8B") +
                                  " --gpu rtx-4090 --engine-version b6500");
    CHECK(cli.status == 1);
    CHECK(cli.out ==
          "kvbudget: error: b6500 is not a vLLM version: give a release such as 0.20.1 (vLLM) or a build such as b6699 "
          "(llama.cpp)\n");
}

// DeepSeek-V3's MTP module as vLLM loads it: one MoE decoder layer (11,507,239,424 parameters) and eh_proj
// (2 x 7,168 x 7,168), the embedding and head shared: 11,610,068,224 parameters, about the 14B DeepSeek
// publishes for the module less its own copies of the embedding and head (2 x 926,679,040).
TEST_CASE("budget: an MTP drafter's weights are the model's MTP module, stored as the model is") {
    BudgetInputs in;
    in.gpu = "h200";
    in.gpu_count = 8;
    in.context = 32768;
    auto plain = budget_at("deepseek-ai/DeepSeek-V3", in);
    in.speculative_config = R"({"method": "mtp", "num_speculative_tokens": 1})";
    auto r = budget_at("deepseek-ai/DeepSeek-V3", in);
    CHECK(r.drafter_params == 11610068224);
    CHECK(r.drafter_weight_bytes == 11643997184);  // fp8 with its 128 x 128 block scales, as the model
    CHECK(r.weights.bytes - plain.weights.bytes == 11643997184);
    CHECK(r.weights.per_gpu_bytes - plain.weights.per_gpu_bytes == 11643997184 / 8);
}

TEST_CASE("check --engine-version: a fragment's release, and the log's own banner winning") {
    const std::string log = "/tmp/kvb-engine-version-" + std::to_string(getpid()) + ".log";
    {
        FILE* f = std::fopen(log.c_str(), "w");
        REQUIRE(f);
        std::fputs(
            "llama_kv_cache_unified: size = 1152.00 MiB (  8192 cells,  36 layers,  1/1 seqs), K (f16):  "
            "576.00 MiB, V (f16):  576.00 MiB\n",
            f);
        std::fclose(f);
    }
    const std::string cfg = kvb::test::config_path("Qwen--Qwen3-8B");
    auto r = kvb::test::run_cli("check " + log + " --config " + cfg + " --engine-version b6500", false);
    CHECK(r.status == 0);
    CHECK(r.out.find("engine: llamacpp b6500\n") == 0);
    CHECK(r.out.find("1 matched, 0 explained, 0 unexplained") != std::string::npos);
    r = kvb::test::run_cli("check " + log + " --config " + cfg + " --engine-version 0.20.1");
    CHECK(r.status == 2);
    CHECK(r.out.find("0.20.1 is not a llama.cpp version") != std::string::npos);
    std::remove(log.c_str());
}
