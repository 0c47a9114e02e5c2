// A pre-quantized checkpoint's quantization_config, read layer by layer as vLLM's readers read it
// (vllm/model_executor/layers/quantization/: compressed_tensors/utils.py should_ignore_layer and
// find_matched_target, compressed_tensors.py and its schemes' create_weights, modelopt.py
// is_layer_excluded / apply_vllm_mapper, fp8.py, awq.py, gptq.py, bitsandbytes.py, mxfp4.py).
// The quantization_config objects below are copied from real checkpoints' config.json (named at each).
#include <doctest/doctest.h>

#include "base/arith.h"
#include "base/message.h"
#include "budget/budget.h"
#include "fixtures.h"
#include "model/config_reader.h"
#include "model/quant.h"
#include "model/weights.h"
#include "report/answer.h"

using kvb::test::fixture;

namespace {

std::shared_ptr<const kvb::QuantPlan> plan_of(const std::string& text) {
    return kvb::read_quant_plan(kvb::parse_json_dom(text));
}

}  // namespace

TEST_CASE("quant: Python re.match subset, fnmatch and name normalization") {
    using kvb::regex_match_prefix;
    CHECK(regex_match_prefix(R"(.*\.self_attn\.q_proj$)", "layers.3.self_attn.q_proj"));
    CHECK_FALSE(regex_match_prefix(R"(.*\.self_attn\.q_proj$)", "layers.3.self_attn.q_proj_x"));
    CHECK(regex_match_prefix(R"(.*mlp\.(gate|up|gate_up|down)_proj.*)", "layers.0.mlp.down_proj"));
    CHECK_FALSE(regex_match_prefix(R"(.*mlp\.(gate|up|gate_up|down)_proj.*)", "layers.1.mlp.experts.0.down_proj"));
    CHECK(regex_match_prefix(R"(layers\.\d+\.mlp\.gate$)", "layers.12.mlp.gate"));
    CHECK_FALSE(regex_match_prefix(R"(layers\.\d+\.mlp\.gate$)", "layers.12.mlp.gate_proj"));
    CHECK_FALSE(regex_match_prefix("visual.*", "layers.0.self_attn.q_proj"));  // re.match is anchored at the start
    CHECK(regex_match_prefix("a{2,3}b", "aaab"));
    CHECK(kvb::fnmatch("*.self_attn.*", "layers.7.self_attn.o_proj"));
    CHECK(kvb::fnmatch("layers.1[0-9].*", "layers.14.mlp"));
    CHECK_FALSE(kvb::fnmatch("layers.1.*", "layers.10.mlp"));
    // Prefixes dropped, other families' block names mapped to Llama's.
    CHECK(kvb::normalize_quant_pattern("model.language_model.layers.0.self_attn*") == "layers.0.self_attn*");
    CHECK(kvb::normalize_quant_pattern("language_model.model.layers.3.block_sparse_moe.gate") == "layers.3.mlp.gate");
    CHECK(kvb::normalize_quant_pattern("*.attn.*") == "*.self_attn.*");
    CHECK(kvb::normalize_quant_pattern("*.ffn.shared_experts.*") == "*.mlp.shared_experts.*");
    CHECK(kvb::normalize_quant_pattern("head") == "lm_head");
    CHECK(kvb::normalize_quant_pattern("re:^model\\.layers\\.0\\.") == "re:layers\\.0\\.");
    CHECK(kvb::normalize_quant_pattern("model.layers.2.mlp.shared_expert.up_proj") ==
          "layers.2.mlp.shared_experts.up_proj");
}

TEST_CASE("quant: bytes of one matrix in each stored format") {
    // A 4096 x 4096 projection.
    const int64_t r = 4096, c = 4096, n = r * c;
    auto bytes_of = [&](const std::string& qc) {
        auto p = plan_of(qc);
        REQUIRE(p);
        REQUIRE(p->default_scheme >= 0);
        return p->schemes[static_cast<size_t>(p->default_scheme)].bytes(r, c);
    };
    // fp8 (DeepSeek-V3): fp8 values, weight_scale_inv fp32 per 128 x 128 block.
    CHECK(
        bytes_of(
            R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]})") ==
        n + 32 * 32 * 4);
    // fp8 per tensor, static activations (mistralai Devstral-2-123B): + weight_scale and input_scale.
    CHECK(bytes_of(R"({"activation_scheme": "static", "quant_method": "fp8", "weight_block_size": null})") == n + 8);
    // compressed-tensors W4A16 (moonshotai/Kimi-K2.5): int4 packed, a bf16 scale per 32, symmetric.
    CHECK(bytes_of(R"({"config_groups": {"group_0": {"input_activations": null, "targets": ["Linear"], "weights":
        {"actorder": null, "group_size": 32, "num_bits": 4, "strategy": "group", "symmetric": true, "type": "int"}}},
        "format": "pack-quantized", "quant_method": "compressed-tensors"})") == n / 2 + r * (c / 32) * 2);
    // compressed-tensors W4A16 asymmetric with actorder group: packed zero points, and Marlin's
    // sorted g_idx plus g_idx_sort_indices (kernels/mixed_precision/marlin.py @ def725a5).
    CHECK(bytes_of(R"({"config_groups": {"group_0": {"targets": ["Linear"], "weights": {"actorder": "group",
        "group_size": 128, "num_bits": 4, "strategy": "group", "symmetric": false, "type": "int"}}},
        "quant_method": "compressed-tensors"})") == n / 2 + r * 32 * 2 + r * 32 / 2 + 2 * c * 4);
    CHECK(n / 2 + r * 32 * 2 + r * 32 / 2 + 2 * c * 4 == 8749056);
    // compressed-tensors FP8-dynamic (RedHatAI -FP8-dynamic): fp32 scale per output channel.
    CHECK(bytes_of(R"({"config_groups": {"group_0": {"input_activations": {"dynamic": true, "num_bits": 8,
        "strategy": "token", "type": "float"}, "targets": ["Linear"], "weights": {"dynamic": false, "num_bits": 8,
        "strategy": "channel", "symmetric": true, "type": "float"}}}, "quant_method": "compressed-tensors"})") ==
          n + r * 4);
    // compressed-tensors W8A8 int8: int8 values, fp32 per channel.
    CHECK(bytes_of(R"({"config_groups": {"group_0": {"input_activations": {"dynamic": true, "num_bits": 8,
        "strategy": "token", "type": "int"}, "targets": ["Linear"], "weights": {"num_bits": 8, "strategy": "channel",
        "symmetric": true, "type": "int"}}}, "quant_method": "compressed-tensors"})") == n + r * 4);
    // compressed-tensors NVFP4 (W4A4): FP8 scale per 16, weight and input global scales.
    CHECK(bytes_of(R"({"config_groups": {"group_0": {"input_activations": {"dynamic": "local", "group_size": 16,
        "num_bits": 4, "strategy": "tensor_group", "type": "float"}, "targets": ["Linear"], "weights": {"group_size": 16,
        "num_bits": 4, "strategy": "tensor_group", "symmetric": true, "type": "float"}}},
        "format": "nvfp4-pack-quantized", "quant_method": "compressed-tensors"})") == n / 2 + n / 16 + 8);
    // compressed-tensors MXFP4 (moonshotai/Kimi-K3): an E8M0 byte per 32.
    CHECK(bytes_of(R"({"config_groups": {"group_0": {"format": "mxfp4-pack-quantized", "targets": ["Linear"],
        "weights": {"group_size": 32, "num_bits": 4, "scale_dtype": "torch.uint8", "strategy": "group",
        "symmetric": true, "type": "float"}}}, "quant_method": "compressed-tensors"})") == n / 2 + n / 32);
    // ModelOpt NVFP4 (nvidia/*-NVFP4): as compressed-tensors' NVFP4, weight_scale_2 and input_scale.
    CHECK(bytes_of(R"({"quant_algo": "NVFP4", "quant_method": "modelopt", "ignore": ["lm_head"]})") ==
          n / 2 + n / 16 + 8);
    // ModelOpt FP8 (static per-tensor): weight_scale and input_scale.
    CHECK(bytes_of(R"({"config_groups": {"group_0": {"input_activations": {"dynamic": false, "num_bits": 8,
        "type": "float"}, "weights": {"dynamic": false, "num_bits": 8, "type": "float"}}}, "ignore": ["lm_head"],
        "quant_algo": "FP8", "producer": {"name": "modelopt", "version": "0.31.0"}})") == n + 8);
    // AWQ g128 (awq_marlin.py @ 2ab31a81): scales in the model dtype and qzeros (8 per int32) per
    // group, repacked at the same size; awq.py allocates qzeros even with zero_point false.
    CHECK(bytes_of(R"({"bits": 4, "group_size": 128, "modules_to_not_convert": null, "quant_method": "awq",
        "version": "gemm", "zero_point": true})") == n / 2 + r * 32 * 2 + r * 32 / 2);
    CHECK(bytes_of(R"({"bits": 4, "group_size": 128, "quant_method": "awq", "zero_point": false})") == 8716288);
    // GPTQ 4-bit g128 sym (Qwen *-GPTQ-Int4): gptq_marlin (gptq_marlin.py @ 0ede9ef3) empties qzeros
    // and g_idx at load: values and fp16 scales only, 4.125 bits a weight.
    CHECK(bytes_of(R"({"bits": 4, "damp_percent": 0.01, "desc_act": false, "group_size": 128, "quant_method": "gptq",
        "static_groups": false, "sym": true, "true_sequential": true})") == n / 2 + r * 32 * 2);
    CHECK(n / 2 + r * 32 * 2 == 8650752);
    // GPTQ 8-bit g128 with desc_act, sym: Marlin keeps the sorted g_idx and g_idx_sort_indices.
    CHECK(bytes_of(R"({"bits": 8, "desc_act": true, "group_size": 128, "quant_method": "gptq", "sym": true})") ==
          n + r * 32 * 2 + 2 * c * 4);
    CHECK(n + r * 32 * 2 + 2 * c * 4 == 17072128);
    // GPTQ asymmetric (no Marlin type): gptq.py @ e5dd90be keeps qzeros, and g_idx with desc_act.
    CHECK(bytes_of(R"({"bits": 4, "desc_act": true, "group_size": 128, "quant_method": "gptq", "sym": false})") ==
          n / 2 + r * 32 * 2 + r * 32 / 2 + c * 4);
    CHECK(bytes_of(R"({"bits": 3, "desc_act": false, "group_size": 128, "quant_method": "gptq", "sym": true})") ==
          n * 3 / 8 + r * 32 * 2 + r * 32 * 3 / 8);
    // bitsandbytes 4-bit: vLLM dequantizes a double-quantized absmax to fp32 at load
    // (bitsandbytes_loader.py @ c9e9c484 _dequantize_dq), so nf4 holds an fp32 per 64 values plus the
    // 16-entry fp32 code table either way.
    CHECK(bytes_of(R"({"bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_use_double_quant": true, "load_in_4bit": true, "load_in_8bit": false,
        "quant_method": "bitsandbytes"})") == n / 2 + n / 64 * 4 + 64);
    CHECK(n / 2 + n / 64 * 4 + 64 == 9437248);
    CHECK(bytes_of(R"({"bnb_4bit_quant_type": "nf4", "load_in_4bit": true, "quant_method": "bitsandbytes"})") ==
          9437248);
    CHECK(plan_of(R"({"load_in_4bit": true, "quant_method": "bitsandbytes"})")->schemes[0].name == "fp4");
    CHECK(bytes_of(R"({"load_in_8bit": true, "quant_method": "bitsandbytes"})") == n + r * 4);
    // HQQ 4-bit g64 (hqq_marlin.py @ 91b4f8fb): the loaded W_q / zero / scale stay beside the Marlin
    // copies, so twice values + fp16 scale + fp16 zero per 64.
    CHECK(bytes_of(R"({"quant_method": "hqq", "skip_modules": ["lm_head"], "quant_config": {"weight_quant_params":
        {"nbits": 4, "group_size": 64}}})") == 2 * (n / 2 + r * 64 * 2 * 2));
    CHECK(2 * (n / 2 + r * 64 * 2 * 2) == 18874368);
    // Forms vLLM refuses are said so.
    CHECK(plan_of(R"({"bits": 3, "group_size": 128, "quant_method": "awq"})")->not_in_vllm == "AWQ 3-bit");
    CHECK(plan_of(R"({"bits": 4, "group_size": 128, "quant_method": "gptq"})")->not_in_vllm.empty());
    CHECK(plan_of(R"({"activation_scheme": "static", "quant_method": "fp8", "weight_block_size": [128, 128]})")
              ->not_in_vllm == "fp8 weight_block_size with static activations");
    CHECK(
        plan_of(R"({"quant_method": "hqq", "quant_config": {"weight_quant_params": {"nbits": 4, "group_size": 128}}})")
            ->not_in_vllm == "HQQ 4-bit group 128");
    CHECK_FALSE(plan_of(R"({"quant_method": "quanto", "weights": "int4"})"));
}

TEST_CASE("quant: which layers each form keeps unquantized") {
    // ModelOpt's "path*" is the module and its subtree (modelopt.py apply_vllm_mapper), not layers.10.
    auto mo = plan_of(R"({"quant_algo": "NVFP4", "quant_method": "modelopt", "config_groups": {"group_0":
        {"targets": ["Linear"], "weights": {"group_size": 16, "num_bits": 4, "type": "float"}}},
        "ignore": ["language_model.lm_head", "language_model.model.layers.0.self_attn*",
                   "language_model.model.layers.1*", "*.ffn.shared_experts.*"]})");
    REQUIRE(mo);
    CHECK(mo->scheme_for("layers.0.self_attn.q_proj") == nullptr);
    CHECK(mo->scheme_for("layers.1.mlp.experts.0.up_proj") == nullptr);
    CHECK(mo->scheme_for("layers.10.mlp.experts.0.up_proj") != nullptr);
    CHECK(mo->scheme_for("layers.5.mlp.shared_experts.up_proj") == nullptr);
    CHECK(mo->scheme_for("lm_head", true) == nullptr);
    // ModelOpt MIXED_PRECISION: only the quantized_layers are quantized, each in its own algo, the
    // lm_head included (nvidia/Qwen3.6-35B-A3B-NVFP4's form).
    auto mixed = plan_of(R"({"quant_algo": "MIXED_PRECISION", "quant_method": "modelopt", "ignore": ["mtp*"],
        "quantized_layers": {"model.language_model.layers.0.linear_attn.in_proj_qkv": {"quant_algo": "FP8"},
                             "model.language_model.layers.0.mlp.experts": {"group_size": 16, "quant_algo": "W4A16_NVFP4"},
                             "lm_head": {"group_size": 16, "quant_algo": "W4A16_NVFP4"}}})");
    REQUIRE(mixed);
    REQUIRE(mixed->scheme_for("layers.0.linear_attn.in_proj_qkv"));
    CHECK(mixed->scheme_for("layers.0.linear_attn.in_proj_qkv")->name == "fp8");
    REQUIRE(mixed->scheme_for("layers.0.mlp.experts.0.down_proj"));
    CHECK(mixed->scheme_for("layers.0.mlp.experts.0.down_proj")->name == "nvfp4");
    CHECK(mixed->scheme_for("layers.0.linear_attn.out_proj") == nullptr);
    REQUIRE(mixed->scheme_for("lm_head", true));
    // fp8's modules_to_not_convert match at dot boundaries: "model.layers.1.mlp.gate" is the router,
    // not layers.1's gate_proj or layers.10.
    auto fp8 = plan_of(R"({"activation_scheme": "dynamic", "quant_method": "fp8", "weight_block_size": [128, 128],
        "modules_to_not_convert": ["lm_head", "model.layers.1.mlp.gate", "model.layers.1.input_layernorm"]})");
    REQUIRE(fp8);
    CHECK(fp8->scheme_for("layers.1.mlp.gate") == nullptr);
    CHECK(fp8->scheme_for("layers.1.mlp.gate_proj") != nullptr);
    CHECK(fp8->scheme_for("layers.10.mlp.gate") != nullptr);
    // fp8.py skips by the whole name (quant_utils.is_layer_skipped @ 4de0dd6d): a parent module listed
    // does not skip its projections; a FusedMoE layer is skipped when an experts entry contains its
    // prefix. ignored_layers wins; modules_to_not_convert only when it is empty.
    auto whole = plan_of(R"({"activation_scheme": "dynamic", "quant_method": "fp8", "ignored_layers": [],
        "modules_to_not_convert": ["model.layers.0.self_attn", "model.layers.2.self_attn.o_proj",
                                   "model.layers.3.mlp.experts.0.gate_proj"]})");
    REQUIRE(whole);
    CHECK(whole->scheme_for("layers.0.self_attn.q_proj") != nullptr);
    CHECK(whole->scheme_for("layers.2.self_attn.o_proj") == nullptr);
    CHECK(whole->scheme_for("layers.3.mlp.experts.5.down_proj") == nullptr);
    CHECK(whole->scheme_for("layers.4.mlp.experts.0.gate_proj") != nullptr);
}

// ModelOpt's config.json export (ModelOpt >= 0.29 convert_hf_quant_config_format, the form of
// Qwen/Qwen3-32B-FP8-Static-PerTensor) has config_groups, quant_algo and producer but no quant_method;
// `auto` sized it in bf16. Qwen3-32B's shape with that config: every decoder projection fp8 with a
// weight_scale and an input_scale (modelopt.py @ c9a59901 ModelOptFp8LinearMethod), the lm_head ignored.
TEST_CASE("quant: ModelOpt FP8 config without quant_method (Qwen3-32B)") {
    auto j = kvb::parse_json_dom(kvb::test::fixture_text("Qwen/Qwen3-32B"));
    j["quantization_config"] = kvb::parse_json_dom(R"({"config_groups": {"group_0": {"input_activations":
        {"dynamic": false, "num_bits": 8, "type": "float"}, "weights": {"dynamic": false, "num_bits": 8,
        "type": "float"}}}, "ignore": ["lm_head"], "quant_algo": "FP8", "kv_cache_scheme": "FP8",
        "producer": {"name": "modelopt", "version": "0.29.0"}})");
    auto r = kvb::parse_config(j.dump(), "Qwen/Qwen3-32B-FP8-Static-PerTensor");
    REQUIRE(r.ok());
    const kvb::ModelSpec& m = r.value();
    CHECK(m.quant.method == "modelopt");
    auto f = kvb::weight_format("auto", m);
    REQUIRE(f.ok());
    CHECK(f->name == "fp8");
    auto pc = kvb::count_params(m);
    REQUIRE(pc.ok());
    int64_t expect = 0;
    for (const kvb::TensorGroup& g : pc->tensors) {
        using R = kvb::TensorRole;
        const bool q = g.role == R::AttnQ || g.role == R::AttnK || g.role == R::AttnV || g.role == R::AttnOut ||
                       g.role == R::FfnGate || g.role == R::FfnUp || g.role == R::FfnDown;
        expect += g.count * (q ? g.rows * g.cols + 8 : g.rows * g.cols * 2);
    }
    auto b = kvb::weight_bytes(m, f.value());
    REQUIRE(b.ok());
    CHECK(b->bytes == expect);
    CHECK(b->bytes == 34318628352);
}

// poolside/Laguna-XS.2-FP8 (compressed-tensors FP8, 128 x 128 blocks): its ignore list keeps every
// attention projection (q, k, v, o, the g_proj gate), the router and the lm_head in bf16; the dense
// MLP, shared and routed experts are fp8 with an fp32 scale per block. Before, kvbudget read the
// top-level "bits" (absent) and sized it as w4a16: 16.90 GiB instead of 32.89 GiB.
TEST_CASE("quant: compressed-tensors FP8 block checkpoint (Laguna-XS.2-FP8)") {
    auto m = fixture("poolside/Laguna-XS.2-FP8");
    CHECK(m.quant.method == "compressed-tensors");
    CHECK(m.quant.bits == 8);
    auto f = kvb::weight_format("auto", m);
    REQUIRE(f.ok());
    CHECK(f->name == "fp8-block");
    CHECK(kvb::render_english(f->from) == "auto: quantization_config (compressed-tensors (fp8-block), 8 bits)");
    auto pc = kvb::count_params(m);
    REQUIRE(pc.ok());
    int64_t expect = 0;
    for (const kvb::TensorGroup& g : pc->tensors) {
        using R = kvb::TensorRole;
        const bool fp8 = g.role == R::FfnGate || g.role == R::FfnUp || g.role == R::FfnDown ||
                         g.role == R::ExpertGate || g.role == R::ExpertUp || g.role == R::ExpertDown;
        expect += g.count *
                  (fp8 ? g.rows * g.cols + kvb::cdiv(g.rows, 128) * kvb::cdiv(g.cols, 128) * 4 : g.rows * g.cols * 2);
    }
    auto b = kvb::weight_bytes(m, f.value());
    REQUIRE(b.ok());
    CHECK(b->bytes == expect);
    CHECK(b->bytes == 35312980736);  // tests/unit/test_laguna.cpp sums it by hand
}

// DeepSeek-V3's fp8 checkpoint stores weight_scale_inv, an fp32 per 128 x 128 block: the main model is
// 673,150,582,112 bytes. With the MTP module the checkpoint adds (one MoE layer and eh_proj at the
// model's rate, 11,646,820,392 bytes, and its own bf16 embedding and head, 2 x 926,679,040 x 2) that is
// 688,504,118,664 against the 688,586,727,753 bytes of its safetensors files (headers and the MTP
// layer's norms make the rest). kvbudget read the block size from group_size before, i.e. one scale per
// matrix: 163 MB fewer.
TEST_CASE("quant: fp8 weight_block_size (DeepSeek-V3)") {
    auto m = fixture("deepseek-ai/DeepSeek-V3");
    auto f = kvb::weight_format("auto", m);
    REQUIRE(f.ok());
    CHECK(f->fp8_block == 128);
    auto b = kvb::weight_bytes(m, f.value());
    REQUIRE(b.ok());
    CHECK(b->bytes == 673150582112);
}

// Qwen/Qwen3-30B-A3B-FP8 (quant_method fp8, weight_block_size [128, 128]): its experts' 768-wide intermediate
// size splits into 384 at TP 2 and 192 at TP 4, where fp8.py Fp8MoEMethod.create_weights stops with its
// ValueError before any memory is measured (vllm-project/vllm#25292, TP 4; #17569, Qwen3-235B-A22B-FP8 at TP 8).
TEST_CASE("quant: vLLM refuses block-fp8 experts that tensor parallelism splits off the block grid") {
    auto j = kvb::parse_json_dom(kvb::test::fixture_text("Qwen/Qwen3-30B-A3B"));
    j["quantization_config"] = kvb::parse_json_dom(
        R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]})");
    auto m = kvb::parse_config(j.dump(), "Qwen/Qwen3-30B-A3B-FP8");
    REQUIRE(m.ok());
    auto f = kvb::weight_format("auto", m.value());
    REQUIRE(f.ok());
    CHECK_FALSE(kvb::vllm_fp8_block_refusal(m.value(), f.value(), 2));
    auto r4 = kvb::vllm_fp8_block_refusal(m.value(), f.value(), 4);
    REQUIRE(r4);
    CHECK(r4->experts);
    CHECK(kvb::render_english(r4->message) ==
          "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128.");
    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.gpu_count = 4;
    in.context = 32768;
    auto b = kvb::compute_budget(m.value(), in);
    REQUIRE(b.ok());
    CHECK_FALSE(b->fits);
    CHECK(b->startup_refused);  // not memory: "REFUSED AT START-UP", not "DOES NOT FIT"
    CHECK(b->engine_error ==
          "The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128.");
    CHECK(b->log_lines.empty());  // vLLM stops while it creates the weights
    bool fix = false;
    for (const kvb::Message& n : b->notes)
        if (n.code == "vllm_fp8_moe_block_fix") fix = n.param("tp") == "2";
    CHECK(fix);
    in.gpu_count = 2;
    auto b2 = kvb::compute_budget(m.value(), in);
    REQUIRE(b2.ok());
    CHECK(b2->fits);
    CHECK_FALSE(b2->startup_refused);
    // The same experts in bf16 (another format, no blocks) load at TP 4.
    in.gpu_count = 4;
    in.weights = "bf16";
    auto bf = kvb::compute_budget(m.value(), in);
    REQUIRE(bf.ok());
    CHECK(bf->engine_error.empty());
}

namespace {
kvb::Result<kvb::ModelSpec> with_quant(const char* fixture_name, const char* name, const char* qc) {
    auto j = kvb::parse_json_dom(kvb::test::fixture_text(fixture_name));
    j["quantization_config"] = kvb::parse_json_dom(qc);
    return kvb::parse_config(j.dump(), name);
}
std::string fix_tp(const kvb::BudgetResult& b) {
    for (const kvb::Message& n : b.notes)
        if (n.code == "vllm_fp8_block_fix") return n.param("tp");
    return "";
}
}  // namespace

// The dense rule (fp8_utils.py validate_fp8_block_shape, unchanged v0.20.0 .. v0.27.1; inline in fp8.py before 0.11):
// Qwen3.5-35B-A3B's shared expert is 512 wide, 64 per rank at TP 8, and its down_proj is a RowParallelLinear, so
// vLLM stops at "Weight input_size_per_partition = 64 ..." (vllm-project/vllm PR #52915 quotes it for
// Qwen/Qwen3.6-35B-A3B-FP8, the same shapes). The shared expert is built before the routed experts (whose 64 would
// fail too), after layer 0's gated delta net: in_proj_qkvz [256, 256, 512, 512] per rank is whole blocks, in_proj_ba
// [4, 4] is a merged layer off the grid that vLLM 0.14.0 on lets through for fp8's config, out_proj's 4,096 / 8 = 512
// is whole blocks. The quantization_config is Qwen's FP8 form (quant_method fp8, weight_block_size [128, 128]) with
// no ignore list, so every linear is fp8.
TEST_CASE("quant: vLLM refuses block-fp8 dense layers that tensor parallelism splits off the block grid") {
    auto m = with_quant("Qwen/Qwen3.5-35B-A3B", "Qwen/Qwen3.5-35B-A3B-FP8",
                        R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", )"
                        R"("weight_block_size": [128, 128]})");
    REQUIRE(m.ok());
    auto f = kvb::weight_format("auto", m.value());
    REQUIRE(f.ok());
    CHECK_FALSE(kvb::vllm_fp8_block_refusal(m.value(), f.value(), 4));
    auto r8 = kvb::vllm_fp8_block_refusal(m.value(), f.value(), 8);
    REQUIRE(r8);
    CHECK_FALSE(r8->experts);
    CHECK(kvb::render_english(r8->message) ==
          "Weight input_size_per_partition = 64 is not divisible by weight quantization block_k = 128.");
    // Before 0.14.0 the merged in_proj_ba was checked part by part: 32 value heads / 8 = 4.
    auto old = kvb::vllm_fp8_block_refusal(m.value(), f.value(), 8, false);
    REQUIRE(old);
    CHECK(kvb::render_english(old->message) ==
          "Weight output_partition_size = 4 is not divisible by weight quantization block_n = 128.");

    kvb::BudgetInputs in;
    in.gpu = "h100";
    in.gpu_count = 8;
    in.context = 32768;
    auto b = kvb::compute_budget(m.value(), in);
    REQUIRE(b.ok());
    CHECK_FALSE(b->fits);
    CHECK(b->startup_refused);
    CHECK(b->engine_error ==
          "Weight input_size_per_partition = 64 is not divisible by weight quantization block_k = 128.");
    CHECK(b->log_lines.empty());
    CHECK(fix_tp(b.value()) == "4");
    // The first screen's advice keeps the 8 GPUs: TP 4 x 2 pipeline stages, sized.
    auto a = kvb::compute_answer(m.value(), in);
    REQUIRE(a.ok());
    REQUIRE(a->advice);
    CHECK(a->advice->code == "advice_vllm_tp_pp");
    CHECK(a->advice->param("tp") == "4");
    CHECK(a->advice->param("pp") == "2");
    CHECK(a->advice->param("max") == "262,144");
    CHECK(kvb::test::advised_changes(*a) ==
          std::map<std::string, std::string>{{"pipeline_parallel_size", "2"}, {"tensor_parallel_size", "4"}});
    kvb::BudgetInputs pp = in;
    pp.tensor_parallel_size = 4;
    pp.pipeline_parallel_size = 2;
    auto bpp = kvb::compute_budget(m.value(), pp);
    REQUIRE(bpp.ok());
    CHECK(bpp->fits);
    CHECK_FALSE(bpp->startup_refused);
    in.gpu_count = 4;
    auto b4 = kvb::compute_budget(m.value(), in);
    REQUIRE(b4.ok());
    CHECK(b4->fits);
    CHECK_FALSE(b4->startup_refused);
}

// Qwen/Qwen3-32B-FP8's own quantization_config (no ignore list): 64 q heads and 8 KV heads of 128, 25,600-wide MLP.
// Every split up to TP 8 is whole blocks (down_proj 3,200 per rank); at TP 16 down_proj's input is 1,600 per rank.
// Qwen/Qwen3.5-27B at TP 8 (attention o_proj 24 x 256 / 8 = 768, MLP 17,408 / 8 = 2,176, out_proj 6,144 / 8 = 768)
// loads.
TEST_CASE("quant: block-fp8 dense layers that stay on the block grid load") {
    const char* qwen_fp8 = R"({"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", )"
                           R"("weight_block_size": [128, 128]})";
    auto m = with_quant("Qwen/Qwen3-32B", "Qwen/Qwen3-32B-FP8", qwen_fp8);
    REQUIRE(m.ok());
    auto f = kvb::weight_format("auto", m.value());
    REQUIRE(f.ok());
    for (int64_t tp : {1, 2, 4, 8}) CHECK_FALSE(kvb::vllm_fp8_block_refusal(m.value(), f.value(), tp));
    auto r16 = kvb::vllm_fp8_block_refusal(m.value(), f.value(), 16);
    REQUIRE(r16);
    CHECK(kvb::render_english(r16->message) ==
          "Weight input_size_per_partition = 1600 is not divisible by weight quantization block_k = 128.");

    auto q = with_quant("Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-27B-FP8", qwen_fp8);
    REQUIRE(q.ok());
    auto qf = kvb::weight_format("auto", q.value());
    REQUIRE(qf.ok());
    CHECK_FALSE(kvb::vllm_fp8_block_refusal(q.value(), qf.value(), 8));
    // The same shapes in bf16: no blocks, nothing to check.
    auto bf = kvb::weight_format("bf16", q.value());
    REQUIRE(bf.ok());
    CHECK_FALSE(kvb::vllm_fp8_block_refusal(q.value(), bf.value(), 8));
}

// poolside/Laguna-XS.2-FP8 is compressed-tensors with a [128, 128] block scheme and its attention ignored: vLLM's
// CompressedTensorsConfig has no weight_block_size, so its merged layers are checked part by part whatever the
// release. At TP 8 layer 1's shared expert gate_up_proj (512 wide) is [64, 64] per rank.
TEST_CASE("quant: compressed-tensors block fp8 checks merged layers part by part") {
    auto m = fixture("poolside/Laguna-XS.2-FP8");
    auto f = kvb::weight_format("auto", m);
    REQUIRE(f.ok());
    CHECK_FALSE(kvb::vllm_fp8_block_refusal(m, f.value(), 4));
    auto r8 = kvb::vllm_fp8_block_refusal(m, f.value(), 8);
    REQUIRE(r8);
    CHECK_FALSE(r8->experts);
    CHECK(kvb::render_english(r8->message) ==
          "Weight output_partition_size = 64 is not divisible by weight quantization block_n = 128.");
}

// AWQ under tensor parallelism (awq.py / auto_awq.py create_weights, through AWQ-Marlin's per-layer fallback from
// 0.7.3): a row-parallel layer whose per-rank input is not whole 128-value groups stops vLLM with "The input size is
// not aligned with the quantized weight shape." Qwen/Qwen2-VL-2B-Instruct-AWQ's own config: its 8,960-wide MLP is 70
// groups, so 4,480 per rank (35) at TP 2 loads and 2,240 (17.5) at TP 4 does not (down_proj of layer 0, the first
// row-parallel layer off the grid: o_proj's 3 heads x 128 = 384 are whole groups). Users meet it as in
// vllm-project/vllm#13980 (Qwen2.5-VL-72B-Instruct-AWQ at TP 2, its log at layer 0's down_proj) and #21695
// (InternVL3-78B-AWQ, 29,568 / 128 = 231 groups, at TP 2).
TEST_CASE("quant: vLLM refuses an AWQ checkpoint whose tensor-parallel split cuts a quantization group") {
    auto m = fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ");
    auto f = kvb::weight_format("auto", m);
    REQUIRE(f.ok());
    CHECK_FALSE(kvb::vllm_awq_group_refusal(m, f.value(), 1));
    CHECK_FALSE(kvb::vllm_awq_group_refusal(m, f.value(), 2));
    auto r4 = kvb::vllm_awq_group_refusal(m, f.value(), 4);
    REQUIRE(r4);
    CHECK(kvb::render_english(r4->message) ==
          "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor "
          "parallel size.");
    CHECK(kvb::render_english(r4->detail) ==
          "at --tensor-parallel-size 4 each GPU's share of layers.0.mlp.down_proj's input is 2,240 values, not a "
          "whole number of the checkpoint's 128-value AWQ groups: vLLM's Marlin kernel cannot take it, and the AWQ "
          "kernel it falls back to stops");

    kvb::BudgetInputs in;
    in.gpu = "rtx-4090";
    in.gpu_count = 4;
    in.context = 8192;
    auto b = kvb::compute_budget(m, in);
    REQUIRE(b.ok());
    CHECK_FALSE(b->fits);
    CHECK(b->startup_refused);
    CHECK(b->engine_error ==
          "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor "
          "parallel size.");
    CHECK(b->log_lines.empty());  // vLLM stops while it creates the weights, before it measures memory
    std::string fix;
    for (const kvb::Message& n : b->notes)
        if (n.code == "vllm_awq_group_fix") fix = n.param("tp");
    CHECK(fix == "2");
    // The first screen's advice keeps the 4 GPUs: TP 2 x 2 pipeline stages, sized.
    auto a = kvb::compute_answer(m, in);
    REQUIRE(a.ok());
    REQUIRE(a->advice);
    CHECK(a->advice->code == "advice_vllm_tp_pp_awq");
    CHECK(a->advice->param("max") == "32,768");
    CHECK(kvb::test::advised_changes(*a) ==
          std::map<std::string, std::string>{{"pipeline_parallel_size", "2"}, {"tensor_parallel_size", "2"}});
    // On a T4 (no Marlin) the AWQ kernel takes every layer: the same refusal.
    kvb::BudgetInputs t4 = in;
    t4.gpu = "t4";
    auto bt4 = kvb::compute_budget(m, t4);
    REQUIRE(bt4.ok());
    CHECK(bt4->engine_error == b->engine_error);
    // Before 0.7.3 AWQ-Marlin refused in its own words, which kvbudget does not model: no refusal claimed.
    kvb::BudgetInputs old = in;
    old.engine_version = "0.7.2";
    auto bold = kvb::compute_budget(m, old);
    REQUIRE(bold.ok());
    CHECK_FALSE(bold->startup_refused);
    // The same layers in bf16 (no groups) load at TP 4.
    kvb::BudgetInputs bf = in;
    bf.weights = "bf16";
    auto bbf = kvb::compute_budget(m, bf);
    REQUIRE(bbf.ok());
    CHECK(bbf->engine_error.empty());
    in.gpu_count = 2;
    auto b2 = kvb::compute_budget(m, in);
    REQUIRE(b2.ok());
    CHECK(b2->fits);
    CHECK_FALSE(b2->startup_refused);
}

// Llama-2-7B with TheBloke/Llama-2-7B-AWQ's quantization_config: 11,008 / 128 = 86 groups, 43 per rank at TP 2 and
// 21.5 at TP 4 (vllm-project/vllm#1258 met the same 11,008 at TP 4). Its 32 heads of 128 split into whole groups at
// any TP up to 32, so the MLP decides; at TP 8 the fix is TP 2, the largest power of two that loads.
TEST_CASE("quant: an AWQ MLP split off its groups names the largest tensor-parallel size that loads") {
    auto m = with_quant("meta-llama/Llama-2-7b-hf", "TheBloke/Llama-2-7B-AWQ",
                        R"({"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", )"
                        R"("zero_point": true})");
    REQUIRE(m.ok());
    auto f = kvb::weight_format("auto", m.value());
    REQUIRE(f.ok());
    CHECK_FALSE(kvb::vllm_awq_group_refusal(m.value(), f.value(), 2));
    for (int64_t tp : {4, 8}) {
        auto r = kvb::vllm_awq_group_refusal(m.value(), f.value(), tp);
        REQUIRE(r);
        CHECK(r->detail.param("layer") == "layers.0.mlp.down_proj");
        CHECK(r->detail.param("size") == (tp == 4 ? "2,752" : "1,376"));
    }
    kvb::BudgetInputs in;
    in.gpu = "a100-80gb";
    in.gpu_count = 8;
    in.context = 4096;
    auto b = kvb::compute_budget(m.value(), in);
    REQUIRE(b.ok());
    CHECK(b->startup_refused);
    std::string fix;
    for (const kvb::Message& n : b->notes)
        if (n.code == "vllm_awq_group_fix") fix = n.param("tp");
    CHECK(fix == "2");
    // GPTQ's kernels are not modelled (see vllm_awq_group_refusal): the same shapes as GPTQ claim no refusal.
    auto g = with_quant("meta-llama/Llama-2-7b-hf", "TheBloke/Llama-2-7B-GPTQ",
                        R"({"bits": 4, "group_size": 128, "desc_act": false, "quant_method": "gptq", "sym": true})");
    REQUIRE(g.ok());
    auto gf = kvb::weight_format("auto", g.value());
    REQUIRE(gf.ok());
    CHECK_FALSE(kvb::vllm_awq_group_refusal(g.value(), gf.value(), 4));
}

// compressed-tensors WNA16 (W4A16 config_groups written by hand in compressed-tensors' form): after its
// kernel choice, compressed_tensors_wNa16.py create_weights asserts that each rank holds whole groups (v0.7.3 .. v0.24;
// verify_group_size_divides_partition's ValueError from 0.25.0), and the kernel choice fails first on some GPUs and
// releases ("Failed to find a kernel that can implement the WNA16 linear layer", vllm-project/llm-compressor#973 with
// 14,784 inputs per GPU). So vLLM stops whatever the kernel, in words that depend on it: none are claimed.
TEST_CASE("quant: vLLM refuses a compressed-tensors WNA16 checkpoint whose tensor-parallel split cuts a group") {
    auto w4a16 = [](const char* fixture_name, const char* extra) {
        return with_quant(fixture_name, "test/quantized.w4a16",
                          (std::string(R"({"quant_method": "compressed-tensors", "format": "pack-quantized",
            "ignore": ["lm_head"], "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": null,
            "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "dynamic": false)") +
                           extra + "}}}}")
                              .c_str());
    };
    // Baichuan2-13B's MLP is 13,696 wide, 107 groups of 128: 6,848 per GPU at TP 2. vLLM 0.24.0 is the last to
    // serve BaichuanForCausalLM.
    auto m = w4a16("baichuan-inc/Baichuan2-13B-Chat", R"(, "symmetric": true, "actorder": null)");
    REQUIRE(m.ok());
    kvb::BudgetInputs in;
    in.engine_version = "0.24.0";
    in.gpu = "a100-80gb";
    in.gpu_count = 2;
    in.context = 4096;
    auto a = kvb::compute_answer(m.value(), in);
    REQUIRE(a.ok());
    const kvb::BudgetResult& b = *a->budget;
    CHECK_FALSE(b.fits);
    CHECK(b.startup_refused);
    CHECK(b.engine_error.empty());
    CHECK(b.log_lines.empty());
    CHECK(kvb::render_english(b.verdict_reason) ==
          "vLLM stops as it builds this compressed-tensors checkpoint's layers.0.mlp.down_proj at "
          "--tensor-parallel-size 2: each GPU would hold 6,848 of its inputs, not a whole number of 128-value groups, "
          "which its WNA16 layers need whichever kernel takes them (an assertion until 0.24, a ValueError from 0.25.0, "
          "or before either the kernel choice's \"Failed to find a kernel that can implement the WNA16 linear "
          "layer\")");
    std::string fix;
    for (const kvb::Message& n : b.notes)
        if (n.code == "vllm_ct_wna16_group_fix") fix = n.param("tp");
    CHECK(fix == "1");
    // The same two GPUs as one tensor-parallel rank times two pipeline stages.
    REQUIRE(a->advice);
    CHECK(a->advice->code == "advice_vllm_tp_pp_wna16");
    REQUIRE(a->advice_inputs);
    CHECK(a->advice_inputs->tensor_parallel_size == 1);
    CHECK(a->advice_inputs->pipeline_parallel_size == 2);
    // At TP 1 nothing is split.
    in.gpu_count = 1;
    CHECK_FALSE(kvb::compute_budget(m.value(), in)->startup_refused);
    in.gpu_count = 2;

    // Act order ("actorder": "group") repeats the scales on every rank: no such check.
    auto ordered = w4a16("baichuan-inc/Baichuan2-13B-Chat", R"(, "symmetric": true, "actorder": "group")");
    REQUIRE(ordered.ok());
    CHECK_FALSE(kvb::compute_budget(ordered.value(), in)->startup_refused);
    // Asymmetric WNA16 is read from 0.8.5 (PR #14211): before, no claim.
    auto asym = w4a16("baichuan-inc/Baichuan2-13B-Chat", R"(, "symmetric": false, "actorder": null)");
    REQUIRE(asym.ok());
    CHECK(kvb::compute_budget(asym.value(), in)->verdict_reason.code == "vllm_ct_wna16_group");
    in.engine_version = "0.8.4";
    CHECK_FALSE(kvb::compute_budget(asym.value(), in)->startup_refused);
    in.engine_version = "";

    // Qwen2-VL-2B's 8,960-wide MLP is 70 groups: TP 2 loads, TP 4 (2,240 per GPU) does not.
    auto q = w4a16("Qwen/Qwen2-VL-2B-Instruct-AWQ", R"(, "symmetric": true, "actorder": null)");
    REQUIRE(q.ok());
    auto qf = kvb::weight_format("auto", q.value());
    REQUIRE(qf.ok());
    CHECK_FALSE(kvb::vllm_wna16_group_refusal(q.value(), qf.value(), 2, true));
    auto r4 = kvb::vllm_wna16_group_refusal(q.value(), qf.value(), 4, true);
    REQUIRE(r4);
    CHECK(r4->message.param("layer") == "layers.0.mlp.down_proj");
    CHECK(r4->message.param("size") == "2,240");
    CHECK_FALSE(r4->vllm_words);
    // An AWQ config of the same shapes is the AWQ rule's, in vLLM's words.
    CHECK_FALSE(kvb::vllm_awq_group_refusal(q.value(), qf.value(), 4));
}
