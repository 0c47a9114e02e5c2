// Engine versions (issue 12): one parser (engines/engine_version.h) for `kvbudget vllm|llamacpp|budget|check
// --engine-version` and the page, and every version-dependent format derived from it: vLLM's token count
// and error wordings, its MLA block sizes and its pipeline-parallel memory check; llama.cpp's KV line.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "budget/budget.h"
#include "budget/estimates.h"
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
    CHECK(llama_log_format_for_version("b5912").value() == LlamaLogFormat::Unified);
    CHECK(llama_log_format_for_version("llamacpp=b6100").value() == LlamaLogFormat::UnifiedStreams);
    CHECK(llama_log_format_for_version("6232").value() == LlamaLogFormat::UnifiedStreams);
    CHECK(llama_log_format_for_version("b6233").value() == LlamaLogFormat::Y2025);
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

// gpt-oss-20b (12 sliding + 12 full layers, two groups) on an H100 at 32K, 149,351 blocks at 0.92 of the GPU (every
// release here): 0.20.0 counts blocks // groups x 16, 0.20.1 int(X x M) in the same two lines (PR #41069,
// cherry-picked into 0.20.1), 0.26 reserves async scheduling's two batches in flight for the sliding layers (fewer
// requests fit), still on two lines up to 0.27, on one line after.
TEST_CASE("budget --engine-version: gpt-oss-20b's start-up lines and numbers per vLLM release") {
    BudgetInputs in;
    in.gpu = "h100-sxm";
    in.context = 32768;
    in.engine_version = "0.20.0";
    BudgetResult r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.capacity.num_blocks == 149351);
    CHECK(r.log_lines == std::vector<std::string>{"GPU KV cache size: 1,194,800 tokens",
                                                  "Maximum concurrency for 32,768 tokens per request: 58.14x"});
    CHECK(r.max_concurrency == 58);
    in.engine_version = "vllm=0.20.1";
    r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.log_lines == std::vector<std::string>{"GPU KV cache size: 1,904,995 tokens",
                                                  "Maximum concurrency for 32,768 tokens per request: 58.14x"});
    in.engine_version = "0.27.1";
    r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.log_lines == std::vector<std::string>{"GPU KV cache size: 1,588,423 tokens",
                                                  "Maximum concurrency for 32,768 tokens per request: 48.47x"});
    CHECK(r.max_concurrency == 48);
    in.engine_version = "0.28.0";
    r = budget_at("openai/gpt-oss-20b", in);
    CHECK(r.log_lines ==
          std::vector<std::string>{
              "GPU KV cache size: 1,588,423 tokens, Maximum concurrency for 32,768 tokens per request: 48.47x"});
    in.engine_version = "";
    CHECK(budget_at("openai/gpt-oss-20b", in).log_lines == r.log_lines);  // the newest by default

    // llama.cpp b6232: the unified prefix with streams, b6233 without it (#15467); transformers takes no version.
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.engine_version = "b6232";
    CHECK(budget_at("meta-llama/Llama-3.1-8B", in).log_lines ==
          std::vector<std::string>{"llama_kv_cache_unified: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), "
                                   "K (f16):  512.00 MiB, V (f16):  512.00 MiB"});
    in.engine_version = "b6500";
    CHECK(budget_at("meta-llama/Llama-3.1-8B", in).log_lines ==
          std::vector<std::string>{"llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), "
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
    CHECK(r.drafter_weight_bytes == 11646820392);  // fp8 with its 128 x 128 block scales, as the model
    CHECK(r.weights.bytes - plain.weights.bytes == 11646820392);
    CHECK(r.weights.per_gpu_bytes - plain.weights.per_gpu_bytes == 11646820392 / 8);
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

// ---------------------------------------------------------------- llama.cpp by build

// Every boundary of llama_build, one build either side. Each is the first build (git rev-list --count of the
// commit on master) with the change, read in llama.cpp's history (docs/engine-kv-spec.md, "llama.cpp by build").
TEST_CASE("llama_build: each change at its build, and the build before it") {
    using F = LlamaLogFormat;
    struct Row {
        const char* version;
        F format;
        bool unpadded, swa_pad_256, mla_v, rs_seq;
    };
    const Row rows[] = {
        {"b5912", F::Unified, false, false, true, false},                // one stream for every sequence
        {"b5913", F::UnifiedStreamsAligned, false, false, true, false},  // #14363: streams, "%2u/%2u seqs"
        {"b6071", F::UnifiedStreamsAligned, false, false, true, false},
        {"b6072", F::UnifiedStreams, false, false, true, false},  // #15040: "%2u/%u seqs"
        {"b6232", F::UnifiedStreams, false, false, true, false},
        {"b6233", F::Y2025, false, false, true, false},  // #15467: "llama_kv_cache:"
        {"b6867", F::Y2025, false, false, true, false},
        {"b6868", F::Y2025, true, false, true, false},  // #16812: no padding
        {"b6974", F::Y2025, true, false, true, false},
        {"b6975", F::Y2025, false, true, true, false},  // #17046: padded to 256
        {"b7831", F::Y2025, false, true, true, false},
        {"b7832", F::Y2025, false, true, false, false},  // #19067: MLA caches K only
        {"b9179", F::Y2025, false, true, false, false},
        {"b9180", F::RsSeq, false, true, false, true},  // #22673: MTP, n_rs_seq
        {"b10659", F::RsSeq, false, true, false, true},
        {"b10660", F::Current, false, true, false, true},  // #27742: the P term
        {"10735 (0123abcd)", F::Current, false, true, false, true},
        {"", F::Current, false, true, false, true},  // the newest
    };
    for (const Row& row : rows) {
        CAPTURE(row.version);
        auto b = llama_build(row.version);
        REQUIRE(b.ok());
        CHECK(b->log_format == row.format);
        CHECK(b->unpadded_ctx == row.unpadded);
        CHECK(b->swa_pad_256 == row.swa_pad_256);
        CHECK(b->mla_v_cache == row.mla_v);
        CHECK(b->rs_seq == row.rs_seq);
        CHECK(llama_log_format_for_version(row.version).value() == row.format);
    }
    CHECK(llama_build("b10660")->build == 10660);
    CHECK(llama_build("")->build == 0);
    auto bad = llama_build("0.20.1");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().detail.code == "engine_version_bad");
}

// A build past the table (b10678, the newest whose source was read) is neither refused nor sized
// by an older build's rules: the newest rules size it, and a note says so; b10678 itself and ""
// (the newest) have no note.
TEST_CASE("llama_build: a build newer than the table is sized by the newest rules, and says so") {
    CHECK(kLlamaNewestKnownBuild == 10678);
    auto newer = llama_build("b10754");
    REQUIRE(newer.ok());
    CHECK(newer->log_format == LlamaLogFormat::Current);
    const ModelSpec model = fixture("meta-llama/Llama-3.1-8B");
    auto layout_for = [&](const std::string& v) {
        LlamaOptions o;
        o.n_ctx = 8192;
        apply_llama_build(llama_build(v).value(), o);
        return llamacpp_layout(model, o).value();
    };
    const LlamaLayout L = layout_for("b10754");
    const LlamaLayout now = layout_for("");
    CHECK(L.log_lines == now.log_lines);
    CHECK(L.kv_bytes == 1073741824);  // 32 layers x 8192 cells x 4096 B
    REQUIRE(L.notes.size() == 1);
    CHECK(L.notes[0].code == "llama_build_newer");
    CHECK(
        render_english(L.notes[0]) ==
        "llama.cpp b10754 is newer than the newest build kvbudget has read (b10678): it is sized with b10678's rules");
    CHECK(layout_for("b10678").notes.empty());
    CHECK(now.notes.empty());
    // The CLI and the budget pass it on.
    auto r = kvb::test::run_cli("llamacpp " + kvb::test::config_path("meta-llama--Llama-3.1-8B") +
                                " -c 8192 --engine-version b10754");
    CHECK(r.out.find("note: llama.cpp b10754 is newer than the newest build kvbudget has read (b10678)") !=
          std::string::npos);
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.engine_version = "b10754";
    auto b = compute_budget(model, in);
    REQUIRE(b.ok());
    CHECK(
        std::any_of(b->notes.begin(), b->notes.end(), [](const Message& n) { return n.code == "llama_build_newer"; }));
}

namespace {

std::string llama_lines(const std::string& cfg, const std::string& args) {
    auto r = kvb::test::run_cli("llamacpp " + kvb::test::config_path(cfg) + " " + args, false);
    CHECK_MESSAGE(r.status == 0, r.out);
    return r.out;
}

}  // namespace

// gpu_memory_utilization's default, CacheConfig.gpu_memory_utilization (vllm/config/cache.py): Field(default=0.9) up to
// v0.19.1 and in v0.20.0rc1, Field(default=0.92) from v0.20.0 (PR #38284, 96a85c575, v0.19.2rc0-94 on main), which
// also turned VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS on: the graphs' memory leaves the KV cache from 0.20.0 on.
TEST_CASE("vLLM's gpu_memory_utilization default per release: 0.9 up to 0.19, 0.92 from 0.20.0") {
    const std::pair<const char*, double> defaults[] = {
        {"0.9.2", 0.9},
        {"0.19.1", 0.9},
        {"0.20.0rc1", 0.9},  // cut from main before the change
        {"0.19.2rc1.dev93+g1", 0.9},
        {"0.19.2rc1.dev94+g96a85c575", 0.92},
        {"0.20.0", 0.92},
        {"0.27.1", 0.92},
        {"", 0.92},  // the newest
    };
    for (const auto& [v, util] : defaults) {
        CAPTURE(v);
        auto rel = vllm_release(v);
        REQUIRE(rel.ok());
        CHECK(rel->gpu_memory_utilization == util);
        CHECK(rel->cudagraph_profiling == (util == 0.92));
    }

    // Llama-3.1-8B on 24 GiB at 32K, activation 1 GiB and non-torch 512 MiB given; 2 MiB blocks. CUDA graphs:
    // 51 capture sizes x 32 layers x 0.5 MiB = 816 MiB (855,638,016 B).
    BudgetInputs in;
    in.gpu_memory_bytes = 24 * GiB;
    in.activation_bytes = GiB;
    in.overhead_bytes = GiB / 2;
    in.context = 32768;
    in.engine_version = "0.19.1";
    BudgetResult old = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(old.gpu_memory_utilization == 0.9);
    CHECK(old.requested_bytes == 23192823398);  // 24 GiB x 0.9
    CHECK(old.cudagraph_bytes == 0);            // captured after the cache was sized
    CHECK(old.kv_pool_bytes == 5488133734);     // - 16,094,076,928 weights and RoPE cache - 1.5 GiB
    CHECK(old.capacity.num_blocks == 2616);
    CHECK(old.command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768");
    bool said = false;
    for (const auto& n : old.notes) said |= n.code == "vllm_cudagraphs_uncounted" && n.param("bytes") == "816.00 MiB";
    CHECK(said);
    in.engine_version = "0.20.0";
    BudgetResult cur = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(cur.gpu_memory_utilization == 0.92);
    CHECK(cur.gpu_memory_utilization_default == 0.92);
    CHECK(cur.requested_bytes == 23708219473);  // 24 GiB x 0.92
    CHECK(cur.cudagraph_bytes == 855638016);
    CHECK(cur.kv_pool_bytes == 5147891793);  // 23,708,219,473 - 16,094,076,928 - 1.5 GiB - 816 MiB
    CHECK(cur.capacity.num_blocks == 2454);
    CHECK(cur.log_lines == std::vector<std::string>{"GPU KV cache size: 39,264 tokens",
                                                    "Maximum concurrency for 32,768 tokens per request: 1.20x"});
    CHECK(cur.command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768");

    // A fraction the release does not default to is said in the command, whichever side it is on.
    in.engine_version = "";
    in.gpu_memory_utilization = 0.9;
    BudgetResult nine = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(nine.requested_bytes == 23192823398);
    CHECK(nine.kv_pool_bytes == 4632495718);  // 5,488,133,734 - 816 MiB of graphs
    CHECK(nine.capacity.num_blocks == 2208);
    CHECK(nine.command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768 --gpu-memory-utilization 0.9");
    in.engine_version = "0.19.1";
    in.gpu_memory_utilization = 0.92;
    BudgetResult up = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(up.kv_pool_bytes == 6003529809);
    CHECK(up.capacity.num_blocks == 2862);
    CHECK(up.command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768 --gpu-memory-utilization 0.92");

    // llama.cpp and transformers budget against the whole GPU, whatever vLLM defaults to.
    in.engine = BudgetEngine::LlamaCpp;
    in.engine_version = "";
    in.gpu_memory_utilization = 0;
    CHECK(budget_at("meta-llama/Llama-3.1-8B", in).gpu_memory_utilization == 1.0);

    auto cli = kvb::test::run_cli("budget " + kvb::test::config_path("meta-llama--Llama-3.1-8B") +
                                  " --gpu-memory 24GiB --max-model-len 32768 --engine-version 0.19.1");
    CHECK(cli.out.find("  requested per GPU     21.60 GiB (24.00 GiB x 0.9)\n") != std::string::npos);
    cli = kvb::test::run_cli("budget " + kvb::test::config_path("meta-llama--Llama-3.1-8B") +
                             " --gpu-memory 24GiB --max-model-len 32768");
    CHECK(cli.out.find("  requested per GPU     22.08 GiB (24.00 GiB x 0.92)\n") != std::string::npos);
}

// `vllm serve --kv-cache-dtype` takes CacheConfig's CacheDType Literal, listed sorted by argparse (literal_to_kwargs):
// read at every tag of vllm/config.py and vllm/config/cache.py. float32 never was one of them.
TEST_CASE("vLLM --kv-cache-dtype: the spellings each release takes, vLLM's refusal for the others") {
    auto choices = [](const char* v) { return vllm_release(v)->kv_cache_dtypes; };
    using L = std::vector<std::string>;
    CHECK(choices("0.8.4") == L{"auto", "fp8", "fp8_e5m2", "fp8_e4m3"});  // arg_utils' own list
    CHECK(choices("0.9.2") == L{"auto", "fp8", "fp8_e4m3", "fp8_e5m2"});
    CHECK(choices("0.10.2") == L{"auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"});
    CHECK(choices("0.11.0rc3") == choices("0.10.2"));
    CHECK(choices("0.11.0") == L{"auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"});
    CHECK(choices("0.11.1rc7") == choices("0.11.0"));
    CHECK(choices("0.17.1") == L{"auto", "bfloat16", "fp8", "fp8_ds_mla", "fp8_e4m3", "fp8_e5m2", "fp8_inc"});
    CHECK(choices("0.18.0") ==
          L{"auto", "bfloat16", "float16", "fp8", "fp8_ds_mla", "fp8_e4m3", "fp8_e5m2", "fp8_inc"});
    CHECK(choices("0.20.0").size() == 15);  // + turboquant_* (4), int8/fp8_per_token_head, nvfp4
    CHECK(choices("0.25.0").size() == 16);  // + int4_per_token_head
    CHECK(choices("0.27.1").size() == 16);
    CHECK(choices("0.28.0").size() == 17);  // + nvfp4_4over6
    CHECK(choices("0.28.0") == choices("0.28.1rc0"));
    CHECK(choices("0.29.0").size() == 18);  // + nvfp4_ds_mla (PR #51724, 7c5dc571c, merged 2026-09-01)
    CHECK(choices("0.31.0") == choices(""));
    CHECK(choices("").size() == 18);

    const ModelSpec llama = fixture("meta-llama/Llama-3.1-8B");
    const std::string head = "vllm serve: error: argument --kv-cache-dtype: invalid choice: ";
    CHECK(vllm_kv_cache_dtype("float32", llama).error().message ==
          head +
              "'float32' (choose from 'auto', 'bfloat16', 'float16', 'fp8', 'fp8_ds_mla', 'fp8_e4m3', 'fp8_e5m2', "
              "'fp8_inc', 'fp8_per_token_head', 'int4_per_token_head', 'int8_per_token_head', 'nvfp4', "
              "'nvfp4_4over6', 'nvfp4_ds_mla', 'turboquant_3bit_nc', 'turboquant_4bit_nc', 'turboquant_k3v4_nc', "
              "'turboquant_k8v4')");
    CHECK(vllm_kv_cache_dtype("float16", llama, choices("0.17.1")).error().message ==
          head + "'float16' (choose from 'auto', 'bfloat16', 'fp8', 'fp8_ds_mla', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc')");
    CHECK(vllm_kv_cache_dtype("bfloat16", llama, choices("0.10.2")).error().message ==
          head + "'bfloat16' (choose from 'auto', 'fp8', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc')");
    CHECK(vllm_kv_cache_dtype("float16", llama, choices("0.18.0"))->block_bytes == 2);
    CHECK(vllm_kv_cache_dtype("bfloat16", llama, choices("0.11.0"))->block_bytes == 2);
    // Taken by vLLM, not sized here: its own message, naming what is.
    CHECK(vllm_kv_cache_dtype("turboquant_k8v4", llama).error().message ==
          "vLLM takes --kv-cache-dtype turboquant_k8v4, but kvbudget does not size that cache for this model (a page "
          "layout or attention backend kvbudget does not model); it sizes auto, bfloat16, float16, fp8, fp8_e4m3, "
          "fp8_e5m2, nvfp4, nvfp4_4over6");
    CHECK(vllm_kv_cache_dtype("fp8_inc", llama, choices("0.17.1")).error().detail.code == "vllm_kv_dtype_not_modelled");
    CHECK(vllm_kv_cache_dtype("fp8_ds_mla", llama).error().detail.code == "vllm_kv_dtype_not_modelled");
    CHECK(vllm_kv_cache_dtype("nvfp4_ds_mla", llama).error().detail.code == "vllm_kv_dtype_not_modelled");
    CHECK(vllm_kv_cache_dtype("nvfp4_ds_mla", llama, choices("0.28.0")).error().detail.code == "unknown_vllm_kv_dtype");
    CHECK(vllm_kv_cache_dtype("turboquant_k8v4", llama, choices("0.19.1")).error().detail.code ==
          "unknown_vllm_kv_dtype");
    // fp8_ds_mla is DeepSeek-V3.2's own (the sparse MLA backends): the 656-byte latent plus the 132-byte indexer key.
    const ModelSpec ds = fixture("deepseek-ai/DeepSeek-V3.2");
    VllmOptions o;
    o.kv_cache_dtype = "fp8_ds_mla";
    auto l = vllm_layout(ds, o);
    REQUIRE(l.ok());
    CHECK(l->bytes_per_block == 61 * 64 * (656 + 132));
    o.kv_cache_dtype_choices = choices("0.11.0");  // before v0.11.1
    CHECK(vllm_layout(ds, o).error().detail.code == "unknown_vllm_kv_dtype");

    // The budget checks the flag against its release; the explicit float32 is refused, auto's float32 stays.
    BudgetInputs in;
    in.gpu = "rtx-4090";
    in.context = 8192;
    in.kv_cache_dtype = "float16";
    in.engine_version = "0.17.1";
    auto r = compute_budget(llama, in);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().detail.code == "unknown_vllm_kv_dtype");
    in.engine_version = "0.18.0";
    auto f16 = compute_budget(llama, in);
    REQUIRE(f16.ok());
    CHECK(f16->kv_cache_dtype == "float16");
    CHECK(f16->command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 8192 --kv-cache-dtype float16");
    in.engine_version = "";
    in.kv_cache_dtype = "float32";
    CHECK(compute_budget(llama, in).error().detail.code == "unknown_vllm_kv_dtype");
    CHECK(compute_answer(llama, in).error().detail.code == "unknown_vllm_kv_dtype");
    in.kv_cache_dtype = "fp8_e5m2";
    CHECK(compute_budget(llama, in)->kv_cache_dtype == "fp8_e5m2");
}

// Llama-3.1-8B at 8,192 cells: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 1,024 MiB in every build; only
// the wording moves.
TEST_CASE("llamacpp --engine-version: the KV line in each build's wording") {
    const std::string tail = "( 8192 cells,  32 layers, ";
    const std::string kv = " size = 1024.00 MiB (  8192 cells,  32 layers, ";
    const std::string kt = "), K (f16):  512.00 MiB, V (f16):  512.00 MiB\n";
    const std::string id = "meta-llama--Llama-3.1-8B";
    CHECK(llama_lines(id, "-c 8192 --engine-version b5912") == "llama_kv_cache_unified:" + kv + " 1 seqs" + kt);
    CHECK(llama_lines(id, "-c 8192 --engine-version b5913") == "llama_kv_cache_unified:" + kv + " 1/ 1 seqs" + kt);
    CHECK(llama_lines(id, "-c 8192 --engine-version b6071") == "llama_kv_cache_unified:" + kv + " 1/ 1 seqs" + kt);
    CHECK(llama_lines(id, "-c 8192 --engine-version b6072") == "llama_kv_cache_unified:" + kv + " 1/1 seqs" + kt);
    CHECK(llama_lines(id, "-c 8192 --engine-version b6232") == "llama_kv_cache_unified:" + kv + " 1/1 seqs" + kt);
    CHECK(llama_lines(id, "-c 8192 --engine-version b6233") == "llama_kv_cache:" + kv + " 1/1 seqs" + kt);
    CHECK(llama_lines(id, "-c 8192") == "llama_kv_cache:" + kv + " 1/1 seqs" + kt);
    // --log-format overrides the wording only.
    CHECK(llama_lines(id, "-c 8192 --engine-version b6233 --log-format unified-streams-aligned") ==
          "llama_kv_cache_unified:" + kv + " 1/ 1 seqs" + kt);
    auto bad = kvb::test::run_cli("llamacpp " + kvb::test::config_path(id) + " -c 8192 --log-format aligned");
    CHECK(bad.status == 2);
    CHECK(bad.out ==
          "kvbudget: error: --log-format must be current, rs-seq, 2025, unified-streams, unified-streams-aligned or "
          "legacy, got 'aligned'\n");
}

// Qwen3-Next at 4,096 cells: 36 gated-delta-net layers, R 98,304 + S 2,097,152 B each in f32 = 75.38 MiB; the
// line counts all 48 layers. rs_seq from b9180, the P term (no PLE layer: 0.00 MiB) from b10660.
TEST_CASE("llamacpp --engine-version: the recurrent line of b9179, b9180, b10659 and b10660") {
    const std::string id = "Qwen--Qwen3-Next-80B-A3B-Thinking";
    const std::string kv =
        "llama_kv_cache: size =   96.00 MiB (  4096 cells,  12 layers,  1/1 seqs), K (f16):   48.00 MiB, V (f16):   "
        "48.00 MiB\n";
    const std::string head = "llama_memory_recurrent: size =   75.38 MiB (     1 cells,  48 layers,  1 seqs";
    const std::string rs = "), R (f32):    3.38 MiB, S (f32):   72.00 MiB";
    CHECK(llama_lines(id, "-c 4096 --engine-version b9179") == kv + head + rs + "\n");
    CHECK(llama_lines(id, "-c 4096 --engine-version b9180") == kv + head + "  0 rs_seq" + rs + "\n");
    CHECK(llama_lines(id, "-c 4096 --engine-version b10659") == kv + head + "  0 rs_seq" + rs + "\n");
    const std::string now = kv + head + "  0 rs_seq" + rs + ", P (f32):    0.00 MiB\n";
    CHECK(llama_lines(id, "-c 4096 --engine-version b10660") == now);
    CHECK(llama_lines(id, "-c 4096") == now);
    // A fork that counts its own commits past b10660 without the P term: --log-format rs-seq says so.
    CHECK(llama_lines(id, "-c 4096 --engine-version b10735 --log-format rs-seq") ==
          kv + head + "  0 rs_seq" + rs + "\n");
    // n_rs_seq (MTP's rollback snapshots) exists from b9180 only.
    auto old = kvb::test::run_cli("llamacpp " + kvb::test::config_path("Qwen--Qwen3.5-27B") +
                                  " -c 4096 --spec-type draft-mtp --engine-version b9179");
    CHECK(old.status == 1);
    CHECK(old.out ==
          "kvbudget: error: Qwen/Qwen3.5-27B: llama.cpp has --spec-type draft-mtp from build b9180 "
          "(ggml-org/llama.cpp#22673); build b9179 has no multi-token-prediction drafting\n");

    // The page's field goes through the same core: budget with engine_version.
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "h100-sxm";
    in.context = 4096;
    in.engine_version = "b10659";
    auto r = compute_budget(fixture("Qwen/Qwen3-Next-80B-A3B-Thinking"), in);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    REQUIRE(r->log_lines.size() == 2);
    CHECK(r->log_lines[1] + "\n" == head + "  0 rs_seq" + rs + "\n");
    in.engine_version = "b10660";
    r = compute_budget(fixture("Qwen/Qwen3-Next-80B-A3B-Thinking"), in);
    REQUIRE(r.ok());
    CHECK(r->log_lines[1] + "\n" == head + "  0 rs_seq" + rs + ", P (f32):    0.00 MiB\n");
}

// gpt-oss-20b (12 sliding layers of window 128 + 12 full, 8 KV heads x 64) at -c 4000: the context and the SWA
// cache (n_swa + n_ubatch = 640 cells wanted) as each build pads them.
TEST_CASE("llamacpp --engine-version: context and SWA padding of b6867, b6868, b6974 and b6975") {
    const std::string id = "openai--gpt-oss-20b";
    auto cells = [&](const std::string& args) {
        const std::string out = llama_lines(id, "-c 4000 " + args);
        std::vector<std::string> v;
        for (size_t p = out.find("size = "); p != std::string::npos; p = out.find("size = ", p + 1)) {
            const size_t e = out.find(" cells", p);
            if (out.compare(p, 7, "size = ") == 0 && out.find("MiB", p) > e) v.push_back(out.substr(p + 7, e - p - 7));
        }
        return v;
    };
    // Up to b6867: n_ctx padded to 256 (flash attention; 32 without), the SWA cache to the same, then capped.
    CHECK(cells("--engine-version b6867") == std::vector<std::string>{"4096", "768"});
    CHECK(cells("--engine-version b6867 --no-fa-padding") == std::vector<std::string>{"4000", "640"});
    // b6868..b6974 (#16812): nothing padded.
    CHECK(cells("--engine-version b6868") == std::vector<std::string>{"4000", "640"});
    CHECK(cells("--engine-version b6974") == std::vector<std::string>{"4000", "640"});
    // b6975 (#17046): n_ctx and the SWA cache padded to 256, flash attention or not.
    CHECK(cells("--engine-version b6975") == std::vector<std::string>{"4096", "768"});
    CHECK(cells("") == std::vector<std::string>{"4096", "768"});
}

// DeepSeek-V3 (61 MLA layers, latent 512 + rope 64) at 4,096 cells: K 576 wide = 274.50 MiB; builds before
// b7832 (#19067) also cached a 512-wide V, 244.00 MiB more.
TEST_CASE("llamacpp --engine-version: MLA's V cache before b7832") {
    const std::string id = "deepseek-ai--DeepSeek-V3";
    CHECK(llama_lines(id, "-c 4096 --engine-version b7832") ==
          "llama_kv_cache: size =  274.50 MiB (  4096 cells,  61 layers,  1/1 seqs), K (f16):  274.50 MiB, V (f16):    "
          "0.00 MiB\n");
    CHECK(llama_lines(id, "-c 4096 --engine-version b7831") ==
          "llama_kv_cache: size =  518.50 MiB (  4096 cells,  61 layers,  1/1 seqs), K (f16):  274.50 MiB, V (f16):  "
          "244.00 MiB\n");
}

// check: the printed lines' wording wins over a build number (a fork's count can sit past a change its code
// lacks); the build still sizes what the lines do not show.
TEST_CASE("check with a build: a fork's b10735 printing rs_seq without P, and b9179's line") {
    const std::string kv =
        "llama_kv_cache: size =   96.00 MiB (  4096 cells,  12 layers,  1/1 seqs), K (f16):   48.00 MiB, V (f16):   "
        "48.00 MiB\n";
    const std::string head = "llama_memory_recurrent: size =   75.38 MiB (     1 cells,  48 layers,  1 seqs";
    const std::string rs = "), R (f32):    3.38 MiB, S (f32):   72.00 MiB";
    ModelSpec m = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    auto run = [&](const std::string& text, const std::string& version) {
        auto read = read_engine_log(text);
        REQUIRE_MESSAGE(read.ok(), (read.ok() ? "" : read.error().message));
        LogFacts f = read.value();
        if (f.version.empty()) f.version = version;  // what check's --engine-version does for a fragment
        CHECK(f.version == version);
        CheckReport r = check_log(f, &m, m.name, "argument");
        REQUIRE(r.lines.size() == 2);
        for (const auto& l : r.lines) {
            CAPTURE(l.printed);
            CAPTURE(l.predicted);
            CHECK(l.match);
            CHECK(l.cause.code == "");
        }
        return r;
    };
    CheckReport r = run("build: 10735 (0123abcd) with cc\n" + kv + head + "  0 rs_seq" + rs + "\n", "b10735");
    CHECK(r.lines[1].predicted == head + "  0 rs_seq" + rs);
    r = run(kv + head + rs + "\n", "b9179");
    CHECK(r.lines[1].predicted == head + rs);
    // b10660's own line, P term and all.
    r = run(kv + head + "  0 rs_seq" + rs + ", P (f32):    0.00 MiB\n", "b10660");
    CHECK(r.lines[1].predicted == head + "  0 rs_seq" + rs + ", P (f32):    0.00 MiB");
}

// `vllm serve`'s batch defaults (EngineArgs.get_batch_defaults, vllm/engine/arg_utils.py) gained a >= 160 GiB row of
// 16,384 batched tokens in PR #51726 (4988df2eb, 2026-08-11), and the default CUDA graph ceiling is 1,024 on compute
// capability 10.x since PR #49390 (021b7d985, 2026-08-07, VllmConfig._set_cudagraph_sizes): both first in 0.28.0,
// both still so in the newest stored snapshot (002f10e0c). Llama-3.1-8B, 32 layers, 0.5 MiB per size and layer.
TEST_CASE("vLLM 0.28.0 on: 16,384 batched tokens on >= 160 GiB, 1,024 graph sizes on B200") {
    CHECK(vllm_default_max_num_batched_tokens(160 * GiB, false) == 16384);
    CHECK(vllm_default_max_num_batched_tokens(160 * GiB - 1, false) == 8192);
    CHECK(vllm_default_max_num_batched_tokens(160 * GiB, false, false) == 8192);
    CHECK(vllm_default_max_num_batched_tokens(80 * GiB, true) == 2048);  // A100: the small row still
    CHECK(vllm_default_max_num_seqs(192 * GiB, false) == 1024);
    CHECK(vllm_default_max_num_seqs(24 * GiB, false) == 256);

    BudgetInputs in;
    in.context = 32768;
    in.activation_bytes = GiB;
    in.overhead_bytes = GiB / 2;
    in.gpu = "b200";  // 180 GiB, compute capability 10.0
    in.engine_version = "";
    BudgetResult b = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(b.max_num_batched_tokens == 16384);
    CHECK(b.max_num_seqs == 1024);
    CHECK(b.cudagraph_bytes == 83 * 32 * 512 * 1024LL);  // [1, 2, 4] + 8..248 + 256..1024: 3 + 31 + 49 sizes
    CHECK(b.command == "vllm serve meta-llama/Llama-3.1-8B --max-model-len 32768");
    bool said = false;
    for (const auto& n : b.notes) said |= n.code == "vllm_version_newer";
    CHECK_FALSE(said);
    in.engine_version = "0.27.1";
    BudgetResult old = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(old.max_num_batched_tokens == 8192);
    CHECK(old.max_num_seqs == 1024);
    CHECK(old.cudagraph_bytes == 51 * 32 * 512 * 1024LL);  // capped at 512
    CHECK(old.kv_pool_bytes - b.kv_pool_bytes == 32 * 32 * 512 * 1024LL);

    // MI300X (192 GiB): the new row, but 512 sizes (not NVIDIA 10.x). H100 (79.22 GiB): unchanged.
    in.gpu = "mi300x";
    in.engine_version = "0.28.0";
    BudgetResult amd = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(amd.max_num_batched_tokens == 16384);
    CHECK(amd.cudagraph_bytes == 51 * 32 * 512 * 1024LL);
    in.engine_version = "0.27.1";
    CHECK(budget_at("meta-llama/Llama-3.1-8B", in).max_num_batched_tokens == 8192);
    in.gpu = "h100";
    in.engine_version = "";
    CHECK(budget_at("meta-llama/Llama-3.1-8B", in).max_num_batched_tokens == 8192);
}

// gpu_worker.py determine_available_memory profiles the CUDA graphs "if current_platform.is_cuda_alike()" from 0.26.0
// (PR #48526, 05eed72ae); 0.20 had "not current_platform.is_rocm()", 0.21 to 0.25 "is_cuda()": on ROCm the cache was
// sized first and the graphs captured from what was left, as on every GPU before 0.20.0.
TEST_CASE("vLLM on ROCm: CUDA graph memory out of the KV cache from 0.26.0, on top of it before") {
    for (const char* v : {"0.19.1", "0.20.0", "0.21.0", "0.25.0", "0.25.1",
                          // main: on at v0.23.1rc0-998 (PR #47366), off at -1057 (PR #48440), on at -1150 (PR #48526)
                          "0.23.1rc1.dev997", "0.23.1rc1.dev1057", "0.23.1rc1.dev1149"}) {
        CAPTURE(v);
        CHECK_FALSE(vllm_release(v)->cudagraph_profiling_rocm);
    }
    for (const char* v :
         {"0.23.1rc1.dev998", "0.23.1rc1.dev1056", "0.23.1rc1.dev1150", "0.26.0rc1", "0.26.0", "0.27.1", ""}) {
        CAPTURE(v);
        CHECK(vllm_release(v)->cudagraph_profiling_rocm);
    }

    // Llama-3.1-8B at 32K on an MI300X (192 GiB x 0.92 = 189,665,755,791 B), activation 1 GiB and non-torch 512 MiB
    // given; 16,094,076,928 B of weights and RoPE cache; 2 MiB blocks. 1,024 sequences capture 51 sizes: 51 x 32 x
    // 0.5 MiB = 816 MiB (855,638,016 B) of graphs.
    BudgetInputs in;
    in.gpu = "mi300x";
    in.activation_bytes = GiB;
    in.overhead_bytes = GiB / 2;
    in.context = 32768;
    in.engine_version = "0.25.0";
    BudgetResult old = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(old.requested_bytes == 189665755791);
    CHECK(old.cudagraph_bytes == 0);
    CHECK(old.kv_pool_bytes == 171961066127);  // 189,665,755,791 - 16,094,076,928 - 1.5 GiB
    CHECK(old.capacity.num_blocks == 81997);
    CHECK(old.log_lines == std::vector<std::string>{"GPU KV cache size: 1,311,952 tokens",
                                                    "Maximum concurrency for 32,768 tokens per request: 40.04x"});
    const Message* said = nullptr;
    for (const auto& n : old.notes)
        if (n.code == "vllm_cudagraphs_uncounted_rocm") said = &n;
    REQUIRE(said);
    CHECK(said->param("bytes") == "816.00 MiB");
    in.engine_version = "0.26.0";
    BudgetResult cur = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(cur.cudagraph_bytes == 855638016);
    CHECK(cur.kv_pool_bytes == 171105428111);  // - 816 MiB
    CHECK(cur.capacity.num_blocks == 81589);
    CHECK(cur.log_lines == std::vector<std::string>{"GPU KV cache size: 1,305,424 tokens",
                                                    "Maximum concurrency for 32,768 tokens per request: 39.84x"});
    for (const auto& n : cur.notes) CHECK(n.code.rfind("vllm_cudagraphs_uncounted", 0) == std::string::npos);
    // The same release on an NVIDIA GPU already counted them.
    in.gpu = "h100";
    in.engine_version = "0.25.0";
    CHECK(budget_at("meta-llama/Llama-3.1-8B", in).cudagraph_bytes == 855638016);
    // Before 0.20.0 ROCm's note, not the CUDA one (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS did nothing on ROCm).
    in.gpu = "mi300x";
    in.engine_version = "0.19.1";
    bool rocm_note = false;
    for (const auto& n : budget_at("meta-llama/Llama-3.1-8B", in).notes)
        rocm_note |= n.code == "vllm_cudagraphs_uncounted_rocm";
    CHECK(rocm_note);
}

// A release past the newest kvbudget has read takes the newest rules, and says so; one it knows is said as is.
TEST_CASE("vLLM --engine-version past the newest release read: the newest rules, and a note") {
    auto newer = [](const char* v) { return vllm_release(v)->newer_than_known; };
    CHECK(std::string(kVllmNewestRelease) == "0.31.0");
    CHECK_FALSE(newer(""));
    CHECK_FALSE(newer("0.31.0"));
    CHECK_FALSE(newer("0.31.1rc1.dev173+g8cbd5d030"));
    CHECK(newer("0.32.0"));
    CHECK(newer("0.32.0rc1"));
    CHECK(newer("1.0.0"));
    CHECK(vllm_release("0.32.0")->kv_cache_dtypes == vllm_release("")->kv_cache_dtypes);
    CHECK(vllm_release("0.32.0")->gpu_memory_utilization == 0.92);

    BudgetInputs in;
    in.gpu = "rtx-4090";
    in.context = 32768;
    in.engine_version = "0.32.0";
    BudgetResult r = budget_at("meta-llama/Llama-3.1-8B", in);
    in.engine_version = "";
    BudgetResult cur = budget_at("meta-llama/Llama-3.1-8B", in);
    CHECK(r.kv_pool_bytes == cur.kv_pool_bytes);
    CHECK(r.log_lines == cur.log_lines);
    bool said = false;
    for (const auto& n : r.notes)
        said |= n.code == "vllm_version_newer" && n.param("version") == "0.32.0" && n.param("newest") == "0.31.0";
    CHECK(said);
    auto cli = kvb::test::run_cli("budget " + kvb::test::config_path("meta-llama--Llama-3.1-8B") +
                                  " --gpu rtx-4090 --max-model-len 32768 --engine-version 0.32.0");
    CHECK(cli.out.find("note: vLLM 0.32.0 is newer than the newest release kvbudget has read (0.31.0): its numbers "
                       "follow 0.31.0's rules\n") != std::string::npos);
}
