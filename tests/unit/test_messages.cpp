// Notes and refusals are codes with parameters (issue 8): every code the core can
// emit has an English template (base/message.cpp) and a msg.<code> entry in each page
// catalog with the same {placeholders}; emitters pass exactly those parameters; the
// files converted to codes keep no English-only refusal.
#include <doctest/doctest.h>

#include <climits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "base/units.h"
#include "engines/transformers_cache.h"
#include "fixtures.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/dtype.h"
#include "sim/setup.h"

using namespace kvb;
using nlohmann::json;

namespace {

std::set<std::string> placeholders(const std::string& text) {
    static const std::regex re(R"(\{(\w+)\})");
    std::set<std::string> out;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
        out.insert((*it)[1]);
    return out;
}

std::string source_text(const std::string& rel) {
    return test::read_file(std::string(KVB_SOURCE_DIR) + "/" + rel);
}

json catalog(const std::string& lang) {
    json j = json::parse(source_text("web/i18n/" + lang + ".json"), nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    return j;
}

const MessageTemplate* find_template(const std::string& code) {
    for (const MessageTemplate& t : message_templates())
        if (code == t.code) return &t;
    return nullptr;
}

// The files whose notes and refusals were moved to codes; others move file by file.
const char* const kCodedFiles[] = {
    "src/model/model.cpp",
    "src/model/config_reader.cpp",
    "src/model/dtype.cpp",
    "src/base/units.cpp",
    "src/kv/kv.cpp",
    "src/kv/tables.cpp",
    "src/engines/transformers_cache.cpp",
    "src/sim/setup.cpp",
};

// Every code those files can emit, each reached by an input below. Left out, as no
// input reaches them: no_layers (every family rule fills num_hidden_layers >= 1 layers
// before the check) and config_not_json (nlohmann always says where the syntax fails).
const char* const kCodedFilesCodes[] = {
    "no_op_layers",
    "cross_attention",
    "gemma_default",
    "transformers_default",
    "gemma_pattern",
    "dtype_quantized",
    "dtype_float32",
    "mha_assumed",
    "mtp",
    "window_unused",
    "window_off",
    "indexer",
    "nested",
    "generic",
    "no_model_type",
    "falcon_h1",
    "config_too_deep",
    "config_not_json_at",
    "config_not_object",
    "missing_field",
    "missing_field_alternatives",
    "out_of_range",
    "not_integer",
    "not_integer_type",
    "not_string",
    "not_array",
    "not_object",
    "not_positive",
    "pattern_not_string",
    "length_mismatch",
    "pattern_length_mismatch",
    "list_length_mismatch",
    "entry_length_mismatch",
    "head_dim_not_derivable",
    "kv_heads_above_heads",
    "heads_not_multiple_of_kv_heads",
    "group_not_divisor",
    "unknown_layer_type",
    "bad_pattern_letter",
    "mla_head_dims_zero",
    "attn_offset_not_below_period",
    "experts_per_token_above_experts",
    "unsupported_type_missing_field",
    "unsupported_type_missing_field_alternatives",
    "no_model_type_missing_field",
    "no_model_type_missing_field_alternatives",
    "no_cache_layers",
    "bad_size",
    "size_too_large",
    "not_a_count",
    "unknown_vllm_kv_dtype",
    "unknown_llamacpp_kv_type",
    "unknown_transformers_kv_dtype",
    "unknown_engine",
    "negative_context",
    "kv_overflow",
    "unknown_cache_dtype",
    "negative_tokens",
    "transformers_cache_overflow",
    "no_paging",
    "sim_unknown_gpu",
    "no_max_model_len",
    "gpu_or_memory_needed",
    "no_kv_memory",
    "unknown_workload",
};

// Checks one emitted message against its template and records its code.
struct Seen {
    std::set<std::string> codes;
    void note(const Message& m) {
        INFO(m.code);
        const MessageTemplate* t = find_template(m.code);
        REQUIRE(t != nullptr);
        std::set<std::string> given;
        for (const auto& [k, v] : m.params) CHECK(given.insert(k).second);  // no parameter twice
        CHECK(given == placeholders(t->english));
        codes.insert(m.code);
    }
    template <class T>
    void refusal(const Result<T>& r) {
        REQUIRE_FALSE(r.ok());
        const Error& e = r.error();
        INFO(e.message);
        REQUIRE_FALSE(e.detail.code.empty());
        CHECK(render_english(e.detail) == e.message);
        note(e.detail);
    }
};

// A config the test refuses with the given detail code.
struct BadConfig {
    const char* code;
    std::string text;
};

}  // namespace

TEST_CASE("every code is listed once and renders with all its placeholders") {
    std::set<std::string> codes;
    for (const MessageTemplate& t : message_templates()) {
        INFO(std::string(t.code));
        CHECK(codes.insert(t.code).second);
        CHECK(std::regex_match(std::string(t.code), std::regex("[a-z][a-z0-9_]*")));
        Message m = note(t.code);
        for (const std::string& p : placeholders(t.english)) m.params.push_back({p, "X"});
        const std::string text = render_english(m);
        CHECK(text.find('<') == std::string::npos);
        CHECK(text.find('{') == std::string::npos);
    }
    CHECK(render_english(note("no_such_code")) == "<no_such_code>");
    CHECK(render_english(note("mha_assumed")) ==
          "num_key_value_heads is not set: multi-head attention assumed (<n> KV heads, one per attention head)");
}

TEST_CASE("both page catalogs word every code with the template's placeholders") {
    for (const char* lang : {"en", "zh-CN"}) {
        const json cat = catalog(lang);
        INFO(std::string(lang));
        for (const MessageTemplate& t : message_templates()) {
            const std::string key = std::string("msg.") + t.code;
            INFO(key);
            REQUIRE(cat.contains(key));
            REQUIRE(cat[key].is_string());
            CHECK(placeholders(cat[key].get<std::string>()) == placeholders(t.english));
        }
        for (const auto& [key, value] : cat.items()) {
            INFO(key);
            CHECK(key.rfind("coreNote.", 0) != 0);  // the old regex-matched templates are gone
            if (key.rfind("msg.", 0) == 0) CHECK(find_template(key.substr(4)) != nullptr);  // no stale code
        }
    }
}

TEST_CASE("notes and refusals carry exactly their template's parameters") {
    Seen seen;
    // Every note of every real config.
    for (const auto& entry : std::filesystem::directory_iterator(std::string(KVB_FIXTURES) + "/configs")) {
        if (entry.path().extension() != ".json") continue;
        auto m = parse_config(test::read_file(entry.path().string()), entry.path().stem().string());
        REQUIRE(m);
        for (const Message& n : m->notes) seen.note(n);
    }
    // Notes that need configs the fixtures do not have.
    const char* const noted[] = {
        R"({"model_type":"gemma2","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"num_key_value_heads":2})",
        R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"quantization_config":{}})",
        R"({"model_type":"brand_new","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"torch_dtype":"float16"})",
        R"({"num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"torch_dtype":"float16"})",
        R"({"model_type":"qwen2","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"num_key_value_heads":2,
            "sliding_window":4096,"use_sliding_window":false})",
        R"({"model_type":"falcon_h1","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"num_key_value_heads":2,
            "mamba_d_conv":4,"mamba_n_heads":8,"mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1})",
    };
    for (const char* text : noted) {
        auto m = parse_config(text, "acme/ok");
        REQUIRE(m);
        for (const Message& n : m->notes) seen.note(n);
    }

    const std::string llama = R"("model_type":"llama","num_attention_heads":32,"hidden_size":4096)";
    const std::string nas =
        R"("model_type":"nemotron-nas","num_hidden_layers":1,"num_attention_heads":4,"hidden_size":256)";
    const std::string nemotron_h =
        R"("model_type":"nemotron_h","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,
        "num_key_value_heads":2,"conv_kernel":4,"mamba_num_heads":8,"mamba_head_dim":64,"ssm_state_size":128,"n_groups":1)";
    const std::string mla =
        R"("model_type":"deepseek_v3","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,
        "kv_lora_rank":64,"v_head_dim":64)";
    const BadConfig bad[] = {
        {"config_too_deep", std::string(300, '[') + std::string(300, ']')},
        {"config_not_json_at", R"({"a":)"},
        {"config_not_json_at", ""},
        {"config_not_object", "[1]"},
        {"missing_field", "{" + mla + R"(,"qk_nope_head_dim":64})"},
        {"missing_field_alternatives", R"({"model_type":"llama"})"},
        {"out_of_range", "{" + llama + R"(,"num_hidden_layers":0})"},
        {"not_integer", "{" + llama + R"(,"num_hidden_layers":32.5})"},
        {"not_integer_type", "{" + llama + R"(,"num_hidden_layers":"32"})"},
        {"not_string", R"({"model_type":42,"num_hidden_layers":2})"},
        {"not_array", "{" + llama + R"(,"num_hidden_layers":2,"layer_types":"full_attention"})"},
        {"not_object", R"({"text_config":"gemma"})"},
        {"not_positive",
         "{" + nas + R"(,"block_configs":[{"attention":{"n_heads_in_group":2},"ffn":{"ffn_mult":-1}}]})"},
        {"pattern_not_string", "{" + nemotron_h + R"(,"hybrid_override_pattern":5})"},
        {"length_mismatch",
         "{" + llama + R"(,"num_hidden_layers":3,"layer_types":["full_attention","full_attention"]})"},
        {"pattern_length_mismatch", "{" + nemotron_h + R"(,"hybrid_override_pattern":"M*-"})"},
        {"list_length_mismatch", "{" + nas + R"(,"block_configs":[]})"},
        {"entry_length_mismatch",
         R"({"model_type":"minimax","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,
                                      "num_key_value_heads":2,"attn_type_list":[1]})"},
        {"head_dim_not_derivable",
         R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":3,"hidden_size":100})"},
        {"kv_heads_above_heads", "{" + llama + R"(,"num_hidden_layers":2,"num_key_value_heads":64})"},
        {"heads_not_multiple_of_kv_heads", "{" + llama + R"(,"num_hidden_layers":2,"num_key_value_heads":5})"},
        {"group_not_divisor", "{" + nas + R"(,"block_configs":[{"attention":{"n_heads_in_group":3}}]})"},
        {"unknown_layer_type", "{" + llama + R"(,"num_hidden_layers":2,"layer_types":["full_attention","dense"]})"},
        {"bad_pattern_letter", "{" + nemotron_h + R"(,"hybrid_override_pattern":"MX"})"},
        {"mla_head_dims_zero", "{" + mla + R"(,"qk_nope_head_dim":0,"qk_rope_head_dim":0})"},
        {"attn_offset_not_below_period",
         R"({"model_type":"jamba","num_hidden_layers":4,"num_attention_heads":4,"hidden_size":256,
                                             "num_key_value_heads":2,"mamba_d_conv":4,"mamba_d_state":16,"mamba_expand":2,
                                             "attn_layer_period":2,"attn_layer_offset":2})"},
        {"experts_per_token_above_experts",
         "{" + llama + R"(,"num_hidden_layers":2,"num_local_experts":8,"num_experts_per_tok":9})"},
        {"unsupported_type_missing_field", R"({"model_type":"wavenet","num_hidden_layers":1,"num_attention_heads":4,
                                               "hidden_size":256,"layer_types":["sliding_attention"]})"},
        {"unsupported_type_missing_field_alternatives", R"({"model_type":"wavenet","layers":3})"},
        {"no_model_type_missing_field", R"({"num_hidden_layers":1,"num_attention_heads":4,"hidden_size":256,
                                            "layer_types":["sliding_attention"]})"},
        {"no_model_type_missing_field_alternatives", "{}"},
        {"no_cache_layers", "{" + nemotron_h + R"(,"hybrid_override_pattern":"--"})"},
    };
    for (const BadConfig& b : bad) {
        INFO(std::string(b.code));
        auto r = parse_config(b.text, "acme/bad");
        seen.refusal(r);
        CHECK(r.error().detail.code == b.code);
    }

    // Units, KV types, engines, caches, simulator setup.
    seen.refusal(parse_size("12 parsecs"));
    seen.refusal(parse_size("99999999999TB"));
    seen.refusal(parse_count("12abc", "--context"));
    seen.refusal(vllm_kv_type("int3", "bfloat16"));
    seen.refusal(llamacpp_kv_type("q2"));
    const ModelSpec llama8b = test::fixture("meta-llama/Llama-3.1-8B");
    seen.refusal(engine_kv(llama8b, "tgi"));
    seen.refusal(engine_kv(llama8b, "transformers", "int8"));
    const KvDtypes d = uniform_kv_dtypes(llama8b, vllm_kv_type("auto", llama8b.dtype).value());
    seen.refusal(kv_bytes_at(llama8b, d, -1, 1));
    seen.refusal(kv_bytes_at(llama8b, d, int64_t(1) << 40, int64_t(1) << 40));
    seen.refusal(transformers_cache(llama8b, "int4"));
    seen.refusal(transformers_cache_bytes(llama8b, -1, 1));
    seen.refusal(transformers_cache_bytes(llama8b, INT64_MAX / 2, 1));

    seen.refusal(sim_setup(test::fixture("mistralai/Mistral-7B-v0.1"), SimSetupInputs{}));  // every layer slides
    SimSetupInputs in;
    in.gpu = "no-such-gpu";
    seen.refusal(sim_setup(llama8b, in));
    auto no_max = parse_config(R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,
                                          "vocab_size":1000})",
                               "acme/ok");
    REQUIRE(no_max);
    seen.refusal(sim_setup(no_max.value(), SimSetupInputs{}));
    in.gpu = "";
    seen.refusal(sim_setup(llama8b, in));
    in.gpu_memory_bytes = 16 * GiB;  // 0.9 x 16 GiB cannot hold 15 GiB of bf16 weights and the activations
    seen.refusal(sim_setup(llama8b, in));
    WorkloadInputs w;
    w.preset = "bogus";
    seen.refusal(workload_spec(w));

    for (const char* code : kCodedFilesCodes) {
        INFO(std::string(code));
        CHECK(seen.codes.count(code) == 1);
    }
}

TEST_CASE("the coded files keep no English-only refusal") {
    // make_error(category, "text") and make_error(category, std::string(...)) give faces
    // nothing to translate: each refusal's second argument must be a note(...).
    for (const char* file : kCodedFiles) {
        const std::string src = source_text(file);
        INFO(std::string(file));
        REQUIRE_FALSE(src.empty());
        int calls = 0;
        for (size_t at = src.find("make_error("); at != std::string::npos; at = src.find("make_error(", at + 1)) {
            size_t i = at + std::string("make_error(").size();
            int depth = 0;
            bool in_string = false;
            for (; i < src.size(); ++i) {  // to the comma that ends the first argument
                const char c = src[i];
                if (in_string) {
                    if (c == '\\')
                        ++i;
                    else if (c == '"')
                        in_string = false;
                } else if (c == '"') {
                    in_string = true;
                } else if (c == '(') {
                    ++depth;
                } else if (c == ')') {
                    if (depth-- == 0) break;
                } else if (c == ',' && depth == 0) {
                    break;
                }
            }
            if (i >= src.size() || src[i] != ',') continue;  // a declaration or comment mention without two arguments
            size_t arg = src.find_first_not_of(" \n\t", i + 1);
            const std::string head = src.substr(arg, 5);
            const std::string line = src.substr(at, src.find('\n', at) - at);
            INFO(line);
            CHECK(head == "note(");
            ++calls;
        }
        CHECK(calls > 0);
    }
}
