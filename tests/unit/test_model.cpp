// Normalization of real configs (tests/fixtures/configs, copied from the Hub files
// listed in SOURCES.md) into per-layer ModelSpecs.
#include <doctest/doctest.h>

#include <map>

#include "fixtures.h"
#include "model/model.h"

using namespace kvb;
using kvb::test::fixture;

namespace {

std::vector<std::string> english(const std::vector<Message>& notes) {
    std::vector<std::string> out;
    for (const Message& n : notes) out.push_back(render_english(n));
    return out;
}

struct Expect {
    const char* id;
    std::map<LayerKind, int64_t> kinds;
    int64_t kv_heads;  // of the first attention layer (0 when none)
    int64_t head_dim;
    int64_t window;  // largest sliding window / chunk
    int64_t max_pos;
};

// Layer counts follow each model card; see tests/fixtures/configs/SOURCES.md.
const Expect kAll[] = {
    {"01-ai/Yi-34B", {{LayerKind::Full, 60}}, 8, 128, 0, 4096},
    {"MiniMaxAI/MiniMax-M1-80k", {{LayerKind::Full, 10}, {LayerKind::Linear, 70}}, 8, 128, 0, 10240000},
    {"Qwen/Qwen2-VL-2B-Instruct-AWQ", {{LayerKind::Full, 28}}, 2, 128, 0, 32768},
    {"Qwen/Qwen2.5-7B-Instruct", {{LayerKind::Full, 28}}, 4, 128, 0, 32768},
    {"Qwen/Qwen2.5-VL-7B-Instruct", {{LayerKind::Full, 28}}, 4, 128, 0, 128000},
    {"Qwen/Qwen3-0.6B", {{LayerKind::Full, 28}}, 8, 128, 0, 40960},
    {"Qwen/Qwen3-30B-A3B", {{LayerKind::Full, 48}}, 4, 128, 0, 40960},
    {"Qwen/Qwen3-32B", {{LayerKind::Full, 64}}, 8, 128, 0, 40960},
    {"Qwen/Qwen3-8B", {{LayerKind::Full, 36}}, 8, 128, 0, 40960},
    {"Qwen/Qwen3-Next-80B-A3B-Thinking", {{LayerKind::Full, 12}, {LayerKind::Linear, 36}}, 2, 256, 0, 262144},
    {"Qwen/Qwen3.5-27B", {{LayerKind::Full, 16}, {LayerKind::Linear, 48}}, 4, 256, 0, 262144},
    // LFM2 text model nested in lfm2_vl: 10 short-conv layers (a conv state, kind mamba) and 6 attention layers;
    // heads are hidden_size / num_attention_heads = 64 wide.
    {"LiquidAI/LFM2.5-VL-1.6B", {{LayerKind::Full, 6}, {LayerKind::Mamba, 10}}, 8, 64, 0, 128000},
    {"allenai/Olmo-3.1-32B-Instruct", {{LayerKind::Full, 16}, {LayerKind::Sliding, 48}}, 8, 128, 4096, 65536},
    {"baichuan-inc/Baichuan2-13B-Chat", {{LayerKind::Full, 40}}, 40, 128, 0, 4096},
    {"deepseek-ai/DeepSeek-R1", {{LayerKind::Mla, 61}}, 0, 0, 0, 163840},
    {"deepseek-ai/DeepSeek-V3.2", {{LayerKind::Mla, 61}}, 0, 0, 0, 163840},
    {"deepseek-ai/DeepSeek-V3", {{LayerKind::Mla, 61}}, 0, 0, 0, 163840},
    {"facebook/opt-1.3b", {{LayerKind::Full, 24}}, 32, 64, 0, 2048},
    {"google/gemma-2b-it", {{LayerKind::Full, 18}}, 1, 256, 0, 8192},
    {"google/gemma-3-1b-it", {{LayerKind::Full, 4}, {LayerKind::Sliding, 22}}, 1, 256, 512, 32768},
    {"google/gemma-3-4b-it", {{LayerKind::Full, 5}, {LayerKind::Sliding, 29}}, 4, 256, 1024, 131072},
    {"internlm/internlm-20b", {{LayerKind::Full, 60}}, 40, 128, 0, 4096},
    {"meta-llama/Llama-2-7b-hf", {{LayerKind::Full, 32}}, 32, 128, 0, 4096},
    {"meta-llama/Llama-3.1-70B", {{LayerKind::Full, 80}}, 8, 128, 0, 131072},
    {"meta-llama/Llama-3.1-8B-Instruct", {{LayerKind::Full, 32}}, 8, 128, 0, 131072},
    {"meta-llama/Llama-3.1-8B", {{LayerKind::Full, 32}}, 8, 128, 0, 131072},
    {"meta-llama/Llama-3.2-11B-Vision-Instruct", {{LayerKind::Full, 32}, {LayerKind::None, 8}}, 8, 128, 0, 131072},
    {"meta-llama/Llama-3.2-1B-Instruct", {{LayerKind::Full, 16}}, 8, 64, 0, 131072},
    {"meta-llama/Llama-3.2-1B", {{LayerKind::Full, 16}}, 8, 64, 0, 131072},
    {"meta-llama/Llama-4-Scout-17B-16E-Instruct",
     {{LayerKind::Full, 12}, {LayerKind::Chunked, 36}},
     8,
     128,
     8192,
     10485760},
    {"microsoft/Phi-3.5-mini-instruct", {{LayerKind::Full, 32}}, 32, 96, 0, 131072},
    {"microsoft/phi-4", {{LayerKind::Full, 40}}, 10, 128, 0, 16384},
    {"mistralai/Mistral-7B-v0.1", {{LayerKind::Sliding, 32}}, 8, 128, 4096, 32768},
    {"mistralai/Mixtral-8x7B-v0.1", {{LayerKind::Full, 32}}, 8, 128, 0, 32768},
    {"moonshotai/Kimi-K2-Instruct", {{LayerKind::Mla, 61}}, 0, 0, 0, 131072},
    {"moonshotai/Kimi-Linear-48B-A3B-Instruct", {{LayerKind::Mla, 7}, {LayerKind::Linear, 20}}, 0, 0, 0, 1048576},
    {"mosaicml/mpt-7b-instruct", {{LayerKind::Full, 32}}, 32, 128, 0, 2048},
    {"nvidia/Llama-3_3-Nemotron-Super-49B-v1", {{LayerKind::Full, 49}, {LayerKind::None, 31}}, 8, 128, 0, 131072},
    {"nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16",
     {{LayerKind::Full, 6}, {LayerKind::Mamba, 23}, {LayerKind::None, 23}},
     2,
     128,
     0,
     262144},
    {"nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8",
     {{LayerKind::Full, 8}, {LayerKind::Mamba, 40}, {LayerKind::None, 40}},
     2,
     128,
     0,
     262144},
    // layers_block_type lists (no hybrid_override_pattern; Ultra has no num_hidden_layers either).
    {"nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16",
     {{LayerKind::Full, 12}, {LayerKind::Mamba, 48}, {LayerKind::None, 48}},
     2,
     128,
     0,
     262144},
    {"nvidia/NVIDIA-Nemotron-3.5-Lightning-30B-A3B-NVFP4",
     {{LayerKind::Full, 6}, {LayerKind::Mamba, 23}, {LayerKind::None, 23}},
     2,
     128,
     0,
     1048576},
    {"nvidia/Nemotron-H-56B-Base-8K",
     {{LayerKind::Full, 10}, {LayerKind::Mamba, 54}, {LayerKind::None, 54}},
     8,
     128,
     0,
     8192},
    {"openai/gpt-oss-20b", {{LayerKind::Full, 12}, {LayerKind::Sliding, 12}}, 8, 64, 128, 131072},
    {"openai-community/gpt2-large", {{LayerKind::Full, 36}}, 20, 64, 0, 1024},
    {"tiiuae/falcon-7b", {{LayerKind::Full, 32}}, 1, 64, 0, 0},
    {"zai-org/GLM-4.1V-9B-Thinking", {{LayerKind::Full, 40}}, 2, 128, 0, 65536},
};

}  // namespace

TEST_CASE("every fixture config normalizes to the layer layout of its model card") {
    for (const auto& e : kAll) {
        CAPTURE(e.id);
        ModelSpec m = fixture(e.id);
        std::map<LayerKind, int64_t> kinds;
        for (const auto& l : m.layers) kinds[l.kind]++;
        CHECK(kinds == e.kinds);
        const Layer* first = nullptr;
        for (const auto& l : m.layers) {
            if (l.kind == LayerKind::Full || l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
                first = &l;
                break;
            }
        }
        CHECK((first ? first->kv_heads : 0) == e.kv_heads);
        CHECK((first ? first->k_head_dim : 0) == e.head_dim);
        int64_t window = 0;
        for (const auto& l : m.layers) window = std::max(window, l.window);
        CHECK(window == e.window);
        CHECK(m.max_position_embeddings == e.max_pos);
        CHECK_FALSE(m.generic);
    }
}

TEST_CASE("explicit head_dim wins over hidden_size / heads") {
    // Qwen3-8B: hidden 4096 / 32 heads would be 128 anyway; Qwen3-0.6B: 1024 / 16 = 64, but head_dim is 128.
    ModelSpec m = fixture("Qwen/Qwen3-0.6B");
    CHECK(m.layers[0].k_head_dim == 128);
    CHECK(m.dims.hidden_size == 1024);
}

TEST_CASE("missing num_key_value_heads means MHA, and says so") {
    ModelSpec m = fixture("baichuan-inc/Baichuan2-13B-Chat");
    CHECK(m.layers[0].kv_heads == 40);
    REQUIRE_FALSE(m.notes.empty());
    CHECK(render_english(m.notes[0]) ==
          "num_key_value_heads is not set: multi-head attention assumed (40 KV heads, one per attention head)");
}

TEST_CASE("naming variants: GPT-2, Falcon, MPT, OPT") {
    ModelSpec gpt2 = fixture("openai-community/gpt2-large");  // n_layer, n_head, n_embd
    CHECK(gpt2.layers.size() == 36);
    CHECK(gpt2.dims.hidden_size == 1280);
    CHECK(gpt2.dims.intermediate_size == 5120);  // n_inner unset: 4 x hidden
    CHECK_FALSE(gpt2.dims.gated_mlp);
    CHECK(gpt2.dtype == "float32");
    CHECK(gpt2.max_position_embeddings == 1024);  // n_positions

    ModelSpec falcon = fixture("tiiuae/falcon-7b");  // old RW config: multi_query -> one KV head
    CHECK(falcon.layers[0].kv_heads == 1);
    CHECK(falcon.layers[0].k_head_dim == 4544 / 71);

    ModelSpec mpt = fixture("mosaicml/mpt-7b-instruct");  // d_model, n_heads, n_layers, attn_config
    CHECK(mpt.layers.size() == 32);
    CHECK(mpt.layers[0].kv_heads == 32);
    CHECK(mpt.dims.intermediate_size == 4 * 4096);  // expansion_ratio 4
    CHECK(mpt.max_position_embeddings == 2048);     // max_seq_len

    ModelSpec opt = fixture("facebook/opt-1.3b");
    CHECK(opt.dims.intermediate_size == 8192);  // ffn_dim
}

TEST_CASE("synthetic naming variants: ChatGLM, Bloom, new Falcon, MPT GQA") {
    auto chatglm = parse_config(R"({"model_type":"chatglm","num_layers":28,"num_attention_heads":32,"hidden_size":4096,
        "multi_query_attention":true,"multi_query_group_num":2,"kv_channels":128,"seq_length":131072,"padded_vocab_size":151552,
        "ffn_hidden_size":13696,"torch_dtype":"bfloat16"})",
                                "THUDM/glm-4-9b-chat");
    REQUIRE(chatglm);
    CHECK(chatglm->layers.size() == 28);
    CHECK(chatglm->layers[0].kv_heads == 2);
    CHECK(chatglm->layers[0].k_head_dim == 128);
    CHECK(chatglm->max_position_embeddings == 131072);

    auto bloom =
        parse_config(R"({"model_type":"bloom","n_layer":70,"n_head":112,"hidden_size":14336,"vocab_size":250880})",
                     "bigscience/bloom");
    REQUIRE(bloom);
    CHECK(bloom->layers.size() == 70);
    CHECK(bloom->layers[0].kv_heads == 112);
    CHECK(bloom->layers[0].k_head_dim == 128);

    auto falcon40 =
        parse_config(R"({"model_type":"falcon","num_hidden_layers":60,"num_attention_heads":128,"hidden_size":8192,
        "new_decoder_architecture":true,"num_kv_heads":8})",
                     "tiiuae/falcon-40b");
    REQUIRE(falcon40);
    CHECK(falcon40->layers[0].kv_heads == 8);
    CHECK(falcon40->layers[0].k_head_dim == 64);

    auto mpt = parse_config(R"({"model_type":"mpt","n_layers":48,"n_heads":64,"d_model":6144,
        "attn_config":{"attn_type":"grouped_query_attention","kv_n_heads":8}})",
                            "mosaicml/mpt-30b-gqa");
    REQUIRE(mpt);
    CHECK(mpt->layers[0].kv_heads == 8);
}

TEST_CASE("MLA keeps the latent and the decompressed view") {
    ModelSpec v3 = fixture("deepseek-ai/DeepSeek-V3");
    const Layer& l = v3.layers[0];
    CHECK(l.kv_lora_rank == 512);
    CHECK(l.qk_rope_head_dim == 64);
    CHECK(l.kv_heads == 128);
    CHECK(l.k_head_dim == 192);
    CHECK(l.v_head_dim == 128);
    CHECK(v3.dims.q_lora_rank == 1536);
    CHECK(v3.quant.method == "fp8");
    ModelSpec kimi = fixture("moonshotai/Kimi-K2-Instruct");
    CHECK(kimi.layers[0].kv_heads == 64);
    CHECK(kimi.dims.num_experts == 384);
    CHECK(kimi.dims.experts_per_token == 8);
}

TEST_CASE("sliding-window patterns") {
    SUBCASE("gpt-oss alternates from layer_types, sliding first") {
        ModelSpec m = fixture("openai/gpt-oss-20b");
        CHECK(m.layers[0].kind == LayerKind::Sliding);
        CHECK(m.layers[0].window == 128);
        CHECK(m.layers[1].kind == LayerKind::Full);
        CHECK(m.quant.method == "mxfp4");
        CHECK(m.dtype == "bfloat16");  // no torch_dtype, but a quantized checkpoint
    }
    SUBCASE("Gemma 3: every 6th layer global; gemma-3-4b-it's minimal text_config gets transformers' defaults") {
        ModelSpec m = fixture("google/gemma-3-4b-it");
        for (size_t i = 0; i < m.layers.size(); ++i) {
            CAPTURE(i);
            CHECK(m.layers[i].kind == ((i + 1) % 6 == 0 ? LayerKind::Full : LayerKind::Sliding));
        }
        CHECK(m.multimodal);
        CHECK(m.dtype == "bfloat16");  // only at the top level of the file
        CHECK(m.dims.vocab_size == 262208);
        CHECK(english(m.notes) ==
              std::vector<std::string>{
                  "text model read from text_config",
                  "num_attention_heads is not set: Gemma3TextConfig's default 8 used",
                  "num_key_value_heads is not set: Gemma3TextConfig's default 4 used",
                  "head_dim is not set: Gemma3TextConfig's default 256 used",
                  "vocab_size is not set: Gemma3TextConfig's default 262208 used",
                  "sliding_window_pattern is not set: Gemma 3's default 6 used (every 6th layer global)",
                  "max_position_embeddings is not set: Gemma3TextConfig's default 131072 used",
              });
    }
    SUBCASE("Mistral-7B-v0.1 slides in every layer") {
        ModelSpec m = fixture("mistralai/Mistral-7B-v0.1");
        CHECK(m.count(LayerKind::Sliding) == 32);
        CHECK(m.layers[31].window == 4096);
    }
    SUBCASE("Phi-3.5's sliding_window is set but unused") {
        ModelSpec m = fixture("microsoft/Phi-3.5-mini-instruct");
        CHECK(m.count(LayerKind::Full) == 32);
        CHECK(render_english(m.notes.back()) ==
              "sliding_window = 262144 is set but not used by phi3: every layer is full attention");
    }
    SUBCASE("Qwen2 slides only with use_sliding_window, from max_window_layers on") {
        ModelSpec off = fixture("Qwen/Qwen2.5-7B-Instruct");
        CHECK(off.count(LayerKind::Full) == 28);
        auto on = parse_config(
            R"({"model_type":"qwen2","num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,
            "hidden_size":3584,"use_sliding_window":true,"sliding_window":4096,"max_window_layers":21})",
            "qwen2-swa");
        REQUIRE(on);
        CHECK(on->count(LayerKind::Full) == 21);
        CHECK(on->count(LayerKind::Sliding) == 7);
        CHECK(on->layers[21].kind == LayerKind::Sliding);
    }
    SUBCASE("Gemma 2 alternates, sliding first") {
        auto g2 = parse_config(
            R"({"model_type":"gemma2","num_hidden_layers":42,"num_attention_heads":16,"num_key_value_heads":8,
            "head_dim":256,"hidden_size":3584,"sliding_window":4096})",
            "google/gemma-2-9b");
        REQUIRE(g2);
        CHECK(g2->count(LayerKind::Sliding) == 21);
        CHECK(g2->layers[0].kind == LayerKind::Sliding);
        CHECK(g2->layers[1].kind == LayerKind::Full);
    }
}

TEST_CASE("Llama 4: chunked local attention with every 4th (NoPE) layer global, from text_config") {
    ModelSpec m = fixture("meta-llama/Llama-4-Scout-17B-16E-Instruct");
    CHECK(m.multimodal);
    CHECK(m.layers[0].kind == LayerKind::Chunked);
    CHECK(m.layers[0].window == 8192);
    CHECK(m.layers[3].kind == LayerKind::Full);
    CHECK(m.dims.num_experts == 16);
    CHECK_FALSE(m.dims.tie_word_embeddings);  // Llama4TextConfig's default, unlike PretrainedConfig's
}

TEST_CASE("hybrid linear attention: Qwen3-Next (interval) and Qwen3.5 (layer_types, float32 ssm)") {
    ModelSpec next = fixture("Qwen/Qwen3-Next-80B-A3B-Thinking");
    CHECK(next.layers[3].kind == LayerKind::Full);
    const auto& s = next.layers[0].state;
    CHECK(next.layers[0].kind == LayerKind::Linear);
    CHECK(s.conv_kernel == 4);
    CHECK(s.conv_dim() == 2 * 16 * 128 + 32 * 128);
    CHECK(s.ssm_elems() == 32 * 128 * 128);
    CHECK(next.ssm_dtype.empty());

    ModelSpec q35 = fixture("Qwen/Qwen3.5-27B");
    CHECK(q35.ssm_dtype == "float32");
    CHECK(q35.layers[0].state.heads == 48);
    CHECK_FALSE(q35.dims.tie_word_embeddings);  // only at the top level of the file
}

TEST_CASE("Mamba hybrids: Nemotron-H pattern, Jamba period/offset, Falcon-H1 parallel mixers") {
    ModelSpec nh = fixture("nvidia/Nemotron-H-56B-Base-8K");  // contains Python's Infinity
    const auto& s = nh.layers[0].state;
    CHECK(nh.layers[0].kind == LayerKind::Mamba);
    CHECK(s.d_inner == 256 * 64);
    CHECK(s.n_groups == 8);
    CHECK(s.d_state == 256);
    CHECK(s.conv_dim() == 16384 + 2 * 8 * 256);

    auto jamba =
        parse_config(R"({"model_type":"jamba","num_hidden_layers":32,"num_attention_heads":32,"num_key_value_heads":8,
        "hidden_size":4096,"attn_layer_period":8,"attn_layer_offset":4,"mamba_d_state":16,"mamba_d_conv":4,"mamba_expand":2})",
                     "ai21labs/Jamba-v0.1");
    REQUIRE(jamba);
    CHECK(jamba->count(LayerKind::Full) == 4);
    CHECK(jamba->layers[4].kind == LayerKind::Full);
    CHECK(jamba->layers[0].state.d_inner == 8192);
    CHECK(jamba->layers[0].state.ssm_elems() == 8192 * 16);
    CHECK(jamba->layers[0].state.conv_elems() == 3 * 8192);

    auto fh1 =
        parse_config(R"({"model_type":"falcon_h1","num_hidden_layers":4,"num_attention_heads":8,"num_key_value_heads":2,
        "head_dim":64,"hidden_size":1024,"mamba_d_conv":4,"mamba_n_heads":24,"mamba_d_head":64,"mamba_d_state":128,"mamba_n_groups":1})",
                     "tiiuae/Falcon-H1-tiny");
    REQUIRE(fh1);
    CHECK(fh1->count(LayerKind::Full) == 4);
    CHECK(fh1->count(LayerKind::Mamba) == 4);
}

TEST_CASE("layers without a KV cache: Nemotron-NAS no-op attention, Mllama cross-attention") {
    ModelSpec nas = fixture("nvidia/Llama-3_3-Nemotron-Super-49B-v1");
    CHECK(nas.layers[6].kind == LayerKind::None);
    CHECK(nas.dims.layer_intermediate.size() == 80);
    ModelSpec mllama = fixture("meta-llama/Llama-3.2-11B-Vision-Instruct");
    for (int i : {3, 8, 13, 18, 23, 28, 33, 38}) CHECK(mllama.layers[static_cast<size_t>(i)].kind == LayerKind::None);
}

TEST_CASE("per-layer KV head counts (OpenELM style)") {
    auto m = parse_config(R"({"model_type":"openelm_like","num_hidden_layers":3,"num_attention_heads":8,
        "num_key_value_heads":[2,4,8],"head_dim":64,"hidden_size":512})",
                          "apple/OpenELM-tiny");
    REQUIRE(m);
    CHECK(m->layers[0].kv_heads == 2);
    CHECK(m->layers[2].kv_heads == 8);
    CHECK(m->generic);
}

TEST_CASE("unknown architectures with the generic fields are sized and flagged") {
    auto m = parse_config(R"({"model_type":"brand_new","num_hidden_layers":2,"num_attention_heads":4,"hidden_size":256,
        "num_key_value_heads":2})",
                          "someone/new-model");
    REQUIRE(m);
    CHECK(m->generic);
    CHECK(m->layers[0].k_head_dim == 64);
    CHECK(render_english(m->notes.back()) ==
          "model_type 'brand_new' is not known to kvbudget: sized from the generic fields");
}

TEST_CASE("Nemotron-H: a layers_block_type list is the pattern transformers derives, num_hidden_layers its length") {
    // transformers' NemotronHConfig: hybrid_override_pattern = the list mapped back to letters
    // (mamba M, moe E, attention *, mlp -); the layer count is the list's length.
    ModelSpec ultra = fixture("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16");  // 108 entries, no num_hidden_layers
    REQUIRE(ultra.layers.size() == 108);
    CHECK(ultra.layers[0].kind == LayerKind::Mamba);
    CHECK(ultra.layers[1].kind == LayerKind::None);
    CHECK(ultra.layers[7].kind == LayerKind::Full);  // the first "attention"
    CHECK(ultra.dims.layer_mlp[1] == 2);             // "moe"
    CHECK(ultra.layers[0].state.d_inner == 256 * 64);
    CHECK(ultra.layers[0].state.conv_dim() == 256 * 64 + 2 * 8 * 128);
    CHECK(ultra.ssm_dtype == "float32");

    // The same blocks spelt as a pattern give the same spec; the list wins when both are given.
    const std::string head = R"({"model_type":"nemotron_h","num_attention_heads":4,"num_key_value_heads":2,
        "head_dim":64,"hidden_size":256,"mamba_num_heads":8,"mamba_head_dim":32,"ssm_state_size":16,"n_groups":1,
        "conv_kernel":4,"vocab_size":100,)";
    auto listed = parse_config(
        head + R"("layers_block_type":["mamba","moe","full_attention","mlp","linear_attention"]})", "acme/listed");
    auto pattern = parse_config(head + R"("num_hidden_layers":5,"hybrid_override_pattern":"ME*-M"})", "acme/pattern");
    auto both = parse_config(head + R"("num_hidden_layers":3,"hybrid_override_pattern":"M*-",
        "layers_block_type":["mamba","moe","attention","mlp","mamba"]})",
                             "acme/both");
    REQUIRE(listed);
    REQUIRE(pattern);
    REQUIRE(both);
    for (const ModelSpec* m : {&listed.value(), &both.value()}) {
        REQUIRE(m->layers.size() == 5);
        for (size_t i = 0; i < 5; ++i) {
            CHECK(m->layers[i].kind == pattern->layers[i].kind);
            CHECK(m->dims.layer_mlp[i] == pattern->dims.layer_mlp[i]);
        }
    }
    auto bad = parse_config(head + R"("layers_block_type":["mamba","conv"]})", "acme/bad");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().message == "acme/bad: layers_block_type[1] is 'conv', which is not a known layer type");
    auto neither = parse_config(head + R"("num_hidden_layers":2})", "acme/neither");
    REQUIRE_FALSE(neither);
    CHECK(neither.error().code == "missing_field");
}

TEST_CASE("LFM2: conv layers keep conv_L_cache - 1 inputs of conv_dim channels and no SSM state") {
    ModelSpec m = fixture("LiquidAI/LFM2.5-VL-1.6B");
    CHECK(m.model_type == "lfm2");
    CHECK(m.multimodal);
    const StateGeometry& s = m.layers[0].state;
    CHECK(s.conv_kernel == 3);
    CHECK(s.d_inner == 2048);
    CHECK(s.d_state == 0);
    CHECK(s.conv_elems() == 2 * 2048);
    CHECK(s.ssm_elems() == 0);
    CHECK_FALSE(s.conv_spec_taps);  // vLLM's short_conv_state_shape takes no num_spec
    CHECK(m.layers[2].kind == LayerKind::Full);
    // block_auto_adjust_ff_dim: int(2 x 12288 / 3) = 8192, x 1.0, a multiple of 256.
    CHECK(m.dims.intermediate_size == 8192);
    // Older configs name the attention layers in full_attn_idxs instead of layer_types.
    auto old =
        parse_config(R"({"model_type":"lfm2","num_hidden_layers":4,"num_attention_heads":4,"num_key_value_heads":2,
        "hidden_size":256,"conv_L_cache":3,"vocab_size":100,"full_attn_idxs":[1,3]})",
                     "acme/lfm2-old");
    REQUIRE(old);
    CHECK(old->layers[0].kind == LayerKind::Mamba);
    CHECK(old->layers[1].kind == LayerKind::Full);
    CHECK(old->layers[1].k_head_dim == 64);
    CHECK(old->layers[3].kind == LayerKind::Full);
}
