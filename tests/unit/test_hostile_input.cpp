// Issue 14: inputs built to give an answer that is wrong and looks right. Each case is a
// class of input (not one value), checked against the exact answer or refusal.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/units.h"
#include "budget/budget.h"
#include "engines/llamacpp.h"
#include "engines/vllm.h"
#include "fixtures.h"
#include "gguf_builder.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/config_reader.h"
#include "model/gguf_spec.h"
#include "model/weights.h"
#include "report/json.h"
#include "sim/workload.h"

using namespace kvb;
using nlohmann::json;

namespace {

bool same_layer(const Layer& a, const Layer& b) {
    return a.kind == b.kind && a.kv_heads == b.kv_heads && a.k_head_dim == b.k_head_dim &&
           a.v_head_dim == b.v_head_dim && a.window == b.window && a.kv_lora_rank == b.kv_lora_rank &&
           a.qk_rope_head_dim == b.qk_rope_head_dim && a.state.conv_kernel == b.state.conv_kernel &&
           a.state.d_inner == b.state.d_inner && a.state.n_groups == b.state.n_groups &&
           a.state.d_state == b.state.d_state && a.state.heads == b.state.heads;
}

std::string error_of(const std::string& text, const std::string& name = "m") {
    auto r = parse_config(text, name);
    return r ? std::string("(parsed)") : r.error().message;
}

}  // namespace

TEST_CASE("issue 14.1: a num_key_value_heads list of one value is exactly the scalar, for every real config") {
    int converted = 0;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(KVB_FIXTURES) + "/configs")) {
        if (entry.path().extension() != ".json") continue;
        const std::string stem = entry.path().stem().string();
        INFO(stem);
        json j = parse_json_text(test::read_file(entry.path().string()), stem).value();
        json* text = &j;
        for (const char* nested : {"text_config", "llm_config", "language_config"})
            if (j.contains(nested) && j[nested].is_object() && !j[nested].empty()) {
                text = &j[nested];
                break;
            }
        if (!text->contains("num_key_value_heads") || !(*text)["num_key_value_heads"].is_number_integer()) continue;
        const auto base = parse_config(j.dump(), stem);
        REQUIRE(base);
        // Nemotron-H's 2026 configs give the layer count only as the length of layers_block_type.
        const int64_t n = text->contains("num_hidden_layers") ? (*text)["num_hidden_layers"].get<int64_t>()
                                                              : int64_t((*text)["layers_block_type"].size());
        (*text)["num_key_value_heads"] =
            json(std::vector<int64_t>(static_cast<size_t>(n), (*text)["num_key_value_heads"].get<int64_t>()));
        const auto listed = parse_config(j.dump(), stem);
        REQUIRE(listed);
        REQUIRE(listed->layers.size() == base->layers.size());
        for (size_t i = 0; i < base->layers.size(); ++i) CHECK(same_layer(listed->layers[i], base->layers[i]));
        CHECK(listed->family == base->family);
        ++converted;
    }
    // Mistral-7B-v0.1 (sliding), Llama-4-Scout (chunked), gpt-oss-20b, Qwen3-Next (linear),
    // Nemotron-H (Mamba), Gemma 3 ... all among them.
    CHECK(converted >= 30);
}

TEST_CASE("issue 14.1: a varying list keeps the layout and is checked entry by entry like the scalar") {
    // gpt-oss pattern (sliding / full alternating) with a per-layer list that varies.
    const char* varying = R"({"model_type":"mistral","num_hidden_layers":3,"num_attention_heads":8,"hidden_size":512,
        "sliding_window":4096,"num_key_value_heads":[2,4,0]})";
    auto m = parse_config(varying, "m");
    REQUIRE(m);
    REQUIRE(m->layers.size() == 3);
    CHECK(m->layers[0].kind == LayerKind::Sliding);
    CHECK(m->layers[0].kv_heads == 2);
    CHECK(m->layers[1].kind == LayerKind::Sliding);
    CHECK(m->layers[1].kv_heads == 4);
    CHECK(m->layers[2].kind == LayerKind::None);
    CHECK(error_of(R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
        "num_key_value_heads":[3,3]})") ==
          "m: num_attention_heads (8) is not a multiple of num_key_value_heads[0] (3)");
}

TEST_CASE("issue 14.2: a parameter count far from the config's is refused, or set aside when it is the Hub's") {
    const ModelSpec m = test::fixture("meta-llama/Llama-3.1-70B");
    auto fmt = weight_format("bf16", m);
    REQUIRE(fmt);
    auto w = weight_bytes(m, fmt.value(), 70);
    REQUIRE(!w);
    CHECK(w.error().message ==
          "meta-llama/Llama-3.1-70B: the given parameter count 70 is more than 2x away from the 70,553,706,496 its "
          "config describes; give the total parameter count (70B is 70000000000)");
    auto hub = weight_bytes(m, fmt.value(), 1, 1, 1, /*given_is_advisory=*/true);
    REQUIRE(hub);
    CHECK(hub->params == 70'553'706'496);
    CHECK(hub->active_bytes > 0);
    CHECK(render_english(hub->notes.front()) ==
          "the Hub's parameter count 1 for meta-llama/Llama-3.1-70B is more than 2x away from the 70,553,706,496 its "
          "config describes: set aside, the config's count is used");
    // The page's JSON inputs say where the count came from.
    auto in = budget_inputs_from_json(R"({"gpu":"rtx-4090","params":1,"params_from_hub":true})");
    REQUIRE(in);
    CHECK(in->params_from_hub);
    auto r = test::run_cli("budget " + test::config_path("meta-llama--Llama-3.1-70B") + " --gpu rtx-4090 --params 70");
    CHECK(r.status != 0);
    CHECK(r.out.find("kvbudget: error: meta-llama/Llama-3.1-70B: the given parameter count 70 is more than 2x away") !=
          std::string::npos);
}

TEST_CASE("issue 14.3: MiniMax-M1's lightning layers have no conv state, not a negative one") {
    const ModelSpec m = test::fixture("MiniMaxAI/MiniMax-M1-80k");
    LlamaOptions o;
    o.n_ctx = 4096;
    o.n_seq_max = 4;
    auto L = llamacpp_layout(m, o);
    REQUIRE(L);
    CHECK(L->recurrent.r_bytes == 0);
    bool found = false;
    for (const auto& line : L->log_lines)
        if (line.find("llama_memory_recurrent") != std::string::npos) {
            found = true;
            CHECK(line.find("R (f32):    0.00 MiB") != std::string::npos);
        }
    CHECK(found);
}

TEST_CASE("issue 14.5: NaN or Infinity in an integer field is an error naming it, not \"not set\"") {
    CHECK(error_of(R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
        "num_key_value_heads":NaN})") == "m: num_key_value_heads must be an integer, got NaN");
    CHECK(
        error_of(R"({"model_type":"llama","num_hidden_layers":Infinity,"num_attention_heads":8,"hidden_size":512})") ==
        "m: num_hidden_layers must be an integer, got Infinity");
    CHECK(error_of(R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
        "sliding_window":-Infinity})") == "m: sliding_window must be an integer, got -Infinity");
    // Python's json.dumps writes them in float fields of real configs (Nemotron-H's
    // time_step_limit): those still parse.
    CHECK(parse_config(R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
        "num_key_value_heads":2,"time_step_limit":[0.0,Infinity]})",
                       "m"));
}

TEST_CASE("issue 14.6: trace timestamps centuries apart keep their span") {
    auto t = sim::parse_trace_csv(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "1500-01-01 00:00:00,10,10\n2084-01-01 00:00:00,10,10\n",
        "t.csv");
    REQUIRE(t);
    REQUIRE(t->size() == 2);
    // 584 years: 213,302 days.
    CHECK((*t)[1].arrival_s == doctest::Approx(213302.0 * 86400).epsilon(1e-12));
    auto tiny = sim::parse_trace_csv("arrived_at,num_prefill_tokens,num_decode_tokens\n1e-320,5,5\n", "t.csv");
    REQUIRE(tiny);
    CHECK((*tiny)[0].arrival_s == 0);
}

TEST_CASE("issue 14.7: llama.cpp -c 2^32 does not fit the 32-bit n_ctx") {
    const ModelSpec m = test::fixture("Qwen/Qwen3-8B");
    LlamaOptions o;
    o.n_ctx = int64_t(1) << 32;
    auto L = llamacpp_layout(m, o);
    REQUIRE(!L);
    CHECK(L.error().message == "-c 4294967296 does not fit llama.cpp's 32-bit n_ctx");
    o.n_ctx = (int64_t(1) << 32) - 1;  // pads to 2^32
    CHECK(!llamacpp_layout(m, o));
}

TEST_CASE("issue 14.8: counts that are not numbers say what is wrong") {
    CHECK(parse_count("32,768", "--x").value() == 32768);
    CHECK(parse_count("1_000_000", "--x").value() == 1000000);
    CHECK(parse_count(",", "--x").error().message ==
          "--x: ',' is not a count: a separator (, or _) goes only between groups of three digits, as in 32,768");
    CHECK(parse_count("_", "--x").error().code == "bad_value");
    CHECK(parse_count("1,2,3", "--x").error().message ==
          "--x: '1,2,3' is not a count: a separator (, or _) goes only between groups of three digits, as in 32,768");
    CHECK(!parse_count("1,000_000", "--x"));
    CHECK(parse_count("99999999999999999999", "--x").error().message ==
          "--x = 99999999999999999999 is too large (more than 18 digits)");
    CHECK(error_of(R"({"model_type":"llama","num_hidden_layers":1e999})") ==
          "m: config.json holds the number 1e999 (near byte 47), beyond what a double can hold");
    auto r = test::run_cli("inspect " + std::string(KVB_FIXTURES));
    CHECK(r.status != 0);
    CHECK(r.out ==
          "kvbudget: error: " + std::string(KVB_FIXTURES) + " is a directory: give the config.json file inside it\n");
}

TEST_CASE("issue 14.10: the CLI reads at most 8 MiB of config and refuses devices") {
    // 8 MiB also bounds the time a config can take: bench_large_configs times the
    // largest accepted (a 45 MB Nemotron-Super with 100,000 block_configs took 1.1 s).
    auto r = test::run_cli("inspect /dev/zero");
    CHECK(r.status != 0);
    CHECK(r.out ==
          "kvbudget: error: /dev/zero is not a regular file (a device or a socket): give a config.json file\n");
    r = test::run_cli("inspect - < /dev/zero");
    CHECK(r.status != 0);
    CHECK(r.out ==
          "kvbudget: error: stdin is larger than 8 MiB, the most kvbudget reads: a config.json is a few kilobytes\n");
}

TEST_CASE("issue 14.14: a vLLM refusal leads with one kvbudget: error: line, then vLLM's text") {
    auto r =
        test::run_cli("vllm " + test::config_path("Qwen--Qwen3-8B") + " --kv-cache-memory 8GiB --max-model-len 65536");
    CHECK(r.status == 1);
    CHECK(
        r.out.rfind("kvbudget: error: vLLM refuses these settings; its ValueError follows\nValueError: User-specified "
                    "max_model_len (65536) is greater than the derived",
                    0) == 0);
    r = test::run_cli("vllm " + test::config_path("Qwen--Qwen3-0.6B") + " --kv-cache-memory 1409286144");
    CHECK(r.status == 1);
    CHECK(r.out.rfind("kvbudget: error: vLLM refuses to start: one 40,960-token request needs", 0) == 0);
    CHECK(r.out.find("\nValueError: To serve at least one request") != std::string::npos);
}

TEST_CASE("issue 14.4: products of config values never wrap into a plausible-looking number") {
    CHECK(error_of(R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
        "num_key_value_heads":2,"vision_config":{"num_hidden_layers":1048575,"hidden_size":1048575}})") ==
          "m: vision_config describes more than 17,592,186,044,416 parameters, beyond any real vision tower");
    CHECK(error_of(R"({"model_type":"mamba2","num_hidden_layers":10000,"hidden_size":4096,"conv_kernel":4,
        "num_heads":65536,"head_dim":65536,"state_size":65536,"n_groups":1})") ==
          "m: the recurrent state of one sequence would exceed 1,099,511,627,776 elements, beyond any real model");
    // A window of 1 at 2^40 tokens: vLLM's int(concurrency x max_model_len) is huge, not negative.
    auto m = parse_config(R"({"model_type":"mistral","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
        "num_key_value_heads":2,"sliding_window":1,"max_position_embeddings":1099511627776})",
                          "m");
    REQUIRE(m);
    VllmOptions o;
    auto c = vllm_capacity(m.value(), o, int64_t(1) << 40);
    REQUIRE(c);
    CHECK(c->tokens > 0);
    CHECK(c->log_lines.back().rfind("GPU KV cache size: 71,987,293,946,183,616 tokens", 0) == 0);
    const std::string path = (std::filesystem::temp_directory_path() / "kvb_hostile_window.json").string();
    std::ofstream(path) << R"({"model_type":"mistral","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
        "num_key_value_heads":2,"sliding_window":1099511627776})";
    auto r = test::run_cli("kv " + path + " --context 1000");
    std::filesystem::remove(path);
    CHECK(r.out.find("(up to 1,099,511,627,776 tokens: at most 1.00 PiB per sequence)") != std::string::npos);
}

TEST_CASE("issue 14.9: every computation is near-linear in layers") {
    // 56 bytes that took vLLM's capacity code 21-27 s (O(layers^2) lookups) are refused: no
    // real model comes near 10,000 layers, and at 10,000 every pass (the page's WASM
    // included) stays well under a second (bench_large_configs).
    CHECK(error_of(R"({"model_type":"gemma3_text","num_hidden_layers":100000})") ==
          "m: num_hidden_layers = 100000 is out of range (1 to 10000)");
    // At the limit: the same config, and a per-layer head list of many distinct values (as
    // many vLLM specs and KV groups).
    std::string distinct = R"({"model_type":"llama","num_hidden_layers":10000,"num_attention_heads":65536,
        "hidden_size":65536,"head_dim":1,"num_key_value_heads":[)";
    for (int i = 0; i < 10000; ++i) distinct += (i ? "," : "") + std::to_string(1 << (i % 17));
    distinct += "]}";
    // How long they take is bench_large_configs' to print (no timed assertions here); a
    // quadratic path shows as minutes there and as the CTest timeout here.
    for (const std::string& text :
         {std::string(R"({"model_type":"gemma3_text","num_hidden_layers":10000})"), distinct}) {
        auto m = parse_config(text, "m");
        REQUIRE(m);
        VllmOptions o;
        o.max_model_len = 131072;
        // The made-up head list may be refused (its pages do not unify); the time is the point.
        (void)vllm_capacity(m.value(), o, int64_t(80) << 30);
        auto t = engine_kv(m.value(), "vllm", "auto");
        REQUIRE(t);
        CHECK(!layer_groups(t->view, t->dtypes).empty());
    }
}

TEST_CASE("issue 14.4: option values times config values never wrap either") {
    // 2^59 tokens x 2^59 sequences of Llama-3.1-8B: 2^17 x 2^118 bytes wrapped 128 bits to 0.
    const ModelSpec llama = test::fixture("meta-llama/Llama-3.1-8B");
    const KvDtypes d = uniform_kv_dtypes(llama, vllm_kv_type("auto", llama.dtype).value());
    auto b = kv_bytes_at(llama, d, int64_t(1) << 59, int64_t(1) << 59);
    REQUIRE(!b);
    CHECK(b.error().message ==
          "meta-llama/Llama-3.1-8B: KV cache for 576,460,752,303,423,488 sequences of 576,460,752,303,423,488 tokens "
          "exceeds 8 EiB");

    // vLLM bounds neither --max-num-batched-tokens nor its product with the batches in flight
    // (16 pipeline stages): past int64 it is "more than any window", not a wrapped negative.
    const ModelSpec mistral = test::fixture("mistralai/Mistral-7B-v0.1");
    VllmOptions o;
    o.pipeline_parallel_size = 16;
    o.max_num_batched_tokens = 999'999'999'999'999'999;
    auto huge = vllm_capacity(mistral, o, int64_t(8) << 30);
    o.max_num_batched_tokens = int64_t(1) << 40;
    auto large = vllm_capacity(mistral, o, int64_t(8) << 30);
    REQUIRE(huge);
    REQUIRE(large);
    CHECK(huge->layout.max_in_flight_tokens == INT64_MAX);
    CHECK(huge->tokens == large->tokens);
    CHECK(huge->num_blocks == large->num_blocks);
    CHECK(huge->max_concurrency == large->max_concurrency);

    // 1,024 layers of 2^16 KV heads x 2^16 dims in blocks of 2^20 tokens: each page is 2^54
    // bytes, their sum (one UniformTypeKVCacheSpecs block) passes 2^63.
    std::string wide = R"({"model_type":"llama","num_hidden_layers":1024,"num_attention_heads":65536,
        "hidden_size":1048576,"head_dim":65536,"max_position_embeddings":1048576,"num_key_value_heads":[)";
    for (int i = 0; i < 1024; ++i) wide += (i ? "," : "") + std::string(i % 2 ? "32768" : "65536");
    wide += "]}";
    auto m = parse_config(wide, "m");
    REQUIRE(m);
    VllmOptions big_blocks;
    big_blocks.block_size = 1 << 20;
    auto c = vllm_capacity(m.value(), big_blocks, int64_t(1) << 50);
    REQUIRE(!c);
    CHECK(c.error().message == "KV cache of m does not fit in 64-bit bytes");

    // A 2^31-token batch through 2^16 heads of 2^16 dims: the activation estimate passes 2^63.
    auto one = parse_config(R"({"model_type":"llama","num_hidden_layers":1,"num_attention_heads":65536,
        "num_key_value_heads":65536,"hidden_size":1048576,"head_dim":65536,"intermediate_size":4096,
        "vocab_size":32000,"max_position_embeddings":4096})",
                            "m");
    REQUIRE(one);
    BudgetInputs in;
    in.gpu = "h100";
    in.max_num_batched_tokens = (int64_t(1) << 31) - 1;
    auto r = compute_budget(one.value(), in);
    REQUIRE(!r);
    CHECK(r.error().message ==
          "m: these settings need more than 8 EiB on one GPU, beyond what 64-bit byte counts hold");
    in.max_num_batched_tokens = 0;  // the default 8,192 gives an answer
    CHECK(compute_budget(one.value(), in));
}

TEST_CASE("issue 14.4: a GGUF's recurrent state is bounded like a config's") {
    // 10,000 Mamba layers of 2^22 channels x 2^16 states: 2^51 elements per sequence, which
    // llama.cpp's f32 rows x 4,096 slots would take past int64.
    auto bytes = test::GgufBuilder()
                     .str("general.architecture", "mamba")
                     .u32("mamba.block_count", 10000)
                     .u32("mamba.embedding_length", 1 << 20)
                     .u32("mamba.ssm.conv_kernel", 64)
                     .u32("mamba.ssm.state_size", 65536)
                     .u32("mamba.ssm.inner_size", 1 << 22)
                     .u32("mamba.ssm.time_step_rank", 48)
                     .tensor("output_norm.weight", {64}, test::ggml::F32)
                     .bytes();
    auto p = parse_gguf(bytes.data(), bytes.size(), "m.gguf");
    REQUIRE(p.ok());
    auto mb = spec_from_gguf(p.header, "m");
    REQUIRE(!mb);
    CHECK(mb.error().message ==
          "m: the recurrent state of one sequence would exceed 1,099,511,627,776 elements, beyond any real model");
}
