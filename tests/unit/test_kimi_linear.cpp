// Kimi Linear (moonshotai/Kimi-Linear-48B-A3B-Instruct): MLA layers plus KDA
// layers, read from linear_attn_config (or a kimi-linear GGUF header); vLLM's hybrid block size with the MLA backend of
// the GPU, before and after 0.17; llama.cpp's KV cache and recurrent state; bad linear_attn_config input; Kimi K3's
// weights refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/message.h"
#include "engines/llamacpp.h"
#include "engines/vllm.h"
#include "fixtures.h"
#include "gguf_builder.h"
#include "kv/kv.h"
#include "model/dtype.h"
#include "model/gguf.h"
#include "model/gguf_spec.h"
#include "model/weights.h"

using namespace kvb;
using kvb::test::fixture;
using kvb::test::fixture_text;

namespace {

const char* kLinear = "moonshotai/Kimi-Linear-48B-A3B-Instruct";

VllmLayout layout(const ModelSpec& m, const VllmOptions& o) {
    auto r = vllm_layout(m, o);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

VllmCapacity capacity(const ModelSpec& m, const VllmOptions& o, int64_t avail) {
    auto r = vllm_capacity(m, o, avail);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

const VllmLayerSpec& first(const VllmLayout& l, const char* spec_type) {
    for (const auto& s : l.layers)
        if (s.spec_type == spec_type) return s;
    FAIL("no layer of spec " << spec_type);
    return l.layers.front();
}

// The real config with one edit to linear_attn_config.
Error refuse_edit(void (*edit)(nlohmann::json&)) {
    nlohmann::json j = nlohmann::json::parse(fixture_text(kLinear));
    edit(j["linear_attn_config"]);
    auto r = parse_config(j.dump(), "acme/kimi");
    REQUIRE_FALSE(r.ok());
    return r.error();
}

}  // namespace

TEST_CASE("Kimi-Linear-48B: 7 MLA layers where full_attn_layers says (1-based), 20 KDA layers") {
    const ModelSpec m = fixture(kLinear);
    CHECK(m.family == "kimi_linear");
    REQUIRE(m.layers.size() == 27);
    for (int i : {3, 7, 11, 15, 19, 23, 26}) CHECK(m.layers[size_t(i)].kind == LayerKind::Mla);
    CHECK(m.layers[0].kind == LayerKind::Linear);
    CHECK(m.layers[25].kind == LayerKind::Linear);
    const Layer& mla = m.layers[3];
    CHECK(mla.kv_lora_rank == 512);
    CHECK(mla.qk_rope_head_dim == 64);
    // KDA: q, k and v each keep (4 - 1) conv taps over 32 x 128 channels; the state is 32 x 128 x 128.
    const StateGeometry& s = m.layers[0].state;
    CHECK(s.conv_elems() == 3 * 3 * 4096);
    CHECK(s.ssm_elems() == 32 * 128 * 128);
    CHECK(s.heads == 32);
    CHECK(m.ssm_dtype == "float32");
    CHECK(m.max_position_embeddings == 1048576);  // model_max_length

    // Ideal KV: 7 x 576 x 2 B per token; per sequence 20 x (36,864 x 2 + 524,288 x 4) B of state.
    const KvDtypes d = uniform_kv_dtypes(m, vllm_kv_type("auto", m.dtype).value());
    const IdealKv kv = ideal_kv(m, d);
    CHECK(kv.bytes_per_token == 8064);
    CHECK(kv.state_bytes_per_seq == 43417600);

    // Weights: the sum of the checkpoint's 20 safetensors shards, 49,122,681,728 parameters.
    CHECK(count_params(m).value().total == 49122681728);
}

TEST_CASE("Kimi K3's latent routed experts and full-rank KDA gates are refused, not counted wrongly") {
    // Kimi K3 (kimi_k3, text model kimi_linear) has the same cache layout, but its weights follow a latent
    // routed-expert space, full-rank KDA gates and attention-residual blocks that the count does not model
    // (5.49 T against the checkpoint's 1.50 T): a verdict from that would be wrong, so the model is refused.
    const std::string want =
        "acme/kimi: Kimi K3's latent routed experts (routed_expert_hidden_size), full-rank KDA gates and "
        "attention-residual blocks are not modelled yet, so kvbudget cannot count its weights (its safetensors "
        "hold about 1.5 trillion parameters) and gives no budget built on a wrong count";
    nlohmann::json j = nlohmann::json::parse(fixture_text(kLinear));
    j["routed_expert_hidden_size"] = 3584;
    auto r = parse_config(j.dump(), "acme/kimi");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == "unsupported_architecture");
    CHECK(r.error().message == want);
    j = nlohmann::json::parse(fixture_text(kLinear));
    j["linear_attn_config"]["use_full_rank_gate"] = true;
    r = parse_config(j.dump(), "acme/kimi");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == want);
}

TEST_CASE("vLLM: Kimi Linear's attention block holds one KDA state, aligned to the MLA backend of the GPU") {
    const ModelSpec m = fixture(kLinear);
    VllmOptions o;
    o.gpu_compute_capability = 90;  // H100: FLASH_ATTN_MLA, 16-token kernels
    VllmLayout h100 = layout(m, o);
    CHECK(h100.mla_backend == "FLASH_ATTN_MLA");
    CHECK(h100.mamba_cache_mode == MambaCacheMode::Align);
    // KDA page 73,728 + 2,097,152 = 2,170,880 B; MLA 1,152 B/token: 16 x cdiv(2170880, 16 x 1152) = 1888.
    CHECK(h100.attn_block_size == 1888);
    const VllmLayerSpec& state = first(h100, "MambaSpec");
    CHECK(state.state_conv_bytes == 73728);
    CHECK(state.state_ssm_bytes == 2097152);
    CHECK(state.real_page_size_bytes == 2170880);
    CHECK(state.page_size_bytes == 1888 * 1152);
    CHECK(first(h100, "MLAAttentionSpec").page_size_bytes == 1888 * 1152);
    REQUIRE(h100.vllm_lines.size() == 2);
    CHECK(h100.vllm_lines[0] ==
          "Setting attention block size to 1888 tokens to ensure that attention page size is >= mamba page size.");
    CHECK(h100.vllm_lines[1] ==
          "Padding mamba page size by 0.19% to ensure that mamba page size and attention page size are exactly equal.");
    // 7 MLA layers, 20 KDA layers: groups of 7, so 3 KDA groups (one padding layer) and one MLA group.
    CHECK(h100.group_size == 7);
    CHECK(h100.groups.size() == 4);
    CHECK(h100.padding_layers == 1);
    // The backend's 16 tokens are only the alignment here, so the note says so rather than "blocks hold 16".
    REQUIRE_FALSE(h100.notes.empty());
    CHECK(render_english(h100.notes.back()) ==
          "On a GPU of compute capability 9.0 vLLM picks the FLASH_ATTN_MLA attention backend for MLA; its kernels "
          "take blocks in multiples of 16 tokens, and the linear-attention state raises the blocks to 1888 tokens");

    // B200: FLASHINFER_MLA's 32-token kernels. TP 1 lands on the same 1888 (59 x 32); TP 2 and 8 do not.
    o.gpu_compute_capability = 100;
    VllmLayout b200 = layout(m, o);
    CHECK(b200.mla_backend == "FLASHINFER_MLA");
    CHECK(b200.attn_block_size == 1888);
    o.tensor_parallel_size = 2;                  // KDA state halves to 1,085,440 B
    CHECK(layout(m, o).attn_block_size == 960);  // 32 x cdiv(1085440, 36864)
    o.gpu_compute_capability = 90;
    CHECK(layout(m, o).attn_block_size == 944);  // 16 x cdiv(1085440, 18432)
    o.tensor_parallel_size = 8;
    CHECK(layout(m, o).attn_block_size == 240);  // 16 x cdiv(271360, 18432)
    o.gpu_compute_capability = 100;
    CHECK(layout(m, o).attn_block_size == 256);  // 32 x cdiv(271360, 36864)

    // An fp8 cache on an H100 takes FlashMLA (64): half the bytes per token, 64-token alignment.
    o.tensor_parallel_size = 1;
    o.gpu_compute_capability = 90;
    o.kv_cache_dtype = "fp8";
    VllmLayout fp8 = layout(m, o);
    CHECK(fp8.mla_backend == "FLASHMLA");
    CHECK(fp8.attn_block_size == 3776);  // 64 x cdiv(2170880, 64 x 576)
    // The KDA recurrent state stays float32 whatever the mamba dtypes say; the conv state follows them.
    o.kv_cache_dtype = "auto";
    o.mamba_cache_dtype = "float32";
    o.mamba_ssm_cache_dtype = "bfloat16";
    const VllmLayerSpec& f32 = first(layout(m, o), "MambaSpec");
    CHECK(f32.state_conv_bytes == 147456);
    CHECK(f32.state_ssm_bytes == 2097152);
}

TEST_CASE("vLLM: speculative tokens widen gated delta net's conv state, not KDA's") {
    // mamba_utils.py: gated_delta_net_state_shape has conv_kernel_size - 1 + num_spec columns,
    // kda_state_shape takes num_spec and keeps conv_kernel_size - 1.
    const ModelSpec m = fixture(kLinear);
    VllmOptions o;
    o.gpu_compute_capability = 90;
    o.num_speculative_tokens = 3;
    VllmLayout l = layout(m, o);
    const VllmLayerSpec& kda = first(l, "MambaSpec");
    CHECK(kda.state_conv_bytes == 73728);  // 3 x 12,288 x 2 B, as without drafting
    CHECK(kda.state_ssm_bytes == 2097152);
    CHECK(kda.real_page_size_bytes == 2170880);
    CHECK(l.attn_block_size == 1888);
    // Qwen3.5-27B's gated delta net: (3 + 3) x 10,240 x 2 B = 122,880 B against 61,440 B without drafting.
    const ModelSpec q = fixture("Qwen/Qwen3.5-27B");
    VllmOptions qo;
    CHECK(first(layout(q, qo), "MambaSpec").state_conv_bytes == 61440);
    qo.num_speculative_tokens = 3;
    CHECK(first(layout(q, qo), "MambaSpec").state_conv_bytes == 122880);
}

TEST_CASE("vLLM before 0.18: an MLA hybrid aligns to 64 whatever the GPU, and the forced MLA size keeps it") {
    const ModelSpec m = fixture(kLinear);
    VllmOptions o;
    o.mla_forced_block_sizes = true;  // --engine-version 0.16.x
    for (int cc : {0, 80, 90, 100}) {
        CAPTURE(cc);
        o.gpu_compute_capability = cc;
        CHECK(layout(m, o).attn_block_size == 1920);  // 64 x cdiv(2170880, 64 x 1152)
    }
    o.gpu_compute_capability = 100;
    CHECK(layout(m, o).mla_backend == "FLASHINFER_MLA");
    o.tensor_parallel_size = 8;
    CHECK(layout(m, o).attn_block_size == 256);  // 64 x cdiv(271360, 73728)
    // 0.17 on without a GPU: the default 16-token block aligns to 16.
    o.mla_forced_block_sizes = false;
    o.gpu_compute_capability = 0;
    o.tensor_parallel_size = 1;
    CHECK(layout(m, o).attn_block_size == 1888);
}

TEST_CASE("vLLM capacity of Kimi Linear on an H100 and a B200, TP 2") {
    const ModelSpec m = fixture(kLinear);
    VllmOptions o;
    o.tensor_parallel_size = 2;
    o.max_model_len = 131072;
    const int64_t avail = int64_t(40) << 30;
    o.gpu_compute_capability = 90;
    VllmCapacity h100 = capacity(m, o, avail);
    // Page 944 x 1152 = 1,087,488 B, 7 layers per block id.
    CHECK(h100.num_blocks == avail / (944 * 1152) / 7);
    CHECK(h100.blocks_per_request == 139 + 3 * 2);  // cdiv(131072, 944) MLA blocks + 2 per KDA group (align)
    o.gpu_compute_capability = 100;
    VllmCapacity b200 = capacity(m, o, avail);
    CHECK(b200.num_blocks == avail / (960 * 1152) / 7);
    CHECK(b200.blocks_per_request == 137 + 3 * 2);
}

TEST_CASE("llama.cpp: the MLA latent for 7 layers, f32 R and S rows for 20 KDA layers") {
    const ModelSpec m = fixture(kLinear);
    LlamaOptions o;
    o.n_ctx = 4096;
    auto r = llamacpp_layout(m, o);
    REQUIRE(r.ok());
    const LlamaLayout& l = r.value();
    CHECK(l.kv_bytes == int64_t(7) * 576 * 2 * 4096);  // K only, V 0 (llama.cpp caches the MLA latent once)
    CHECK(l.recurrent.state_layers == 20);
    CHECK(l.recurrent.r_bytes == int64_t(20) * 3 * 3 * 4096 * 4);  // n_embd_r = 3 x (d_conv - 1) x n_head x 128
    CHECK(l.recurrent.s_bytes == int64_t(20) * 128 * 128 * 32 * 4);
    bool saw = false;
    for (const std::string& line : l.log_lines) {
        if (line.rfind("llama_memory_recurrent:", 0) != 0) continue;
        saw = true;
        CHECK(line ==
              "llama_memory_recurrent: size =   42.81 MiB (     1 cells,  27 layers,  1 seqs  0 rs_seq), R (f32):    "
              "2.81 MiB, S (f32):   40.00 MiB, P (f32):    0.00 MiB");
    }
    CHECK(saw);
}

TEST_CASE("a kimi_linear config without its linear_attn_config fields is refused, the field named") {
    auto missing = [](const char* key) {
        static std::string k;
        k = key;
        return refuse_edit([](nlohmann::json& lac) { lac.erase(k); });
    };
    for (const char* key : {"num_heads", "head_dim", "short_conv_kernel_size", "kda_layers", "full_attn_layers"}) {
        CAPTURE(key);
        Error e = missing(key);
        CHECK(e.code == "missing_field");
        CHECK(e.message == std::string("acme/kimi: missing field linear_attn_config.") + key);
    }
    {
        nlohmann::json j = nlohmann::json::parse(fixture_text(kLinear));
        j.erase("linear_attn_config");
        auto r = parse_config(j.dump(), "acme/kimi");
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message == "acme/kimi: missing field linear_attn_config");
    }
    Error e = refuse_edit([](nlohmann::json& lac) { lac["kda_layers"].push_back(28); });
    CHECK(e.message == "acme/kimi: linear_attn_config.kda_layers[20] = 28 is out of range (1 to 27)");
    e = refuse_edit([](nlohmann::json& lac) { lac["full_attn_layers"] = 4; });
    CHECK(e.message == "acme/kimi: linear_attn_config.full_attn_layers must be an array, got a number");
    e = refuse_edit([](nlohmann::json& lac) { lac["kda_layers"].push_back(4); });
    CHECK(e.message ==
          "acme/kimi: layer 4 is listed in both linear_attn_config.kda_layers and linear_attn_config.full_attn_layers");
    e = refuse_edit([](nlohmann::json& lac) { lac["num_heads"] = "32"; });
    CHECK(e.message.find("linear_attn_config.num_heads") != std::string::npos);
}

// Kimi-Linear-48B as llama.cpp's conversion/kimi_linear.py writes its GGUF header: head_count_kv per layer,
// 0 for a KDA layer and 1 for an MLA layer (MLA converted to MQA), ssm.conv_kernel and kda.head_dim from
// linear_attn_config, the MLA keys as deepseek2's (key_length = kv_lora_rank + rope dims). Tensors: a few, the
// reader only needs some.
namespace {

Result<ModelSpec> kimi_linear_gguf(bool with_kda_head_dim = true) {
    const std::vector<int> full = {4, 8, 12, 16, 20, 24, 27};  // 1-based, as linear_attn_config lists them
    std::vector<double> kv;
    for (int il = 1; il <= 27; ++il) kv.push_back(std::find(full.begin(), full.end(), il) != full.end() ? 1 : 0);
    kvb::test::GgufBuilder b;
    b.str("general.architecture", "kimi-linear")
        .u32("kimi-linear.block_count", 27)
        .u32("kimi-linear.context_length", 1048576)
        .u32("kimi-linear.embedding_length", 2304)
        .u32("kimi-linear.feed_forward_length", 9216)
        .u32("kimi-linear.attention.head_count", 32)
        .num_array("kimi-linear.attention.head_count_kv", GgufType::I32, 27, kv)
        .u32("kimi-linear.attention.key_length", 576)
        .u32("kimi-linear.attention.value_length", 72)
        .u32("kimi-linear.attention.kv_lora_rank", 512)
        .u32("kimi-linear.attention.key_length_mla", 192)
        .u32("kimi-linear.attention.value_length_mla", 128)
        .u32("kimi-linear.rope.dimension_count", 64)
        .u32("kimi-linear.ssm.conv_kernel", 4)
        .u32("kimi-linear.vocab_size", 163840)
        .u32("kimi-linear.expert_count", 256)
        .u32("kimi-linear.expert_used_count", 8)
        .u32("kimi-linear.expert_feed_forward_length", 1024)
        .u32("kimi-linear.expert_shared_count", 1)
        .u32("kimi-linear.leading_dense_block_count", 1)
        .tensor("token_embd.weight", {2304, 163840}, kvb::test::ggml::BF16)
        .tensor("blk.0.attn_norm.weight", {2304}, kvb::test::ggml::F32)
        .tensor("output.weight", {2304, 163840}, kvb::test::ggml::BF16);
    if (with_kda_head_dim) b.u32("kimi-linear.kda.head_dim", 128);
    const std::vector<uint8_t> bytes = b.bytes();
    GgufParse p = parse_gguf(bytes.data(), bytes.size(), "Kimi-Linear-48B-A3B-Instruct.gguf");
    REQUIRE(p.status == GgufParse::Status::Ok);
    return spec_from_gguf(p.header, "Kimi-Linear-48B-A3B-Instruct.gguf");
}

}  // namespace

TEST_CASE("GGUF kimi-linear: the same 7 MLA and 20 KDA layers as the config, the same llama.cpp cache and state") {
    auto g = kimi_linear_gguf();
    REQUIRE_MESSAGE(g.ok(), (g.ok() ? "" : g.error().message));
    const ModelSpec& m = g.value();
    const ModelSpec c = fixture(kLinear);
    CHECK(m.model_type == "kimi_linear");
    CHECK(m.family == "kimi_linear");
    CHECK(m.ssm_dtype == "float32");
    CHECK(m.max_position_embeddings == c.max_position_embeddings);
    REQUIRE(m.layers.size() == c.layers.size());
    for (size_t i = 0; i < m.layers.size(); ++i) {
        CAPTURE(i);
        const Layer &a = m.layers[i], &b = c.layers[i];
        CHECK(a.kind == b.kind);
        CHECK(a.kv_lora_rank == b.kv_lora_rank);
        CHECK(a.qk_rope_head_dim == b.qk_rope_head_dim);
        CHECK(a.kv_heads == b.kv_heads);
        CHECK(a.k_head_dim == b.k_head_dim);
        CHECK(a.v_head_dim == b.v_head_dim);
        CHECK(a.state.conv_elems() == b.state.conv_elems());
        CHECK(a.state.ssm_elems() == b.state.ssm_elems());
        CHECK(a.state.heads == b.state.heads);
    }
    CHECK(m.layers[3].kind == LayerKind::Mla);
    CHECK(m.layers[0].state.conv_elems() == 3 * 3 * 4096);
    CHECK(m.layers[0].state.ssm_elems() == 32 * 128 * 128);

    // llama.cpp at 4,096 cells: the MLA latent of 7 layers, f32 R and S rows of 20 KDA layers; the same lines.
    LlamaOptions o;
    o.n_ctx = 4096;
    auto lg = llamacpp_layout(m, o);
    auto lc = llamacpp_layout(c, o);
    REQUIRE(lg.ok());
    REQUIRE(lc.ok());
    CHECK(lg->kv_bytes == int64_t(7) * 576 * 2 * 4096);
    CHECK(lg->kv_bytes == lc->kv_bytes);
    CHECK(lg->recurrent.state_layers == 20);
    CHECK(lg->recurrent.r_bytes == int64_t(20) * 3 * 3 * 4096 * 4);
    CHECK(lg->recurrent.s_bytes == int64_t(20) * 128 * 128 * 32 * 4);
    CHECK(lg->recurrent.r_bytes == lc->recurrent.r_bytes);
    CHECK(lg->recurrent.s_bytes == lc->recurrent.s_bytes);
    CHECK(lg->log_lines == lc->log_lines);

    // And the ideal per-token and per-sequence bytes kvbudget reports.
    const KvDtypes dg = uniform_kv_dtypes(m, vllm_kv_type("auto", "bfloat16").value());
    const KvDtypes dc = uniform_kv_dtypes(c, vllm_kv_type("auto", c.dtype).value());
    CHECK(ideal_kv(m, dg).bytes_per_token == 8064);
    CHECK(ideal_kv(m, dg).state_bytes_per_seq == ideal_kv(c, dc).state_bytes_per_seq);
}

TEST_CASE("GGUF kimi-linear without kda.head_dim is refused, the key named") {
    auto g = kimi_linear_gguf(false);
    REQUIRE_FALSE(g.ok());
    CHECK(g.error().code == "missing_field");
    CHECK(g.error().message == "Kimi-Linear-48B-A3B-Instruct.gguf: kimi-linear.kda.head_dim is missing");
}
