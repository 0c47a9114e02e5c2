// The KV cache a pre-quantized checkpoint declares, and the hf_quant_config.json of older ModelOpt
// exports, as vLLM reads them:
//  - transformers_utils/config.py: with no quantization_config in config.json, the file
//    hf_quant_config.json beside it becomes the config's quantization_config (ModelOpt 0.29 and before).
//  - utils/torch_utils.py get_kv_cache_quant_algo_string / resolve_kv_cache_dtype_string, called by
//    arg_utils.py create_engine_config (PR #30785, first in 0.14.0): --kv-cache-dtype auto becomes a
//    ModelOpt checkpoint's kv_cache_scheme / kv_cache_quant_algo, mapped by MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP
//    (fp8 -> fp8_e4m3; nvfp4 from 0.20.0, before which vLLM warns and keeps auto).
//  - model_executor/layers/attention/attention.py (PR #30141, first in 0.15.0): a compressed-tensors
//    kv_cache_scheme makes every Attention layer cache fp8, whatever --kv-cache-dtype says until PR #42782
//    (0.22.0) left an explicit choice alone.
// Read at tags v0.13.0, v0.14.0, v0.19.0, v0.22.0 and v0.27.1 of vllm-project/vllm.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>

#include "base/message.h"
#include "budget/budget.h"
#include "fixtures.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/config_reader.h"
#include "model/quant.h"
#include "report/answer.h"

using kvb::test::fixture;
using kvb::test::fixture_text;

namespace {

std::string hf_quant(const std::string& name) {
    return kvb::test::read_file(std::string(KVB_FIXTURES) + "/hf_quant_config/" + name + ".json");
}

kvb::DeclaredKv declared(const std::string& qc, const std::string& method) {
    return kvb::read_declared_kv(kvb::parse_json_dom(qc), method);
}

// Qwen/Qwen3-32B with the quantization_config of a ModelOpt FP8 export (the one test_quant.cpp reads):
// config_groups, quant_algo FP8, producer modelopt, and its KV cache as kv_cache_scheme "FP8".
kvb::ModelSpec qwen3_32b_modelopt_fp8() {
    auto j = kvb::parse_json_dom(fixture_text("Qwen/Qwen3-32B"));
    j["quantization_config"] = kvb::parse_json_dom(R"({"config_groups": {"group_0": {"input_activations":
        {"dynamic": false, "num_bits": 8, "type": "float"}, "weights": {"dynamic": false, "num_bits": 8,
        "type": "float"}}}, "ignore": ["lm_head"], "quant_algo": "FP8", "kv_cache_scheme": "FP8",
        "producer": {"name": "modelopt", "version": "0.29.0"}})");
    auto r = kvb::parse_config(j.dump(), "Qwen/Qwen3-32B-FP8");
    REQUIRE(r.ok());
    return r.value();
}

kvb::BudgetResult vllm_on(const kvb::ModelSpec& m, const std::string& gpu, int64_t ctx, const std::string& version = "",
                          const std::string& kv = "") {
    kvb::BudgetInputs in;
    in.gpu = gpu;
    in.context = ctx;
    in.engine_version = version;
    in.kv_cache_dtype = kv;
    auto r = kvb::compute_budget(m, in);
    REQUIRE(r.ok());
    return r.value();
}

bool has_note(const kvb::BudgetResult& r, const std::string& code) {
    for (const kvb::Message& n : r.notes)
        if (n.code == code) return true;
    return false;
}

}  // namespace

TEST_CASE("checkpoint KV: what each quantization_config declares") {
    // ModelOpt: the first truthy of quantization.kv_cache_scheme, kv_cache_scheme, quantization.kv_cache_quant_algo,
    // kv_cache_quant_algo; strings lower-cased.
    auto d = declared(hf_quant("modelopt-fp8"), "modelopt");
    CHECK(d.source == "modelopt");
    CHECK(d.dtype == "fp8");
    CHECK(d.written == "FP8");
    d = declared(R"({"quant_method": "modelopt", "kv_cache_scheme": "fp8", "kv_cache_quant_algo": "NVFP4"})",
                 "modelopt");
    CHECK(d.dtype == "fp8");
    d = declared(R"({"quantization": {"kv_cache_scheme": {"dynamic": false, "num_bits": 8, "type": "float"}}})",
                 "modelopt");
    CHECK(d.dtype == "fp8");
    CHECK(d.written == "num_bits 8, type float, dynamic false");
    d = declared(R"({"kv_cache_scheme": {"num_bits": 4, "type": "float"}})", "modelopt_fp4");
    CHECK(d.dtype == "nvfp4");
    // A dict that is neither: vLLM warns and keeps auto (dtype ""); "dynamic" must be false for fp8.
    d = declared(R"({"kv_cache_scheme": {"dynamic": true, "num_bits": 8, "type": "float"}})", "modelopt");
    CHECK(d.source == "modelopt");
    CHECK(d.dtype.empty());
    d = declared(R"({"quantization": {"kv_cache_quant_algo": "INT8"}})", "modelopt");
    CHECK(d.dtype.empty());
    CHECK(d.written == "INT8");
    // null, "" and {} are Python-falsy: nothing declared.
    // (nvidia's DeepSeek-R1-FP4 hf_quant_config.json: kv_cache_quant_algo null)
    CHECK(declared(R"({"producer": {"name": "modelopt", "version": "0.23.0"}, "quantization": {"quant_algo": "NVFP4",
                       "kv_cache_quant_algo": null, "group_size": 16}})",
                   "modelopt")
              .source.empty());
    CHECK(declared(R"({"kv_cache_scheme": {}, "kv_cache_quant_algo": ""})", "modelopt").source.empty());
    // compressed-tensors: any kv_cache_scheme that is not null is an fp8 cache.
    d = declared(R"({"quant_method": "compressed-tensors", "kv_cache_scheme": {"num_bits": 8, "type": "float",
                     "strategy": "tensor", "dynamic": false, "observer": "minmax"}})",
                 "compressed-tensors");
    CHECK(d.source == "compressed-tensors");
    CHECK(d.dtype == "fp8");
    CHECK(d.written == "num_bits 8, type float, strategy tensor, dynamic false");
    CHECK(declared(R"({"kv_cache_scheme": null})", "compressed-tensors").source.empty());
    // Other methods declare nothing vLLM reads for the cache.
    CHECK(declared(R"({"kv_cache_quant_algo": "FP8"})", "fp8").source.empty());
}

TEST_CASE("checkpoint KV: hf_quant_config.json stands in for a missing quantization_config") {
    const std::string llama = fixture_text("meta-llama/Llama-3.1-8B-Instruct");
    auto r = kvb::parse_config(llama, "nvidia/Llama-3.1-8B-Instruct-FP8", hf_quant("modelopt-fp8"));
    REQUIRE(r.ok());
    const kvb::ModelSpec& m = r.value();
    CHECK(m.quant.from_hf_quant_config);
    CHECK(m.quant.method == "modelopt");
    CHECK(m.quant.kv.source == "modelopt");
    CHECK(m.quant.kv.dtype == "fp8");
    bool said = false;
    for (const kvb::Message& n : m.notes)
        if (n.code == "hf_quant_config_read")
            said = kvb::render_english(n) ==
                   "quantization from hf_quant_config.json (modelopt): config.json has no quantization_config, and "
                   "vLLM reads this file then";
    CHECK(said);
    // The weights are the fp8 checkpoint's: 8.46 GiB in all against 14.96 GiB of bf16.
    const kvb::BudgetResult q = vllm_on(m, "rtx-4090", 32768);
    CHECK(q.weights.bytes == 9081202432);
    const kvb::BudgetResult plain = vllm_on(fixture("meta-llama/Llama-3.1-8B-Instruct"), "rtx-4090", 32768);
    CHECK(plain.weights.bytes > 16000000000);

    // A config.json that has its own quantization_config keeps it: vLLM reads the file only without one.
    auto v3 = kvb::parse_config(fixture_text("deepseek-ai/DeepSeek-V3"), "deepseek-ai/DeepSeek-V3",
                                hf_quant("modelopt-nvfp4"));
    REQUIRE(v3.ok());
    CHECK(v3->quant.method == "fp8");
    CHECK_FALSE(v3->quant.from_hf_quant_config);
    CHECK(v3->quant.kv.source.empty());

    // A file that is not a JSON object is refused by its name.
    auto bad = kvb::parse_config(llama, "m", "{\"producer\": ");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("hf_quant_config.json") != std::string::npos);
    auto arr = kvb::parse_config(llama, "m", "[1, 2]");
    REQUIRE_FALSE(arr.ok());
    CHECK(arr.error().message == "m: hf_quant_config.json must be an object, got an array");
}

TEST_CASE("checkpoint KV: vLLM serves a ModelOpt checkpoint's declared cache under auto, from 0.14.0") {
    const kvb::ModelSpec m = qwen3_32b_modelopt_fp8();
    // Qwen3-32B: 64 layers x 8 KV heads x 128 x (K + V): 131,072 elements a token, 1 byte each in fp8_e4m3.
    const kvb::BudgetResult r = vllm_on(m, "h100-sxm", 32768);
    CHECK(r.kv_cache_dtype == "fp8_e4m3");
    CHECK(r.capacity.log_lines.at(0) ==
          "GPU KV cache size: 285,728 tokens, Maximum concurrency for 32,768 tokens per request: 8.72x");
    CHECK(r.command == "vllm serve Qwen/Qwen3-32B-FP8 --max-model-len 32768");  // auto: vLLM's own default does it
    REQUIRE(has_note(r, "vllm_kv_declared"));
    for (const kvb::Message& n : r.notes)
        if (n.code == "vllm_kv_declared")
            CHECK(kvb::render_english(n) ==
                  "vLLM caches KV as fp8_e4m3 under --kv-cache-dtype auto: the checkpoint's ModelOpt quantization "
                  "declares its KV cache as FP8");
    // The answer's KV numbers are the pool's dtype: one token is 131,072 bytes, not bf16's 262,144.
    kvb::BudgetInputs in;
    in.gpu = "h100-sxm";
    in.context = 32768;
    auto a = kvb::compute_answer(m, in);
    REQUIRE(a.ok());
    CHECK(a->metrics.kv_bytes_per_token == 131072);
    CHECK(a->kv.ideal.bytes_per_token == 131072);
    CHECK_FALSE(a->advice);  // already 8-bit

    // 0.13.0 has no such resolution: bfloat16, half the tokens.
    const kvb::BudgetResult old = vllm_on(m, "h100-sxm", 32768, "0.13.0");
    CHECK(old.kv_cache_dtype == "bfloat16");
    CHECK(old.capacity.log_lines.at(0) == "GPU KV cache size: 142,896 tokens");
    CHECK_FALSE(has_note(old, "vllm_kv_declared"));
    // An explicit choice wins.
    const kvb::BudgetResult bf = vllm_on(m, "h100-sxm", 32768, "", "bfloat16");
    CHECK(bf.kv_cache_dtype == "bfloat16");
    CHECK(bf.command == "vllm serve Qwen/Qwen3-32B-FP8 --max-model-len 32768 --kv-cache-dtype bfloat16");
}

TEST_CASE("checkpoint KV: a declared NVFP4 cache is sized from 0.21.0 on a B200, refused where vLLM refuses it") {
    auto r = kvb::parse_config(fixture_text("meta-llama/Llama-3.1-8B-Instruct"), "nvidia/Llama-3.1-8B-Instruct-FP4",
                               hf_quant("modelopt-nvfp4"));
    REQUIRE(r.ok());
    const kvb::ModelSpec& m = r.value();
    CHECK(m.quant.kv.dtype == "nvfp4");
    // MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP "nvfp4" -> "nvfp4": 36,864 B a token (32 x 8 x 2 x (64 + 8)), and each of
    // the 32 FlashInferImpls keeps 16,384 x 32 x 128 B of fp8 output buffer (test_nvfp4_kv.cpp).
    const kvb::BudgetResult b200 = vllm_on(m, "b200", 32768);
    CHECK(b200.kv_cache_dtype == "nvfp4");
    CHECK_FALSE(b200.startup_refused);
    CHECK(b200.capacity.log_lines.at(0) ==
          "GPU KV cache size: 4,438,784 tokens, Maximum concurrency for 32,768 tokens per request: 135.46x");
    CHECK(b200.command == "vllm serve nvidia/Llama-3.1-8B-Instruct-FP4 --max-model-len 32768");
    for (const kvb::Message& n : b200.notes)
        if (n.code == "vllm_kv_declared")
            CHECK(kvb::render_english(n) ==
                  "vLLM caches KV as nvfp4 under --kv-cache-dtype auto: the checkpoint's ModelOpt quantization "
                  "declares its KV cache as NVFP4");
    CHECK(has_note(b200, "vllm_kv_declared"));
    kvb::BudgetInputs in;
    in.gpu = "b200";
    in.context = 32768;
    auto a = kvb::compute_answer(m, in);
    REQUIRE(a.ok());
    CHECK(a->metrics.kv_bytes_per_token == 36864);
    CHECK(a->kv.ideal.bytes_per_token == 36864);
    // `kvbudget kv` reads the same declaration.
    auto kv = kvb::engine_kv(m, "vllm", "auto");
    REQUIRE(kv.ok());
    CHECK(kvb::ideal_kv(kv->view, kv->dtypes).bytes_per_token == 36864);

    // On an RTX 4090 (8.9) no backend takes it: vLLM stops at start-up; the budget says so and keeps its numbers.
    const kvb::BudgetResult ada = vllm_on(m, "rtx-4090", 32768);
    CHECK(ada.startup_refused);
    CHECK(ada.verdict_reason.code == "vllm_nvfp4_kv_gpu");
    // 0.20.x maps it to nvfp4 but lists it in no backend.
    CHECK(vllm_on(m, "b200", 32768, "0.20.0").verdict_reason.code == "vllm_nvfp4_kv_no_backend");
    // 0.19.0's map has fp8 alone: "Unknown kv_cache_quant_algo", auto (bfloat16).
    const kvb::BudgetResult old = vllm_on(m, "rtx-4090", 32768, "0.19.0");
    CHECK(old.kv_cache_dtype == "bfloat16");
    CHECK(has_note(old, "vllm_kv_declared_unmapped"));
    // An explicit choice wins.
    CHECK(vllm_on(m, "rtx-4090", 32768, "", "fp8").kv_cache_dtype == "fp8");
}

// poolside/Laguna-XS.2-FP8 (a real compressed-tensors checkpoint) has a kv_cache_scheme: fp8 tensor scales.
TEST_CASE("checkpoint KV: compressed-tensors kv_cache_scheme caches fp8 from 0.15.0, over the flag until 0.22.0") {
    const kvb::ModelSpec m = fixture("poolside/Laguna-XS.2-FP8");
    CHECK(m.quant.kv.source == "compressed-tensors");
    const kvb::BudgetResult now = vllm_on(m, "h100-sxm", 32768);
    CHECK(now.kv_cache_dtype == "fp8");
    // The repository ships code (auto_map) for a model_type transformers 4.48.2 lacks (vllm_needs_remote_code).
    CHECK(now.command == "vllm serve poolside/Laguna-XS.2-FP8 --max-model-len 32768 --trust-remote-code");
    for (const kvb::Message& n : now.notes)
        if (n.code == "vllm_kv_declared_scheme")
            CHECK(kvb::render_english(n) ==
                  "vLLM caches KV as fp8 under --kv-cache-dtype auto: the checkpoint's compressed-tensors quantization "
                  "has a kv_cache_scheme (num_bits 8, type float, strategy tensor, dynamic false)");
    CHECK(has_note(now, "vllm_kv_declared_scheme"));
    CHECK(vllm_on(m, "h100-sxm", 32768, "0.14.0").kv_cache_dtype == "bfloat16");
    // 0.15 to 0.21: fp8 whatever was asked (the command still says what the user asked).
    const kvb::BudgetResult forced = vllm_on(m, "h100-sxm", 32768, "0.21.0", "bfloat16");
    CHECK(forced.kv_cache_dtype == "fp8");
    CHECK(has_note(forced, "vllm_kv_scheme_over_flag"));
    CHECK(forced.capacity.log_lines.at(0) == "GPU KV cache size: 1,054,154 tokens");
    // A spelling the release refuses is refused in its words, not made fp8 by the scheme.
    kvb::BudgetInputs bad;
    bad.gpu = "h100-sxm";
    bad.context = 32768;
    bad.engine_version = "0.21.0";
    bad.kv_cache_dtype = "float32";
    auto refused = kvb::compute_budget(m, bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.rfind("vllm serve: error: argument --kv-cache-dtype: invalid choice: 'float32'", 0) ==
          0);
    const kvb::BudgetResult chosen = vllm_on(m, "h100-sxm", 32768, "0.22.0", "bfloat16");
    CHECK(chosen.kv_cache_dtype == "bfloat16");
    CHECK(chosen.capacity.log_lines.at(0) == "GPU KV cache size: 527,072 tokens");
}

// The answer's KV section follows the pool's dtype whatever set it (before, DeepSeek-V4's fp8_ds_mla
// pool was drawn with bf16's bytes a token, twice the cache).
TEST_CASE("checkpoint KV: the answer's bytes a token are the pool's for DeepSeek-V4 too") {
    kvb::BudgetInputs in;
    in.gpu = "h200";
    in.gpu_count = 8;
    in.context = 32768;
    auto a = kvb::compute_answer(fixture("deepseek-ai/DeepSeek-V4-Flash"), in);
    REQUIRE(a.ok());
    REQUIRE(a->budget);
    CHECK(a->budget->kv_cache_dtype == "fp8_ds_mla");
    CHECK(a->kv.ideal.bytes_per_token == 3440);
}

TEST_CASE("checkpoint KV: the CLI reads hf_quant_config.json beside a model folder's config.json") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "kvbudget-hf-quant" / "Llama-3.1-8B-Instruct-FP8";
    fs::create_directories(dir);
    fs::copy_file(kvb::test::config_path("meta-llama--Llama-3.1-8B-Instruct"), dir / "config.json",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(std::string(KVB_FIXTURES) + "/hf_quant_config/modelopt-fp8.json", dir / "hf_quant_config.json",
                  fs::copy_options::overwrite_existing);
    auto run = kvb::test::run_cli("budget " + (dir / "config.json").string() + " --gpu rtx-4090 --max-model-len 32K");
    CHECK(run.status == 0);
    CHECK(run.out.find("  weights per GPU       8.49 GiB (fp8, 8,030,261,248 params, checkpoint 8.46 GiB in all)\n") !=
          std::string::npos);
    CHECK(run.out.find("  KV cache pool         11.22 GiB per GPU, fp8_e4m3\n") != std::string::npos);
    // A file named otherwise is the config alone.
    fs::copy_file(dir / "config.json", dir / "other.json", fs::copy_options::overwrite_existing);
    auto alone = kvb::test::run_cli("budget " + (dir / "other.json").string() + " --gpu rtx-4090 --max-model-len 32K");
    CHECK(alone.out.find("bfloat16") != std::string::npos);
    fs::remove_all(dir.parent_path());
}
