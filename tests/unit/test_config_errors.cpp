// Bad input: every refusal names the field and the model, with a stable code.
#include <doctest/doctest.h>

#include "model/model.h"

using namespace kvb;

namespace {
Error refuse(const std::string& text, const std::string& name = "acme/bad") {
    auto r = parse_config(text, name);
    REQUIRE_FALSE(r.ok());
    return r.error();
}
const char* kLlama = R"("model_type":"llama","num_attention_heads":32,"hidden_size":4096,"num_key_value_heads":8)";
}  // namespace

TEST_CASE("not JSON, not an object") {
    auto e = refuse("{\"num_hidden_layers\": 32,");
    CHECK(e.code == "not_json");
    CHECK(e.message == "acme/bad: config.json is not valid JSON (syntax error near byte 26)");
    CHECK(refuse("<html>gated</html>").message == "acme/bad: config.json is not valid JSON (syntax error near byte 1)");
    CHECK(refuse("").code == "not_json");
    e = refuse("[1,2]");
    CHECK(e.code == "not_object");
    CHECK(e.message == "acme/bad: config.json must be a JSON object, got an array");
    CHECK(refuse("\"config\"").message == "acme/bad: config.json must be a JSON object, got a string");
    CHECK(refuse(std::string(300, '[') + std::string(300, ']')).message ==
          "acme/bad: config.json is nested deeper than 256 levels");
}

TEST_CASE("missing fields are named, with the other spellings looked for") {
    auto e = refuse(R"({"model_type":"llama","num_attention_heads":32,"hidden_size":4096})");
    CHECK(e.code == "missing_field");
    CHECK(e.message == "acme/bad: missing field num_hidden_layers (also looked for n_layer, n_layers, num_layers)");
    e = refuse(R"({"model_type":"llama","num_hidden_layers":32,"hidden_size":4096})");
    CHECK(e.message == "acme/bad: missing field num_attention_heads (also looked for n_head, n_heads, num_heads)");
    e = refuse(R"({"model_type":"llama","num_hidden_layers":32,"num_attention_heads":32})");
    CHECK(e.message == "acme/bad: missing field hidden_size (also looked for head_dim)");
    e = refuse(R"({"model_type":"deepseek_v3","num_hidden_layers":61,"num_attention_heads":128,"hidden_size":7168,
                 "kv_lora_rank":512,"qk_nope_head_dim":128,"v_head_dim":128})");
    CHECK(e.message == "acme/bad: missing field qk_rope_head_dim");
}

TEST_CASE("unknown model_type without the generic fields is unsupported") {
    auto e = refuse(R"({"model_type":"wavenet","layers":3})");
    CHECK(e.code == "unsupported_architecture");
    CHECK(e.message ==
          "acme/bad: model_type 'wavenet' is not supported and the generic fields are missing "
          "(missing field num_hidden_layers (also looked for n_layer, n_layers, num_layers))");
    CHECK(refuse("{}").message ==
          "acme/bad: config.json has no model_type and the generic fields are missing "
          "(missing field num_hidden_layers (also looked for n_layer, n_layers, num_layers))");
}

TEST_CASE("zero, negative and absurd values") {
    auto e = refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":0})");
    CHECK(e.code == "out_of_range");
    CHECK(e.message == "acme/bad: num_hidden_layers = 0 is out of range (1 to 10000)");
    CHECK(refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":-4})").message ==
          "acme/bad: num_hidden_layers = -4 is out of range (1 to 10000)");
    CHECK(refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":1e12})").message ==
          "acme/bad: num_hidden_layers = 1000000000000.0 is out of range (1 to 10000)");
    CHECK(refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":32,"head_dim":0})").message ==
          "acme/bad: head_dim = 0 is out of range (1 to 65536)");
    CHECK(refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":18446744073709551615})").message ==
          "acme/bad: num_hidden_layers = 18446744073709551615 is out of range (1 to 10000)");
    CHECK(
        refuse(
            R"({"model_type":"mistral","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,"sliding_window":-1})")
            .message == "acme/bad: sliding_window = -1 is out of range (1 to 1099511627776)");
}

TEST_CASE("wrong types") {
    auto e = refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":"32"})");
    CHECK(e.code == "bad_value");
    CHECK(e.message == "acme/bad: num_hidden_layers must be an integer, got a string \"32\"");
    CHECK(refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":32.5})").message ==
          "acme/bad: num_hidden_layers must be an integer, got 32.5");
    CHECK(refuse(std::string("{") + kLlama + R"(,"num_hidden_layers":[32]})").message ==
          "acme/bad: num_hidden_layers must be an integer, got an array [32]");
    CHECK(refuse(R"({"model_type":42,"num_hidden_layers":2})").message ==
          "acme/bad: model_type must be a string, got a number");
    CHECK(refuse(R"({"text_config":"gemma"})").message == "acme/bad: text_config must be an object, got a string");
}

TEST_CASE("contradictory fields") {
    auto e = refuse(
        R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":32,"num_key_value_heads":64,"hidden_size":4096})");
    CHECK(e.code == "contradictory_fields");
    CHECK(e.message == "acme/bad: num_key_value_heads (64) is greater than num_attention_heads (32)");
    CHECK(
        refuse(
            R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":32,"num_key_value_heads":5,"hidden_size":4096})")
            .message == "acme/bad: num_attention_heads (32) is not a multiple of num_key_value_heads (5)");
    CHECK(
        refuse(
            R"({"model_type":"gpt_oss","num_hidden_layers":3,"num_attention_heads":8,"num_key_value_heads":2,"hidden_size":512,
                    "sliding_window":128,"layer_types":["sliding_attention","full_attention"]})")
            .message == "acme/bad: layer_types has 2 entries but num_hidden_layers is 3");
    CHECK(
        refuse(
            R"({"model_type":"gpt_oss","num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"hidden_size":512,
                    "sliding_window":128,"layer_types":["sliding_attention","dense"]})")
            .message == "acme/bad: layer_types[1] is 'dense', which is not a known layer type");
    CHECK(refuse(R"({"model_type":"llama","num_hidden_layers":2,"num_attention_heads":3,"hidden_size":100})").message ==
          "acme/bad: hidden_size (100) is not a multiple of num_attention_heads (3) and head_dim is not given");
    CHECK(
        refuse(
            R"({"model_type":"nemotron_h","num_hidden_layers":3,"num_attention_heads":8,"num_key_value_heads":2,"hidden_size":512,
                    "hybrid_override_pattern":"M*","mamba_num_heads":8,"mamba_head_dim":64,"ssm_state_size":16,"n_groups":1,"conv_kernel":4})")
            .message == "acme/bad: hybrid_override_pattern has 2 layers but num_hidden_layers is 3");
    CHECK(refuse(R"({"model_type":"mixtral","num_hidden_layers":2,"num_attention_heads":8,"hidden_size":512,
                    "num_local_experts":8,"num_experts_per_tok":9})")
              .message == "acme/bad: num_experts_per_tok (9) is greater than the number of experts (8)");
}

TEST_CASE("Python's NaN / Infinity are tolerated, but only outside strings") {
    auto r = parse_config(
        std::string("{") + kLlama + R"(,"num_hidden_layers":2,"limit":[0.0, Infinity],"x":-Infinity,"y":NaN,
                          "note":"Infinity stays"})",
        "acme/ok");
    REQUIRE(r);
    CHECK(r->layers.size() == 2);
}

TEST_CASE("a model with no cache-bearing layer is refused") {
    CHECK(
        refuse(
            R"({"model_type":"nemotron_h","num_hidden_layers":2,"num_attention_heads":8,"num_key_value_heads":2,"hidden_size":512,
                    "hybrid_override_pattern":"--","mamba_num_heads":8,"mamba_head_dim":64,"ssm_state_size":16,"n_groups":1,"conv_kernel":4})")
            .message == "acme/bad: no layer of this model holds a KV cache or state");
}
