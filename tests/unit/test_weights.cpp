// Parameter counts and weight bytes. Every expected total below is a published count
// (HF safetensors metadata or llama.cpp's general.parameter_count / n_params as quoted in
// public repositories); the GGUF sizes are llama.cpp's own "size" (sum of tensor bytes)
// as printed by llama-server /v1/models or llama-bench, quoted in public repositories.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "model/model.h"
#include "model/weights.h"

using kvb::test::fixture;

namespace {

int64_t count_params_total(const kvb::ModelSpec& m) {
    auto pc = kvb::count_params(m);
    REQUIRE(pc.ok());
    return pc->total;
}

kvb::ParamCount count(const std::string& id) {
    auto pc = kvb::count_params(fixture(id));
    REQUIRE_MESSAGE(pc.ok(), (pc.ok() ? "" : pc.error().message));
    return pc.value();
}

int64_t bytes(const std::string& id, const std::string& format, int64_t given = 0, int64_t tp = 1, int64_t pp = 1) {
    auto m = fixture(id);
    auto f = kvb::weight_format(format, m);
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    auto b = kvb::weight_bytes(m, f.value(), given, tp, pp);
    REQUIRE_MESSAGE(b.ok(), (b.ok() ? "" : b.error().message));
    return b->bytes;
}

// Bytes of the GGUF file llama.cpp loads for `format` (weight_format's gguf_file).
int64_t gguf_bytes(const kvb::ModelSpec& m, const std::string& format) {
    auto f = kvb::weight_format(format, m, true);
    REQUIRE_MESSAGE(f.ok(), (f.ok() ? "" : f.error().message));
    auto b = kvb::weight_bytes(m, f.value());
    REQUIRE_MESSAGE(b.ok(), (b.ok() ? "" : b.error().message));
    return b->bytes;
}

// gpt-oss-120b's config.json is gpt-oss-20b's with 36 layers (sliding and full alternating) and
// 128 experts; every width, the vocabulary and the quantization_config are the same.
kvb::ModelSpec gpt_oss_120b() {
    std::string t = kvb::test::fixture_text("openai/gpt-oss-20b");
    auto swap = [&t](const std::string& from, const std::string& to) {
        const size_t at = t.find(from);
        REQUIRE(at != std::string::npos);
        t.replace(at, from.size(), to);
    };
    swap("\"num_hidden_layers\": 24", "\"num_hidden_layers\": 36");
    swap("\"num_local_experts\": 32", "\"num_local_experts\": 128");
    const size_t open = t.find("\"layer_types\": [");
    const size_t close = t.find(']', open);
    std::string types = "\"layer_types\": [";
    for (int i = 0; i < 36; ++i)
        types += std::string(i ? ", " : "") + (i % 2 ? "\"full_attention\"" : "\"sliding_attention\"");
    t.replace(open, close - open, types);
    auto r = kvb::parse_config(t, "openai/gpt-oss-120b");
    REQUIRE(r.ok());
    return r.value();
}

}  // namespace

TEST_CASE("parameter counts match published totals (dense)") {
    // HF safetensors totals / llama.cpp general.parameter_count.
    CHECK(count("meta-llama/Llama-3.1-8B").total == 8030261248);
    CHECK(count("meta-llama/Llama-3.1-70B").total == 70553706496);
    CHECK(count("meta-llama/Llama-2-7b-hf").total == 6738415616);
    CHECK(count("meta-llama/Llama-3.2-1B").total == 1235814400);  // tied embeddings counted once
    CHECK(count("Qwen/Qwen3-8B").total == 8190735360);            // q_norm / k_norm per head
    CHECK(count("Qwen/Qwen3-32B").total == 32762123264);
    CHECK(count("Qwen/Qwen3-0.6B").total == 596049920);            // tied
    CHECK(count("Qwen/Qwen2.5-7B-Instruct").total == 7615616512);  // q/k/v biases
    CHECK(count("mistralai/Mistral-7B-v0.1").total == 7241732096);
    CHECK(count("01-ai/Yi-34B").total == 34388917248);
    CHECK(count("baichuan-inc/Baichuan2-13B-Chat").total == 13896668160);
    CHECK(count("microsoft/Phi-3.5-mini-instruct").total == 3821079552);
    CHECK(count("microsoft/phi-4").total == 14659507200);
    CHECK(count("google/gemma-2b-it").total == 2506172416);
    CHECK(count("google/gemma-3-1b-it").total == 999885952);  // 4 norms per layer + q/k norms
    // Non-gated MLPs, LayerNorm biases, learned positions, fused qkv.
    CHECK(count("openai-community/gpt2-large").total == 774030080);
    CHECK(count("facebook/opt-1.3b").total == 1315758080);  // positions offset by 2
    CHECK(count("tiiuae/falcon-7b").total == 6921720704);   // multi-query, one norm per block
    CHECK(count("mosaicml/mpt-7b-instruct").total == 6649286656);
}

TEST_CASE("parameter counts match published totals (MoE, MLA, hybrids)") {
    auto mixtral = count("mistralai/Mixtral-8x7B-v0.1");
    CHECK(mixtral.total == 46702792704);
    CHECK(mixtral.active == 12879925248);  // 2 of 8 experts; embeddings included
    auto q30 = count("Qwen/Qwen3-30B-A3B");
    CHECK(q30.total == 30532122624);
    CHECK(q30.active == 3353032704);
    CHECK(q30.experts == 28991029248);
    // gpt-oss: biases on q/k/v/o and on every expert, attention sinks, router bias.
    // 20,914,757,184 is llama.cpp's general.parameter_count for the gpt-oss-20b GGUF.
    auto oss = count("openai/gpt-oss-20b");
    CHECK(oss.total == 20914757184);
    // DeepSeek-V3 main model without the MTP layer (checkpoint header audit: 671,026,419,200;
    // the Hub's 685B includes the 14B multi-token-prediction module vLLM does not load).
    auto v3 = count("deepseek-ai/DeepSeek-V3");
    CHECK(v3.total == 671026419200);
    CHECK(v3.experts == 653908770816);
    CHECK(count("deepseek-ai/DeepSeek-R1").total == 671026419200);
    CHECK(count("moonshotai/Kimi-K2-Instruct").total == 1026408232448);
    // Qwen3-Next: gated attention (q_proj twice as wide), gated delta net, shared expert gate.
    // Same architecture as Qwen3-Coder-Next, whose count is 79,674,391,296.
    CHECK(count("Qwen/Qwen3-Next-80B-A3B-Thinking").total == 79674391296);
    // Qwen3.5-27B text model (llama.cpp n_params of the Qwen3.5/3.6-27B GGUFs); the vision tower is separate.
    CHECK(count("Qwen/Qwen3.5-27B").total == 26895998464);
    // Nemotron-3-Nano: Mamba-2 + MoE + attention blocks (llama.cpp n_params 31,577,940,288).
    CHECK(count("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").total == 31577940288);
    // Latent MoE (moe_latent_size): routed experts in the latent width between fc1/fc2_latent_proj.
    // Nemotron-3-Super: 120,668,707,840 is llama-bench's model_n_params for its GGUF (without the MTP layer).
    CHECK(count("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8").total == 120668707840);
    // Ultra (the card's "550B"): counted at the hidden size its experts would be 2.06 T params more.
    CHECK(count("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16").total == 549308993536);
    // Nemotron-3.5-Lightning has Nano's geometry (no latent) and its count.
    CHECK(count("nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4").total == 31577940288);
    // LFM2-1.2B (the text model of LFM2.5-VL-1.6B): short-conv in_proj / conv / out_proj, the 8,192-wide
    // auto-adjusted MLP, q/k layernorms, tied embeddings. 1,170,340,608 is transformers' sum of numel for
    // Lfm2ForCausalLM (LFM2.5-1.2B-Instruct) and the GGUF's parameter count; the vision tower is separate.
    CHECK(count("LiquidAI/LFM2.5-VL-1.6B").total == 1170340608);
    // MiniMax-M1: 456B total, 45.9B active per the M1 report (active here includes 2.46B of embeddings).
    auto mm = count("MiniMaxAI/MiniMax-M1-80k");
    CHECK(mm.total == 456089655296);
    CHECK(mm.active - mm.embedding - mm.output == 45944920064);
}

TEST_CASE("breakdown adds up and vision towers are separate") {
    for (const char* id : {"meta-llama/Llama-3.1-8B", "Qwen/Qwen3-30B-A3B", "deepseek-ai/DeepSeek-V3",
                           "openai/gpt-oss-20b", "Qwen/Qwen3-Next-80B-A3B-Thinking", "nvidia/Nemotron-H-56B-Base-8K"}) {
        auto pc = count(id);
        CHECK(pc.embedding + pc.output + pc.attention + pc.mlp + pc.experts + pc.router + pc.state + pc.norms ==
              pc.total);
        CHECK(pc.active <= pc.total);
    }
    auto vl = fixture("Qwen/Qwen2.5-VL-7B-Instruct");
    auto pc = kvb::count_params(vl);
    REQUIRE(pc.ok());
    CHECK(pc->total == 7615616512);  // text model only
    CHECK(pc->vision == vl.dims.vision_params);
}

TEST_CASE("bytes per format") {
    const std::string llama = "meta-llama/Llama-3.1-8B";
    CHECK(bytes(llama, "bf16") == 2 * 8030261248LL);
    CHECK(bytes(llama, "fp32") == 4 * 8030261248LL);
    // fp8: linear weights 1 byte + one fp32 scale per matrix; embeddings, lm_head and norms stay bf16.
    // 6,979,321,856 linear params in 224 matrices; 1,050,939,392 bf16 params.
    CHECK(bytes(llama, "fp8") == 6979321856LL + 224 * 4 + 2 * 1050939392LL);
    // AWQ int4 g128: 0.5 B/weight + per group of 128 inputs one fp16 scale and a packed 4-bit zero.
    CHECK(bytes(llama, "awq") == 6979321856LL / 2 + 6979321856LL / 128 * 2 + 6979321856LL / 128 / 2 + 2 * 1050939392LL);
    // GGUF, llama.cpp's own model size for these files:
    CHECK(bytes(llama, "Q4_K_M") == 4912898048LL);                  // llama-server /v1/models "size"
    CHECK(bytes(llama, "Q4_0") == 4653375488LL);                    // Llama-3-8B Q4_0 (same tensor shapes)
    CHECK(bytes("Qwen/Qwen3-8B", "Q4_K_M") == 5021827072LL);        // bartowski Qwen_Qwen3-8B-Q4_K_M
    CHECK(bytes("Qwen/Qwen3-30B-A3B", "Q4_K_M") == 18550716416LL);  // llama-bench model_size (Qwen3-Coder-30B-A3B)
    CHECK(bytes("google/gemma-3-1b-it", "Q4_K_M") == 799525120LL);  // tied: token_embd takes the output's Q6_K
    CHECK(bytes("microsoft/phi-4", "Q8_0") == 15576944640LL);
    // Qwen3.5/3.6-27B Q4_K_M, llama-server /v1/models "size": the gated-delta-net in-projection
    // is stored as attn_qkv, which llama.cpp's quantizer treats like attn_v.
    CHECK(bytes("Qwen/Qwen3.5-27B", "Q4_K_M") == 16536406016LL);
    // Exact block arithmetic: Q8_0 is 34 bytes per 32 weights; norms stay F32.
    CHECK(bytes("Qwen/Qwen3-0.6B", "Q8_0") == 633495552LL);
}

TEST_CASE("auto follows quantization_config") {
    auto awq = fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ");
    auto f = kvb::weight_format("auto", awq);
    REQUIRE(f.ok());
    CHECK(f->name == "awq");
    CHECK(f->bits == 4);
    CHECK(f->group_size == 128);
    auto oss = fixture("openai/gpt-oss-20b");
    auto g = kvb::weight_format("auto", oss);
    REQUIRE(g.ok());
    CHECK(g->name == "mxfp4");
    // MXFP4 experts: 17 bytes per 32 weights; everything else bf16.
    auto b = kvb::weight_bytes(oss, g.value());
    REQUIRE(b.ok());
    CHECK(b->bytes == 19110297600LL / 32 * 17 + 2 * (20914757184LL - 19110297600LL));
    auto plain = fixture("Qwen/Qwen3-8B");
    auto h = kvb::weight_format("AUTO", plain);
    REQUIRE(h.ok());
    CHECK(h->name == "bf16");
}

TEST_CASE("given parameter count replaces the counted total") {
    auto m = fixture("Qwen/Qwen3-8B");
    auto f = kvb::weight_format("bf16", m);
    auto b = kvb::weight_bytes(m, f.value(), 8190735360LL + 1000);
    REQUIRE(b.ok());
    CHECK(b->params == 8190735360LL + 1000);
    CHECK(b->bytes == 2 * (8190735360LL + 1000));
}

TEST_CASE("a pre-quantized checkpoint's element count is not a parameter count") {
    auto m = fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ");
    auto f = kvb::weight_format("auto", m).value();
    auto base = kvb::weight_bytes(m, f).value();
    auto given = kvb::weight_bytes(m, f, 700000000).value();
    CHECK(given.params == base.params);
    CHECK(given.bytes == base.bytes);
    REQUIRE_FALSE(given.notes.empty());
    CHECK(render_english(given.notes[0])
              .rfind("given parameter count 700000000 ignored: the checkpoint is pre-quantized (awq)", 0) == 0);
}

TEST_CASE("tensor and pipeline parallel split") {
    auto m = fixture("meta-llama/Llama-3.1-70B");
    auto f = kvb::weight_format("bf16", m).value();
    auto one = kvb::weight_bytes(m, f, 0, 1, 1).value();
    auto tp4 = kvb::weight_bytes(m, f, 0, 4, 1).value();
    // Norms are replicated, so a rank holds a little more than a quarter.
    CHECK(tp4.per_gpu_bytes > one.bytes / 4);
    CHECK(tp4.per_gpu_bytes < one.bytes / 4 + 4 * 1024 * 1024);
    auto pp2 = kvb::weight_bytes(m, f, 0, 1, 2).value();
    REQUIRE(pp2.stage_bytes.size() == 2);
    CHECK(pp2.stage_bytes[0] + pp2.stage_bytes[1] == one.bytes);
    // vLLM's get_pp_indices: 80 layers over 2 stages -> 40 / 40; 61 over 4 -> 15, 15, 16, 15.
    CHECK(kvb::pp_layer_range(61, 0, 4) == std::make_pair<int64_t, int64_t>(0, 15));
    CHECK(kvb::pp_layer_range(61, 2, 4) == std::make_pair<int64_t, int64_t>(30, 46));
    CHECK(kvb::pp_layer_range(61, 3, 4) == std::make_pair<int64_t, int64_t>(46, 61));
}

// vLLM splits its vision encoders' parallel linears over the TP ranks (mm_encoder_tp_mode "weights"); vision heads TP
// does not divide keep the tower whole on every rank where vLLM falls back (Kimi K2.5's ViT from 0.26.0, InternViT's
// dummy heads); for the rest vLLM stops there (check_tp's vllm_tp_vision_heads).
TEST_CASE("the vision tower splits over tensor-parallel ranks when TP divides its heads") {
    auto m = fixture("Qwen/Qwen2.5-VL-7B-Instruct");
    REQUIRE(m.dims.vision_heads == 16);
    REQUIRE(m.dims.vision_params > 0);
    auto f = kvb::weight_format("bf16", m).value();
    auto text = m;
    text.dims.vision_params = 0;
    auto share = [&](const kvb::ModelSpec& with, int64_t tp) {
        return kvb::weight_bytes(with, f, 0, tp, 1).value().per_gpu_bytes -
               kvb::weight_bytes(text, f, 0, tp, 1).value().per_gpu_bytes;
    };
    const int64_t vision = m.dims.vision_params * 2;
    // Every rank holds the patch embedding (1,505,280), the blocks' RMSNorms and their proj and down biases
    // (32 x 4 x 1,280), the merger's norm (1,280) and its last bias (3,584) whole: 1,673,984 parameters.
    CHECK(m.dims.vision_replicated == 1673984);
    const int64_t whole = 1673984 * 2;
    CHECK(share(m, 1) == vision);
    CHECK(share(m, 2) == whole + (vision - whole) / 2);
    CHECK(share(m, 4) == whole + (vision - whole) / 4);
    auto twelve = m;
    twelve.dims.vision_heads = 12;
    CHECK(share(twelve, 4) == whole + (vision - whole) / 4);
    CHECK(share(twelve, 8) == vision);
    // A tower whose replicated share is not known splits whole.
    auto unknown = m;
    unknown.dims.vision_replicated = 0;
    CHECK(share(unknown, 4) == (vision + 3) / 4);
}

// Qwen3-VL-8B-Instruct's config.json (its published fields; not a fixture file, which holds only downloaded ones).
const char* kQwen3Vl8b = R"({
  "architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl", "tie_word_embeddings": false,
  "text_config": {
    "attention_bias": false, "dtype": "bfloat16", "head_dim": 128, "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 12288, "max_position_embeddings": 262144, "model_type": "qwen3_vl_text",
    "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
    "rope_scaling": {"mrope_interleaved": true, "mrope_section": [24, 20, 20], "rope_type": "default"},
    "rope_theta": 5000000, "vocab_size": 151936
  },
  "vision_config": {
    "deepstack_visual_indexes": [8, 16, 24], "depth": 27, "hidden_act": "gelu_pytorch_tanh", "hidden_size": 1152,
    "in_channels": 3, "intermediate_size": 4304, "model_type": "qwen3_vl", "num_heads": 16,
    "num_position_embeddings": 2304, "out_hidden_size": 4096, "patch_size": 16, "spatial_merge_size": 2,
    "temporal_patch_size": 2
  }
})";

// Mistral-Small-3.1-24B-Instruct-2503's config.json (its published fields, written out here). Its text_config, a
// MistralConfig, names no tie_word_embeddings: that class's default is false.
const char* kMistralSmall31 = R"({
  "architectures": ["Mistral3ForConditionalGeneration"], "image_token_index": 10, "model_type": "mistral3",
  "multimodal_projector_bias": false, "projector_hidden_act": "gelu", "spatial_merge_size": 2,
  "text_config": {
    "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120, "intermediate_size": 32768,
    "max_position_embeddings": 131072, "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 40,
    "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 1000000000.0, "sliding_window": null,
    "vocab_size": 131072
  },
  "torch_dtype": "bfloat16",
  "vision_config": {
    "head_dim": 64, "hidden_act": "silu", "hidden_size": 1024, "image_size": 1540, "intermediate_size": 4096,
    "model_type": "pixtral", "num_attention_heads": 16, "num_channels": 3, "num_hidden_layers": 24, "patch_size": 14,
    "rope_theta": 10000.0
  },
  "vision_feature_layer": -1
})";

// An InternVL config.json as its remote code (InternVLChatConfig) reads it: the fields that shape the weights, written
// out here from a printed InternVL3-1B config, whose InternViT-300M and Qwen2.5-0.5B of 151,674 tokens InternVL2.5-1B
// shares (its published total below); the 8B and 26B swap the LLM (InternLM2.5-7B / 20B of 92,553 tokens) and, for
// the 26B, the tower (InternViT-6B).
const char* kInternVl25_1b = R"({
  "architectures": ["InternVLChatModel"], "model_type": "internvl_chat", "downsample_ratio": 0.5,
  "force_image_size": 448, "select_layer": -1, "template": "internvl2_5", "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "llm_config": {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "max_position_embeddings": 32768, "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "torch_dtype": "bfloat16", "vocab_size": 151674
  },
  "vision_config": {
    "architectures": ["InternVisionModel"], "model_type": "intern_vit_6b", "hidden_size": 1024, "image_size": 448,
    "intermediate_size": 4096, "norm_type": "layer_norm", "num_attention_heads": 16, "num_channels": 3,
    "num_hidden_layers": 24, "patch_size": 14, "qk_normalization": false, "qkv_bias": true
  }
})";

// vLLM's Qwen vision towers (qwen2_vl.py, qwen2_5_vl.py, qwen3_vl.py), Gemma 3's (siglip.py, gemma3_mm.py), Llama 4's
// (mllama4.py) and Mistral 3's (mistral3.py, pixtral.py): each
// total is the checkpoint's safetensors count, text model and tower together, as the Hub and transformers report it.
TEST_CASE("the Qwen, Gemma 3, Llama 4, Mistral 3, Llama 3.2, InternVL and Phi-3.5 vision towers as vLLM builds them") {
    auto total = [](const kvb::ModelSpec& m) {
        auto pc = kvb::count_params(m);
        REQUIRE(pc.ok());
        return pc->total + pc->vision;
    };
    // Qwen2.5-VL: RMSNorms, gate / up / down with bias, no patch bias. A public fine-tuning script prints the
    // tower alone: 676,550,144.
    auto q25 = fixture("Qwen/Qwen2.5-VL-7B-Instruct");
    CHECK(q25.dims.vision_params == 676550144);
    CHECK(total(q25) == 8292166656);
    // Qwen2-VL: width embed_dim (absent: 1,280) and LayerNorms; hidden_size is the text model's, which the merger
    // projects into. The AWQ checkpoint's config lists four of the tower's fields, so the rest are the class's.
    auto q2 = fixture("Qwen/Qwen2-VL-2B-Instruct-AWQ");
    CHECK(q2.dims.vision_params == 665271296);
    CHECK(q2.dims.vision_heads == 16);
    CHECK(total(q2) == 2208985600);  // Qwen2-VL-2B-Instruct
    // Qwen2-VL-7B and 72B (their config.json's fields, written out here): the same tower, its merger into 3,584 or
    // 8,192; the Hub's published totals.
    nlohmann::json q2c = {{"architectures", {"Qwen2VLForConditionalGeneration"}},
                          {"model_type", "qwen2_vl"},
                          {"hidden_size", 3584},
                          {"intermediate_size", 18944},
                          {"max_position_embeddings", 32768},
                          {"num_attention_heads", 28},
                          {"num_hidden_layers", 28},
                          {"num_key_value_heads", 4},
                          {"rms_norm_eps", 1e-06},
                          {"rope_theta", 1000000.0},
                          {"tie_word_embeddings", false},
                          {"torch_dtype", "bfloat16"},
                          {"vocab_size", 152064},
                          {"vision_config",
                           {{"depth", 32},
                            {"embed_dim", 1280},
                            {"mlp_ratio", 4},
                            {"num_heads", 16},
                            {"in_chans", 3},
                            {"hidden_size", 3584},
                            {"patch_size", 14},
                            {"spatial_merge_size", 2},
                            {"spatial_patch_size", 14},
                            {"temporal_patch_size", 2}}}};
    auto q2_total = [&](const nlohmann::json& cfg) {
        auto m = kvb::parse_config(cfg.dump(), "Qwen/Qwen2-VL");
        REQUIRE(m.ok());
        return total(*m);
    };
    CHECK(q2_total(q2c) == 8291375616);
    q2c.update({{"hidden_size", 8192},
                {"intermediate_size", 29568},
                {"num_attention_heads", 64},
                {"num_hidden_layers", 80},
                {"num_key_value_heads", 8}});
    q2c["vision_config"]["hidden_size"] = 8192;
    CHECK(q2_total(q2c) == 73405560320);
    // Qwen3-VL and Qwen3.5: patch bias, a 2,304-row position table, LayerNorms, fc1 / fc2; Qwen3-VL's three
    // deepstack mergers, which Qwen3.5 does without.
    auto q3 = kvb::parse_config(kQwen3Vl8b, "Qwen/Qwen3-VL-8B-Instruct");
    REQUIRE(q3.ok());
    CHECK(q3->dims.vision_params == 576388336);
    CHECK(total(*q3) == 8767123696);
    CHECK(total(fixture("Qwen/Qwen3.5-27B")) == 27356728560);
    CHECK(total(fixture("Qwen/Qwen3.5-35B-A3B")) == 35107181936);
    // A Qwen3-VL config without deepstack_visual_indexes has the class's three; a Qwen3.5 one none.
    auto j = nlohmann::json::parse(kQwen3Vl8b);
    j["vision_config"].erase("deepstack_visual_indexes");
    auto q3_default = kvb::parse_config(j.dump(), "Qwen/Qwen3-VL-8B-Instruct");
    REQUIRE(q3_default.ok());
    CHECK(q3_default->dims.vision_params == 576388336);
    auto j35 = nlohmann::json::parse(kvb::test::fixture_text("Qwen/Qwen3.5-27B"));
    j35["vision_config"].erase("deepstack_visual_indexes");
    auto q35 = kvb::parse_config(j35.dump(), "Qwen/Qwen3.5-27B");
    REQUIRE(q35.ok());
    CHECK(q35->dims.vision_params == 460730096);
    // Gemma 3: SigLIP with bias everywhere, a 4,096-row position table and the post norm, no pooling head; the
    // projector's 1,152 x 2,560 matrix and RMSNorm. The generic estimate said 412,027,776. Every rank keeps the
    // embeddings, norms, row-parallel biases and the projector whole: 8,536,320.
    auto g3 = fixture("google/gemma-3-4b-it");
    CHECK(g3.dims.vision_params == 419816304);
    CHECK(g3.dims.vision_replicated == 8536320);
    CHECK(g3.dims.vision_heads == 16);
    CHECK(total(g3) == 4300079472);
    // Llama 4: the unfold patch linear, class and position embeddings, LayerNorms, biased blocks; the pixel-shuffle
    // adapter and the projector without bias. The generic estimate said 810,104,064 for an 871,932,416 tower.
    auto l4 = fixture("meta-llama/Llama-4-Scout-17B-16E-Instruct");
    CHECK(l4.dims.vision_params == 871932416);
    CHECK(l4.dims.vision_replicated == 1408 * (1 + 577 + 4 + 34 * 6));
    CHECK(total(l4) == 108641793536);
    // Mistral 3: Pixtral's blocks without bias, the projector's norm, patch merger and two linears; the text model
    // untied (23,572,403,200). Mistral-Small-3.1 and 3.2 share the count.
    auto ms = kvb::parse_config(kMistralSmall31, "mistralai/Mistral-Small-3.1-24B-Instruct-2503");
    REQUIRE(ms.ok());
    CHECK_FALSE(ms->dims.tie_word_embeddings);
    CHECK(ms->dims.vision_params == 438958080);
    CHECK(ms->dims.vision_replicated == 3 * 14 * 14 * 1024 + 1024 + 24 * 2 * 1024 + 1024 + 4096 * 1024);
    CHECK(total(*ms) == 24011361280);
    // vLLM builds the encoder only up to vision_feature_layer: -2 leaves out the last block.
    auto jm = nlohmann::json::parse(kMistralSmall31);
    jm["vision_feature_layer"] = -2;
    auto ms2 = kvb::parse_config(jm.dump(), "m");
    REQUIRE(ms2.ok());
    CHECK(ms2->dims.vision_params == 438958080 - (2 * 1024 + 4 * 1024 * 1024 + 3 * 1024 * 4096));
    // Llama 3.2 Vision: the tiled, gated position tables (73.8 M of the tower is the tile table), 32 blocks and 8
    // gated global ones, the 7,680 x 4,096 projector; the text model's eight cross-attention layers with their
    // q / k / v / o, q_norm, k_norm and gates, and embed_tokens' 8 extra rows. The tower was the generic estimate's
    // 787,645,440 and the cross-attention layers had no attention: 443 M parameters (0.83 GiB) short. The total is
    // the checkpoint's published 10,670,220,835.
    auto ml = fixture("meta-llama/Llama-3.2-11B-Vision-Instruct");
    CHECK(ml.dims.vision_params == 895028755);
    CHECK(ml.dims.vision_heads == 16);
    CHECK(ml.dims.vision_replicated ==
          1280 + 1601 * 1280 + 1 + 9LL * 4 * 1601 * 1280 + 2 * (9 * 4 * 1280 + 1) + 4 * 1280 + 40 * 5 * 1280 + 16);
    CHECK(total(ml) == 10670220835);
    // InternVL2.5: InternViT (its layer scales, qkv bias or q / k norms, LayerNorm or RMSNorm) and mlp1 from the
    // pixel-shuffled 4 x width. The generic estimate left out mlp1 and the embeddings: 34.8 M short for the 8B, 120 M
    // for the 26B.
    auto iv = nlohmann::json::parse(kInternVl25_1b);
    auto parse = [](const nlohmann::json& cfg) {
        auto m = kvb::parse_config(cfg.dump(), "OpenGVLab/InternVL2_5");
        REQUIRE(m.ok());
        return *m;
    };
    const auto iv1 = parse(iv);
    CHECK(iv1.dims.vision_params == 304012288 + 4482816);
    CHECK(iv1.dims.vision_heads == 16);
    CHECK(total(iv1) == 938193024);
    nlohmann::json lm = {{"architectures", {"InternLM2ForCausalLM"}},
                         {"model_type", "internlm2"},
                         {"hidden_size", 4096},
                         {"intermediate_size", 14336},
                         {"max_position_embeddings", 32768},
                         {"num_attention_heads", 32},
                         {"num_hidden_layers", 32},
                         {"num_key_value_heads", 8},
                         {"rms_norm_eps", 1e-05},
                         {"rope_theta", 1000000},
                         {"tie_word_embeddings", false},
                         {"torch_dtype", "bfloat16"},
                         {"vocab_size", 92553}};
    iv["llm_config"] = lm;
    CHECK(total(parse(iv)) == 8075365376);
    lm["hidden_size"] = 6144;
    lm["intermediate_size"] = 16384;
    lm["num_attention_heads"] = 48;
    lm["num_hidden_layers"] = 48;
    iv["llm_config"] = lm;
    iv["vision_config"].update({{"hidden_size", 3200},
                                {"intermediate_size", 12800},
                                {"norm_type", "rms_norm"},
                                {"num_attention_heads", 25},
                                {"num_hidden_layers", 45},
                                {"qk_normalization", true},
                                {"qkv_bias", false}});
    const auto iv26 = parse(iv);
    CHECK(iv26.dims.vision_params == 5652925824);
    CHECK(total(iv26) == 25514186112);
    // select_layer -2 builds one block fewer (vLLM's num_hidden_layers_override).
    iv["select_layer"] = -2;
    CHECK(parse(iv).dims.vision_params == 5652925824 - 122918400);
    // Phi-3.5-vision: no vision_config, a CLIP ViT-L/14-336 named in img_processor, built up to layer_idx (-2: 23
    // blocks, no post norm); HD separators and a two-linear projection into 3,072. Had no tower at all.
    nlohmann::json p3 = {{"architectures", {"Phi3VForCausalLM"}},
                         {"model_type", "phi3_v"},
                         {"hidden_size", 3072},
                         {"intermediate_size", 8192},
                         {"max_position_embeddings", 131072},
                         {"num_attention_heads", 32},
                         {"num_hidden_layers", 32},
                         {"num_key_value_heads", 32},
                         {"original_max_position_embeddings", 4096},
                         {"rms_norm_eps", 1e-05},
                         {"tie_word_embeddings", false},
                         {"torch_dtype", "bfloat16"},
                         {"vocab_size", 32064},
                         {"embd_layer",
                          {{"embedding_cls", "image"},
                           {"hd_transform_order", "sub_glb"},
                           {"projection_cls", "mlp"},
                           {"use_hd_transform", true},
                           {"with_learnable_separator", true}}},
                         {"img_processor",
                          {{"image_dim_out", 1024},
                           {"model_name", "openai/clip-vit-large-patch14-336"},
                           {"name", "clip_vision_model"},
                           {"num_img_tokens", 144}}}};
    const auto phi = parse(p3);
    CHECK(phi.multimodal);
    CHECK(phi.dims.vision_heads == 16);
    CHECK(phi.dims.vision_params == 312943616);
    // The whole encoder (layer_idx -1, as the checkpoint stores it): the published 4,146,621,440.
    p3["img_processor"]["layer_idx"] = -1;
    CHECK(total(parse(p3)) == 4146621440);
}

TEST_CASE("a GGUF of an MXFP4 checkpoint keeps its routed experts in MXFP4 (gpt-oss)") {
    // gpt-oss-20b in tensor groups (the config's shapes; llama.cpp's GGUF has the same tensors):
    //   routed experts: 24 x 3 x 32 x 2,880 x 2,880 = 19,110,297,600 weights, in MXFP4 (ggml's
    //     block_mxfp4: 32 weights in 17 bytes) = 10,152,345,600 B
    //   attention: 24 x (4,096 + 512 + 512 + 4,096) x 2,880 (q, k, v, o) = 637,009,920 weights
    //   token_embd and output: 201,088 x 2,880 each = 1,158,266,880 weights
    //   F32: norms, biases (the experts' too), sinks, router (ffn_gate_inp): 9,182,784 weights = 36,731,136 B
    auto oss = fixture("openai/gpt-oss-20b");
    const int64_t experts = 19110297600LL / 32 * 17, f32 = 4 * 9182784LL;
    const int64_t attn = 637009920LL, embd_out = 1158266880LL;
    CHECK(experts == 10152345600LL);
    // mxfp4 = llama-quantize's MXFP4_MOE (llama_tensor_get_type_impl: a 3-D tensor MXFP4, every
    // other tensor and the output Q8_0), ggml-org's gpt-oss-20b-mxfp4.gguf: 12,096,558,336 B =
    // 11.2658 GiB against llama-bench's "gpt-oss 20B MXFP4 MoE | 11.27 GiB | 20.91 B"
    // (ggml-org/llama.cpp#16991). Its load log agrees to the tensor: CPU_Mapped (token_embd)
    // 586.82 MiB = 615,329,280 B, the Q8_0 bytes of 201,088 x 2,880.
    CHECK(gguf_bytes(oss, "mxfp4") == experts + (attn + embd_out) / 32 * 34 + f32);
    {
        auto wb = kvb::weight_bytes(oss, kvb::weight_format("mxfp4", oss, true).value()).value();
        const auto pc = kvb::count_params(oss).value();
        REQUIRE(wb.tensor_bytes.size() == pc.tensors.size());
        int64_t exps = 0, embd = 0;
        for (size_t i = 0; i < pc.tensors.size(); ++i) {
            const kvb::TensorRole r = pc.tensors[i].role;
            if (r == kvb::TensorRole::ExpertGate || r == kvb::TensorRole::ExpertUp || r == kvb::TensorRole::ExpertDown)
                exps += wb.tensor_bytes[i];
            if (r == kvb::TensorRole::TokenEmbedding) embd = wb.tensor_bytes[i];
        }
        CHECK(exps == experts);
        CHECK(embd == 615329280LL);
    }
    CHECK(gguf_bytes(oss, "mxfp4") == 12096558336LL);
    CHECK(gguf_bytes(oss, "MXFP4_MOE") == 12096558336LL);
    // convert_hf_to_gguf's own output (--outtype f16 / bf16): experts repacked as MXFP4, every
    // other matrix 16-bit: 13,779,630,336 B = 12.8333 GiB, llama-bench's "GPT-OSS 20B F16 |
    // 12.83 GiB"; the converter logs total_size = 13.8G, bartowski's bf16 file is 13.79 GB.
    CHECK(gguf_bytes(oss, "bf16") == experts + 2 * (attn + embd_out) + f32);
    CHECK(gguf_bytes(oss, "fp16") == 13779630336LL);
    // The quants keep the experts too; the rest follows the type's own rules. Q8_0: every other
    // matrix Q8_0, as MXFP4_MOE (unsloth's Q8_0: 12.1 GB). Q6_K: 2,880-wide rows fall back to
    // Q8_0, only attn_output (4,096 wide) is Q6_K, 68,567,040 B less (bartowski's Q6_K file
    // 12.04 GB: these 12.03 GB plus its metadata and tokenizer). Q4_K_M: token_embd Q5_0
    // (Q4_K falls back), output Q8_0 (Q6_K falls back), attn_q / attn_k Q5_0, attn_v Q8_0 on the
    // 12 use_more_bits layers and Q5_0 on the others, attn_output Q4_K: 1,422,673,920 B outside
    // the experts, 11,611,750,656 B in all (unsloth's Q4_K_M: 11.6 GB).
    CHECK(gguf_bytes(oss, "Q8_0") == 12096558336LL);
    CHECK(gguf_bytes(oss, "Q6_K") == 12096558336LL - 24 * (11796480LL / 32 * 34 - 11796480LL / 256 * 210));
    CHECK(gguf_bytes(oss, "Q4_K_M") == experts + 1422673920LL + f32);
    CHECK(gguf_bytes(oss, "Q4_K_M") == 11611750656LL);
    // (Q4_K_M's own mix would make the experts Q5_0 and Q8_0, 2,880-wide rows falling back: over
    // 14 GB of experts, where every published file holds 10.15 GB.)
    // gpt-oss-120b, the same rule: 63,374,323,968 B = 59.0219 GiB, llama-bench's "gpt-oss 120B
    // MXFP4 MoE | 59.02 GiB | 116.83 B" (ggml-org/llama.cpp#19922); its F16 (unsloth's
    // gpt-oss-120b-F16.gguf) 65,355,994,368 B = 60.8675 GiB, llama-bench 60.87 GiB.
    auto big = gpt_oss_120b();
    CHECK(count_params_total(big) == 116829156672LL);
    CHECK(gguf_bytes(big, "mxfp4") == 63374323968LL);
    CHECK(gguf_bytes(big, "fp16") == 65355994368LL);
    // A checkpoint without quant_method mxfp4 has nothing to keep: MXFP4_MOE turns its 3-D
    // expert tensors into MXFP4 and the rest Q8_0; a dense model is all Q8_0.
    CHECK(gguf_bytes(fixture("Qwen/Qwen3-0.6B"), "mxfp4") == bytes("Qwen/Qwen3-0.6B", "Q8_0"));
    // A float GGUF of an unquantized model: matrices 16-bit, 1-D tensors F32 (266,240 of
    // Llama-3.1-8B's weights): 16,061,054,976 B = 14.958 GiB, llama-bench's "llama 8B F16 | 14.96 GiB".
    CHECK(gguf_bytes(fixture("meta-llama/Llama-3.1-8B"), "bf16") == 2 * 8030261248LL + 2 * 266240LL);
    // vLLM serves the checkpoint as it ships: experts MXFP4, the rest bf16 (unchanged).
    auto ckpt = kvb::weight_format("mxfp4", oss);
    REQUIRE(ckpt.ok());
    CHECK_FALSE(ckpt->gguf);
    CHECK(kvb::weight_bytes(oss, ckpt.value())->bytes == experts + 2 * (attn + embd_out + 9182784LL));
}

TEST_CASE("bad weights input") {
    auto m = fixture("Qwen/Qwen3-8B");
    auto f = kvb::weight_format("q3_k_xl", m);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().code == "bad_value");
    CHECK(f.error().message ==
          "unknown weights format 'q3_k_xl' (expected one of: auto, bf16, fp16, fp32, fp8, int8, awq, gptq, gptq-int8, "
          "mxfp4, Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, IQ4_XS)");
    auto ok = kvb::weight_format("bf16", m).value();
    auto neg = kvb::weight_bytes(m, ok, -5);
    REQUIRE_FALSE(neg.ok());
    CHECK(neg.error().message == "parameter count must not be negative (got -5)");
    auto pp = kvb::weight_bytes(m, ok, 0, 1, 100);
    REQUIRE_FALSE(pp.ok());
    CHECK(pp.error().message == "pipeline parallel size 100 exceeds the 36 layers of Qwen/Qwen3-8B");
    kvb::ModelSpec empty = m;
    empty.dims.hidden_size = 0;
    auto pc = kvb::count_params(empty);
    REQUIRE_FALSE(pc.ok());
    CHECK(pc.error().message == "cannot count parameters of Qwen/Qwen3-8B: hidden_size is missing or not positive");
}
