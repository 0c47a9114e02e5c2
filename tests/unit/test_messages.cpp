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
#include "sim/conclusions.h"
#include "sim/session.h"
#include "sim/setup.h"
#include "sim/simulator.h"
#include "sim/workload.h"

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
    "src/sim/simulator.cpp",
    "src/sim/workload.cpp",
    "src/sim/session.cpp",
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
    "no_kv_memory_size",
    "unknown_workload",
    "negative_swap_space",
    "vllm_batched_below_seqs",
    // session.cpp (SimInputs)
    "vllm_block_size_choice",
    "input_out_of_range",
    // simulator.cpp. Left out, as no input reaches them: sim_internal (an inconsistency is a bug).
    "sim_kv_bytes_per_token",
    "sim_kv_capacity",
    "sim_n_and_beam",
    "sim_seqs_exceed",
    "sim_beam_switches",
    "sim_latency_model",
    "sim_zero_step",
    "sim_snapshot_settings",
    "sim_block_bytes_overflow",
    "sim_too_many_blocks",
    "sim_pool_too_small",
    "sim_capacity_too_large",
    "sim_buddy_too_small",
    "sim_prefix_caching_paged",
    "sim_request_arrival",
    "sim_request_order",
    "sim_request_prompt",
    "sim_request_output",
    "sim_request_prefix",
    // workload.cpp. Left out: sim_trace_too_many (1,000,000,000 rows to read first).
    "sim_trace_has_none",
    "sim_requests_negative",
    "sim_requests_none",
    "sim_requests_too_many",
    "sim_trace_too_short",
    "sim_rate_not_positive",
    "sim_fixed_lengths",
    "sim_uniform_lengths",
    "sim_prefix_out_of_range",
    "sim_prefix_fraction",
    "sim_trace_empty",
    "sim_trace_bad_header",
    "sim_trace_no_requests",
    "sim_trace_fields",
    "sim_trace_bad_timestamp",
    "sim_trace_bad_seconds",
    "sim_trace_time_too_large",
    "sim_trace_bad_count",
    "sim_trace_empty_prompt",
    "sim_trace_no_output",
    "sim_trace_line_too_long",
    "sim_trace_unreadable",
    "sim_trace_too_many_unsorted",
    "sim_trace_changed",
    "sim_trace_ended",
    "sim_trace_changed_line",
    // Notes: a session's (trace out of order) and a run's conclusions (sim/conclusions.cpp).
    "sim_trace_unsorted",
    "sim_most_served",
    "sim_served_alike",
    "sim_served_none_no_room",
    "sim_served_none",
    "sim_policy_refused",
    "sim_policy_waste",
    "sim_why",
    "sim_overload",
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
        // {field} names the input a refusal is about, for the page's label of it (i18n.js
        // tMsg), whether or not the template shows it.
        if (placeholders(t->english).count("field") == 0) given.erase("field");
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
    in.gpu_memory_bytes = 0;
    in.gpu = "rtx-3080";  // 0.9 x 10 GiB: the same, on a catalog GPU
    seen.refusal(sim_setup(llama8b, in));
    SimSetupInputs tight;
    tight.kv_cache_memory = GiB;
    tight.max_num_batched_tokens = 100;  // below the default max_num_seqs 256
    seen.refusal(sim_setup(llama8b, tight));
    tight = SimSetupInputs{};
    tight.kv_cache_memory = GiB;
    tight.swap_space_bytes = -1;
    seen.refusal(sim_setup(llama8b, tight));
    SimInputs bad_bs;
    bad_bs.block_size = 3;
    seen.refusal(validate(bad_bs));
    bad_bs.block_size = 0;
    seen.refusal(validate(bad_bs));

    // The simulator's own settings and requests (sim/simulator.cpp).
    using namespace kvb::sim;
    const auto base = []() {
        SimConfig c;
        c.kv_bytes_per_token = 1;
        c.kv_capacity_bytes = 1 << 12;
        c.block_size = 4;
        c.max_model_len = 16;
        c.max_num_seqs = 8;
        c.latency.step_overhead_s = 1.0;
        return c;
    };
    const std::vector<Request> one = {{0, 2, 2, 0}};
    const auto sim_refusal = [&](const SimConfig& c, const std::vector<Request>& reqs, const char* code) {
        Simulator sim(c, reqs);
        INFO(std::string(code));
        REQUIRE_FALSE(sim.ok());
        CHECK(sim.error().detail.code == code);
        CHECK(render_english(sim.error().detail) == sim.error().message);
        seen.note(sim.error().detail);
    };
    SimConfig c = base();
    c.kv_bytes_per_token = 0;
    sim_refusal(c, one, "sim_kv_bytes_per_token");
    c = base();
    c.kv_capacity_bytes = 0;
    sim_refusal(c, one, "sim_kv_capacity");
    c = base();
    c.block_size = 0;
    sim_refusal(c, one, "input_out_of_range");
    c = base();
    c.n = 2;
    c.beam_width = 2;
    sim_refusal(c, one, "sim_n_and_beam");
    c = base();
    c.n = 16;
    sim_refusal(c, one, "sim_seqs_exceed");
    c = base();
    c.beam_switches = -1;
    sim_refusal(c, one, "sim_beam_switches");
    c = base();
    c.swap_space_bytes = -1;
    sim_refusal(c, one, "negative_swap_space");
    c = base();
    c.latency.bandwidth_efficiency = 0;
    sim_refusal(c, one, "sim_latency_model");
    c = base();
    c.latency.step_overhead_s = 0;
    sim_refusal(c, one, "sim_zero_step");
    c = base();
    c.max_snapshots = 0;
    sim_refusal(c, one, "sim_snapshot_settings");
    c = base();
    c.kv_bytes_per_token = INT64_MAX / 2;
    sim_refusal(c, one, "sim_block_bytes_overflow");
    c = base();
    c.block_size = 1;
    c.kv_capacity_bytes = int64_t(1) << 23;  // 8,388,608 one-token blocks
    sim_refusal(c, one, "sim_too_many_blocks");
    c = base();
    c.kv_capacity_bytes = 12;
    sim_refusal(c, one, "sim_pool_too_small");
    c = base();
    c.policy = Policy::Max;
    c.kv_capacity_bytes = int64_t(1) << 41;
    sim_refusal(c, one, "sim_capacity_too_large");
    c = base();
    c.policy = Policy::Max;
    c.kv_capacity_bytes = 8;
    sim_refusal(c, one, "sim_buddy_too_small");
    c = base();
    c.policy = Policy::Oracle;
    c.prefix_caching = true;
    sim_refusal(c, one, "sim_prefix_caching_paged");
    sim_refusal(base(), {{NAN, 2, 2, 0}}, "sim_request_arrival");
    sim_refusal(base(), {{1, 2, 2, 0}, {0, 2, 2, 0}}, "sim_request_order");
    sim_refusal(base(), {{0, 0, 2, 0}}, "sim_request_prompt");
    sim_refusal(base(), {{0, 2, 0, 0}}, "sim_request_output");
    sim_refusal(base(), {{0, 2, 2, 3}}, "sim_request_prefix");

    // Workloads (sim/workload.cpp).
    const auto spec_refusal = [&](const WorkloadSpec& spec, const char* code) {
        auto r = make_workload(spec);
        INFO(std::string(code));
        seen.refusal(r);
        CHECK(r.error().detail.code == code);
    };
    WorkloadSpec ws;
    ws.arrival = Arrival::Trace;
    ws.lengths = Lengths::Trace;
    spec_refusal(ws, "sim_trace_has_none");
    ws = WorkloadSpec{};
    ws.requests = -1;
    spec_refusal(ws, "sim_requests_negative");
    ws.requests = 0;
    spec_refusal(ws, "sim_requests_none");
    ws.requests = 10'000'001;
    spec_refusal(ws, "sim_requests_too_many");
    ws = WorkloadSpec{};
    ws.arrival = Arrival::Trace;
    ws.lengths = Lengths::Trace;
    ws.trace = one;
    ws.requests = 2;
    spec_refusal(ws, "sim_trace_too_short");
    ws = WorkloadSpec{};
    ws.requests = 1;
    ws.arrival = Arrival::Poisson;
    spec_refusal(ws, "sim_rate_not_positive");
    ws = WorkloadSpec{};
    ws.requests = 1;
    ws.lengths = Lengths::Fixed;
    spec_refusal(ws, "sim_fixed_lengths");
    ws.lengths = Lengths::Uniform;
    spec_refusal(ws, "sim_uniform_lengths");
    ws.lengths = Lengths::ShareGpt;
    ws.shared_prefix = -1;
    spec_refusal(ws, "sim_prefix_out_of_range");
    ws.shared_prefix = 0;
    ws.shared_fraction = 2;
    spec_refusal(ws, "sim_prefix_fraction");

    // Traces: refused as scanned, or as read again after a change.
    const std::string head = "arrived_at,num_prefill_tokens,num_decode_tokens\n";
    const std::pair<const char*, std::string> traces[] = {
        {"sim_trace_empty", ""},
        {"sim_trace_bad_header", "time,prompt,output\n1,2,3\n"},
        {"sim_trace_no_requests", head},
        {"sim_trace_fields", head + "0,1\n"},
        {"sim_trace_bad_timestamp", "TIMESTAMP,ContextTokens,GeneratedTokens\nsoon,1,2\n"},
        {"sim_trace_bad_seconds", head + "soon,1,2\n"},
        {"sim_trace_time_too_large", head + "2e300,1,2\n"},
        {"sim_trace_bad_count", head + "0,x,2\n"},
        {"sim_trace_empty_prompt", head + "0,0,2\n"},
        {"sim_trace_no_output", head + "0,1,0\n"},
        {"sim_trace_line_too_long", head + std::string(70'000, '1')},
    };
    for (const auto& [code, text] : traces) {
        auto r = parse_trace_csv(text, "t.csv");
        INFO(std::string(code));
        seen.refusal(r);
        CHECK(r.error().detail.code == code);
    }
    seen.refusal(scan_trace([](int64_t, char*, int64_t) -> int64_t { return -1; }, "t.csv"));
    // Out of time order past 10,000,000 rows: made as read, never held.
    const auto rows = [](int64_t at, char* buf, int64_t n) -> int64_t {
        const std::string line = "1,1,1\n";  // 6 bytes; the first row alone reads 2,1,1
        const int64_t total = 48 + int64_t(10'000'002) * 6;
        if (at >= total) return 0;
        int64_t k = 0;
        for (; k < n && at + k < total; ++k) {
            const int64_t i = at + k;
            buf[k] = i < 48 ? "arrived_at,num_prefill_tokens,num_decode_tokens\n"[i]
                            : (i == 48 ? '2' : line[static_cast<size_t>((i - 48) % 6)]);
        }
        return k;
    };
    seen.refusal(scan_trace(rows, "big.csv"));
    // The file changes between the scan and the reads that follow it.
    const auto changing = [](std::vector<std::string> texts) {
        auto reads = std::make_shared<size_t>(0);
        return TraceSource([texts, reads](int64_t at, char* buf, int64_t n) -> int64_t {
            const std::string& t = texts[std::min(*reads, texts.size() - 1)];
            if (at >= static_cast<int64_t>(t.size())) {
                ++*reads;  // an end of file read: the next pass reads the next text
                return 0;
            }
            const int64_t k = std::min<int64_t>(n, static_cast<int64_t>(t.size()) - at);
            std::copy_n(t.data() + at, static_cast<size_t>(k), buf);
            return k;
        });
    };
    {
        // Out of order, so read whole after the scan: one row fewer by then.
        WorkloadSpec t;
        t.arrival = Arrival::Trace;
        t.lengths = Lengths::Trace;
        t.trace_file = scan_trace(changing({head + "1,1,1\n0,1,1\n", head + "1,1,1\n"}), "t.csv").value();
        auto r = make_workload(t);
        seen.refusal(r);
        CHECK(r.error().detail.code == "sim_trace_changed");
    }
    for (const auto& [code, second] :
         {std::pair<const char*, std::string>{"sim_trace_ended", head + "0,1,1\n"},
          std::pair<const char*, std::string>{"sim_trace_changed_line", head + "0,1,1\n1,x,1\n"}}) {
        WorkloadSpec t;
        t.arrival = Arrival::Trace;
        t.lengths = Lengths::Trace;
        t.trace_file = scan_trace(changing({head + "0,1,1\n1,1,1\n", second}), "t.csv").value();
        Simulator sim(base(), RequestStream::create(t).value());
        while (!sim.done()) sim.run(1000);
        INFO(std::string(code));
        REQUIRE_FALSE(sim.ok());
        CHECK(sim.error().detail.code == code);
        seen.note(sim.error().detail);
    }

    // A session's note on a trace out of order, and every conclusion.
    SimInputs trace_in;
    trace_in.kv_cache_memory = GiB;
    trace_in.workload = "csv";
    trace_in.trace = head + "1,10,5\n0,10,5\n";
    auto session = SimSession::create(test::fixture("facebook/opt-1.3b"), trace_in);
    REQUIRE(session);
    for (const Message& n : session->run_info().notes) seen.note(n);
    Summary a, b;
    a.policy = "paged";
    b.policy = "max";
    a.requests = b.requests = a.finished = b.finished = 100;
    a.throughput_tokens_per_s = 100;
    b.throughput_tokens_per_s = 50;
    a.token_states_of_used = 0.98;
    b.token_states_of_used = 0.2;
    a.mean_running = 30;
    b.mean_running = 7;
    for (Summary* x : {&a, &b}) {
        x->early_finished = x->late_finished = 25;
        x->late_arrival_mean_s = 40;
        x->late_ttft_mean_s = 20;
        x->waiting_at_last_arrival = 10;
    }
    for (const Message& n : sim_conclusions({a, b}, 50)) seen.note(n);
    b.throughput_tokens_per_s = 100;
    for (const Message& n : sim_conclusions({a, b}, 50)) seen.note(n);
    // A policy that served none (all refused, or some for a prompt past max-model-len), and
    // one that refused some for want of room.
    Summary none = b;
    none.finished = 0;
    none.refused = none.refused_no_room = 100;
    none.throughput_tokens_per_s = none.token_states_of_used = kNotMeasured;
    for (const Message& n : sim_conclusions({a, none}, 50)) seen.note(n);
    none.refused_no_room = 60;
    b.refused_no_room = 5;
    for (const Message& n : sim_conclusions({a, b, none}, 50)) seen.note(n);

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
