// The kvbudget binary itself: exit codes, messages, and the inspect / kv commands.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "fixtures.h"

using kvb::test::config_path;
using kvb::test::run_cli;

TEST_CASE("exit status: 0 success, 1 refused input, 2 usage") {
    CHECK(run_cli("--help").status == 0);
    CHECK(run_cli("").status == 2);
    auto r = run_cli("frobnicate");
    CHECK(r.status == 2);
    CHECK(r.out.rfind("kvbudget: error: unknown command 'frobnicate'", 0) == 0);
    r = run_cli("kv");
    CHECK(r.status == 2);
    CHECK(r.out.rfind("kvbudget: error: kv takes one CONFIG (a config.json or .gguf path, or - for stdin)\n", 0) == 0);
    r = run_cli("kv " + config_path("Qwen--Qwen3-8B") + " --context");
    CHECK(r.status == 2);
    CHECK(r.out == "kvbudget: error: --context needs a value\n");
    r = run_cli("kv " + config_path("Qwen--Qwen3-8B") + " --contxt 5");
    CHECK(r.status == 2);
    CHECK(r.out == "kvbudget: error: unknown option --contxt\n");
    r = run_cli("kv /nonexistent/config.json");
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: cannot read /nonexistent/config.json\n");
    r = run_cli("kv " + config_path("Qwen--Qwen3-8B") + " --kv-dtype fp4");
    CHECK(r.status == 1);
    // vLLM's argparse refusal, with the newest release's CacheDType spellings (sorted, as literal_to_kwargs gives
    // them).
    CHECK(
        r.out ==
        "kvbudget: error: vllm serve: error: argument --kv-cache-dtype: invalid choice: 'fp4' (choose from 'auto', "
        "'bfloat16', 'float16', 'fp8', 'fp8_ds_mla', 'fp8_e4m3', 'fp8_e5m2', 'fp8_inc', 'fp8_per_token_head', "
        "'int4_per_token_head', 'int8_per_token_head', 'nvfp4', 'nvfp4_4over6', 'nvfp4_ds_mla', 'turboquant_3bit_nc', "
        "'turboquant_4bit_nc', 'turboquant_k3v4_nc', 'turboquant_k8v4')\n");
    r = run_cli("kv " + config_path("Qwen--Qwen3-8B") + " --context -5");
    CHECK(r.status == 1);
    CHECK(r.out ==
          "kvbudget: error: --context: '-5' is not a context length; write tokens as 32768, 32,768, 32K (= 32,768) or "
          "1M (= 1,048,576)\n");
    r = run_cli("inspect - < /dev/null");
    CHECK(r.status == 1);
    CHECK(r.out == "kvbudget: error: stdin: config.json is not valid JSON (syntax error near byte 1)\n");
}

TEST_CASE("kv --json: the seed numbers, the table, the ladder and the crossover") {
    auto r = run_cli("kv " + config_path("Qwen--Qwen3-8B") + " --context 32768 --json", false);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["model"] == "Qwen/Qwen3-8B");
    CHECK(j["bytes_per_token"] == 147456);
    CHECK(j["bytes_total"] == int64_t(147456) * 32768);
    CHECK(j["head_variants"][0]["variant"] == "MHA");
    CHECK(j["head_variants"][0]["bytes_per_token"] == 589824);
    CHECK(j["head_variants"][2]["variant"] == "MQA");
    CHECK(j["head_variants"][2]["bytes_per_token"] == 18432);
    CHECK(j["context_table"].size() == 5);
    CHECK(j["context_table"][4]["context"] == 40960);
    CHECK(j["weights_bytes"] == 16'381'470'720);  // 8,190,735,360 parameters in bf16
    CHECK(j["crossover_context"] == 111'094);     // first context whose KV exceeds them
    CHECK(j["ladder"][2]["step"] == "fp8");
    CHECK(j["ladder"][2]["kv_bytes"] == int64_t(73728) * 32768);
}

TEST_CASE("kv reads a config from stdin and names it stdin") {
    auto r = run_cli("kv - --context 1024 --json < " + config_path("meta-llama--Llama-3.1-8B"), false);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["model"] == "stdin");
    CHECK(j["bytes_total"] == 128 * 1024 * 1024);
}

TEST_CASE("inspect --json lists every layer and the notes") {
    auto r = run_cli("inspect " + config_path("google--gemma-3-4b-it") + " --json", false);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["num_layers"] == 34);
    CHECK(j["layer_counts"]["sliding"] == 29);
    CHECK(j["layers"][5]["kind"] == "full");
    CHECK(j["layers"][0]["window"] == 1024);
    CHECK(j["notes"].size() == 7);
}

// Issue 8: the engine lines' --json carry their notes as Messages, the same objects
// as every other answer, and say in words what the text output prints as "note:".
TEST_CASE("vllm and llamacpp --json notes are Messages with the text the CLI prints") {
    for (const std::string& cmd :
         {"vllm " + config_path("google--gemma-3-4b-it") + " --kv-cache-memory 4GiB --max-model-len 8192",
          "llamacpp " + config_path("google--gemma-3-4b-it") + " -c 8192"}) {
        INFO(cmd);
        auto r = run_cli(cmd + " --json", false);
        REQUIRE(r.status == 0);
        auto j = nlohmann::json::parse(r.out);
        auto text = run_cli(cmd + " 2>&1 >/dev/null | cat", false);  // stderr alone: the notes
        std::string expect;
        REQUIRE(j["notes"].size() >= 1);
        for (const auto& n : j["notes"]) {
            CHECK(n["code"].is_string());
            CHECK(n["params"].is_object());
            expect += "note: " + n["text"].get<std::string>() + "\n";
        }
        CHECK(text.out == expect);
        CHECK(j["model"] == "google/gemma-3-4b-it");
    }
    auto v = nlohmann::json::parse(
        run_cli("vllm " + config_path("Qwen--Qwen3-8B") + " --kv-cache-memory 1GiB --json", false).out);
    CHECK(v["fits"] == false);
    CHECK(v["refusal"]["code"] == "vllm_kv_too_small");
    CHECK(v["error"].get<std::string>().find("max seq len (40960)") != std::string::npos);
}

TEST_CASE("vllm --speculative-config: the EAGLE head's layer in the pool, as vllm#19996 printed") {
    const std::string base = "vllm " + config_path("meta-llama--Llama-3.1-8B-Instruct") +
                             " --kv-cache-memory 51.63GiB --max-model-len 131072 --log-format legacy";
    auto plain = run_cli(base, false);
    CHECK(plain.out.find("GPU KV cache size: 422,944 tokens") != std::string::npos);
    auto r =
        run_cli(base + R"( --speculative-config '{"method": "eagle", "model": "yuhuili/EAGLE-LLaMA3.1-Instruct-8B", )"
                       R"("num_speculative_tokens": 3}' --json)",
                false);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["tokens"] == 410128);
    bool noted = false;
    for (const auto& n : j["notes"]) noted |= n["code"] == "vllm_drafter_layers";
    CHECK(noted);
    CHECK(run_cli(base + " --speculative-config eagle", false).status == 2);
    CHECK(run_cli(base + " --draft-config " + config_path("meta-llama--Llama-3.2-1B-Instruct"), false).status == 2);
    auto need = run_cli(base + R"( --speculative-config '{"model": "meta-llama/Llama-3.2-1B-Instruct"}')");
    CHECK(need.status == 1);
    CHECK(need.out.find("give its config.json with --draft-config") != std::string::npos);
}

TEST_CASE("budget --gpu-memory A,B: GPUs that differ, one size each, into llama.cpp's --fit") {
    // Qwen3-8B Q4_K_M over a 24 GB and a 12 GB card: the fit sees each one's free memory, the
    // default split follows it (more slots on the larger card), the rest counts 12 GB each.
    auto r = run_cli("budget " + config_path("Qwen--Qwen3-8B") +
                         " --engine llamacpp --gpu-memory 24GB,12GB --max-model-len 32768 --json",
                     false);
    REQUIRE(r.status == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["inputs"]["gpu_count"] == 2);
    CHECK(j["inputs"]["gpu_memory_each"] == nlohmann::json::array({24000000000LL, 12000000000LL}));
    CHECK(j["budget"]["gpu"]["total_bytes"] == 12000000000LL);
    const auto& f = j["budget"]["llamacpp"]["fit"];
    // 512 MiB of runtime off each card's usable memory.
    CHECK(f["device_free_bytes"] == nlohmann::json::array({24000000000LL - 536870912, 12000000000LL - 536870912}));
    CHECK(f["log_lines"][1].get<std::string>().rfind("common_params_fit_impl:   - GPU0:  22888 total,", 0) == 0);
    CHECK(f["log_lines"][2].get<std::string>().rfind("common_params_fit_impl:   - GPU1:  11444 total,", 0) == 0);
    // A count that disagrees with the list, and a bad size, are refused by name.
    auto bad =
        run_cli("budget " + config_path("Qwen--Qwen3-8B") + " --engine llamacpp --gpu-memory 24GB,12GB --gpu-count 3");
    CHECK(bad.status == 1);
    CHECK(bad.out.find("--gpu-memory lists 2 sizes but there are 3 GPUs") != std::string::npos);
    auto junk = run_cli("budget " + config_path("Qwen--Qwen3-8B") + " --engine llamacpp --gpu-memory 24GB,lots");
    CHECK(junk.status == 1);
    CHECK(junk.out.find("kvbudget: error: --gpu-memory: ") == 0);
}
