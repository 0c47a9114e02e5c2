// Real GGUF files, rebuilt as headers: the metadata llama.cpp printed for each file
// ("llama_model_loader: - kv N: key type = value"), and the tensor list its loader
// creates for that architecture (names and shapes from llama.cpp's create_tensor
// calls; types from the file's quantization, checked against the printed
// "- type X: N tensors" counts). The reader's sums must give llama.cpp's printed
// "file size" and "model params", and the ModelSpec must give its llama_kv_cache lines.
// Each fixture cites the public log it transcribes; tests/fixtures/gguf/SOURCES.md
// lists them with what each log shows.
#include <doctest/doctest.h>

#include <functional>

#include "base/units.h"
#include "budget/budget.h"
#include "engines/llamacpp.h"
#include "fixtures.h"
#include "gguf_builder.h"
#include "model/gguf.h"
#include "model/gguf_spec.h"

using namespace kvb;
using kvb::test::GgufBuilder;
namespace gt = kvb::test::ggml;

namespace {

struct T {
    std::string name;
    std::vector<int64_t> ne;
    int layer = -1;
};
using TypeRule = std::function<uint32_t(const T&)>;

bool one_d(const T& t) {
    return t.ne.size() == 1;
}
bool has(const T& t, const char* s) {
    return t.name.find(s) != std::string::npos;
}
std::string blk(int il, const char* n) {
    return "blk." + std::to_string(il) + "." + n;
}

// ---- tensor lists, as llama-model.cpp / src/models/*.cpp create them --------------

// LLM_ARCH_LLAMA: token_embd, output_norm, output, [rope_freqs], per layer attn_norm,
// attn_q/k/v/output, ffn_norm, ffn_gate/up/down.
std::vector<T> llama_tensors(int n_layer, int64_t embd, int64_t heads, int64_t kv, int64_t hd, int64_t ff,
                             int64_t vocab, bool rope_freqs) {
    std::vector<T> t = {
        {"token_embd.weight", {embd, vocab}}, {"output_norm.weight", {embd}}, {"output.weight", {embd, vocab}}};
    if (rope_freqs) t.push_back({"rope_freqs.weight", {hd / 2}});
    for (int il = 0; il < n_layer; ++il) {
        t.push_back({blk(il, "attn_norm.weight"), {embd}, il});
        t.push_back({blk(il, "attn_q.weight"), {embd, heads * hd}, il});
        t.push_back({blk(il, "attn_k.weight"), {embd, kv * hd}, il});
        t.push_back({blk(il, "attn_v.weight"), {embd, kv * hd}, il});
        t.push_back({blk(il, "attn_output.weight"), {heads * hd, embd}, il});
        t.push_back({blk(il, "ffn_norm.weight"), {embd}, il});
        t.push_back({blk(il, "ffn_gate.weight"), {embd, ff}, il});
        t.push_back({blk(il, "ffn_up.weight"), {embd, ff}, il});
        t.push_back({blk(il, "ffn_down.weight"), {ff, embd}, il});
    }
    return t;
}

// LLM_ARCH_OPENAI_MOE (gpt-oss): biased projections, attention sinks, biased experts.
std::vector<T> gptoss_tensors(int n_layer, int64_t embd, int64_t heads, int64_t kv, int64_t hd, int64_t ff_exp,
                              int64_t n_exp, int64_t vocab) {
    std::vector<T> t = {
        {"token_embd.weight", {embd, vocab}}, {"output_norm.weight", {embd}}, {"output.weight", {embd, vocab}}};
    for (int il = 0; il < n_layer; ++il) {
        t.push_back({blk(il, "attn_norm.weight"), {embd}, il});
        t.push_back({blk(il, "post_attention_norm.weight"), {embd}, il});
        t.push_back({blk(il, "attn_q.weight"), {embd, heads * hd}, il});
        t.push_back({blk(il, "attn_q.bias"), {heads * hd}, il});
        t.push_back({blk(il, "attn_k.weight"), {embd, kv * hd}, il});
        t.push_back({blk(il, "attn_k.bias"), {kv * hd}, il});
        t.push_back({blk(il, "attn_v.weight"), {embd, kv * hd}, il});
        t.push_back({blk(il, "attn_v.bias"), {kv * hd}, il});
        t.push_back({blk(il, "attn_output.weight"), {heads * hd, embd}, il});
        t.push_back({blk(il, "attn_output.bias"), {embd}, il});
        t.push_back({blk(il, "attn_sinks.weight"), {heads}, il});
        t.push_back({blk(il, "ffn_gate_inp.weight"), {embd, n_exp}, il});
        t.push_back({blk(il, "ffn_gate_inp.bias"), {n_exp}, il});
        t.push_back({blk(il, "ffn_gate_exps.weight"), {embd, ff_exp, n_exp}, il});
        t.push_back({blk(il, "ffn_gate_exps.bias"), {ff_exp, n_exp}, il});
        t.push_back({blk(il, "ffn_up_exps.weight"), {embd, ff_exp, n_exp}, il});
        t.push_back({blk(il, "ffn_up_exps.bias"), {ff_exp, n_exp}, il});
        t.push_back({blk(il, "ffn_down_exps.weight"), {ff_exp, embd, n_exp}, il});
        t.push_back({blk(il, "ffn_down_exps.bias"), {embd, n_exp}, il});
    }
    return t;
}

// LLM_ARCH_DEEPSEEK2 (V3 / R1 geometry). `split` = the conversion that stores
// attn_k_b / attn_v_b (MLA cache) instead of attn_kv_b.
std::vector<T> deepseek2_tensors(bool split) {
    const int n_layer = 61, n_dense = 3;
    const int64_t embd = 7168, heads = 128, q_lora = 1536, kv_lora = 512, nope = 128, rope = 64, v = 128;
    const int64_t ff = 18432, ff_exp = 2048, n_exp = 256, vocab = 129280;
    std::vector<T> t = {
        {"token_embd.weight", {embd, vocab}}, {"output_norm.weight", {embd}}, {"output.weight", {embd, vocab}}};
    for (int il = 0; il < n_layer; ++il) {
        t.push_back({blk(il, "attn_norm.weight"), {embd}, il});
        t.push_back({blk(il, "attn_q_a_norm.weight"), {q_lora}, il});
        t.push_back({blk(il, "attn_kv_a_norm.weight"), {kv_lora}, il});
        t.push_back({blk(il, "attn_q_a.weight"), {embd, q_lora}, il});
        t.push_back({blk(il, "attn_q_b.weight"), {q_lora, heads * (nope + rope)}, il});
        t.push_back({blk(il, "attn_kv_a_mqa.weight"), {embd, kv_lora + rope}, il});
        if (split) {
            t.push_back({blk(il, "attn_k_b.weight"), {nope, kv_lora, heads}, il});
            t.push_back({blk(il, "attn_v_b.weight"), {kv_lora, v, heads}, il});
        } else {
            t.push_back({blk(il, "attn_kv_b.weight"), {kv_lora, heads * (nope + v)}, il});
        }
        t.push_back({blk(il, "attn_output.weight"), {heads * v, embd}, il});
        t.push_back({blk(il, "ffn_norm.weight"), {embd}, il});
        if (il < n_dense) {
            t.push_back({blk(il, "ffn_gate.weight"), {embd, ff}, il});
            t.push_back({blk(il, "ffn_up.weight"), {embd, ff}, il});
            t.push_back({blk(il, "ffn_down.weight"), {ff, embd}, il});
        } else {
            t.push_back({blk(il, "ffn_gate_inp.weight"), {embd, n_exp}, il});
            t.push_back({blk(il, "exp_probs_b.bias"), {n_exp}, il});
            t.push_back({blk(il, "ffn_gate_exps.weight"), {embd, ff_exp, n_exp}, il});
            t.push_back({blk(il, "ffn_up_exps.weight"), {embd, ff_exp, n_exp}, il});
            t.push_back({blk(il, "ffn_down_exps.weight"), {ff_exp, embd, n_exp}, il});
            t.push_back({blk(il, "ffn_gate_shexp.weight"), {embd, ff_exp}, il});
            t.push_back({blk(il, "ffn_up_shexp.weight"), {embd, ff_exp}, il});
            t.push_back({blk(il, "ffn_down_shexp.weight"), {ff_exp, embd}, il});
        }
    }
    return t;
}

// LLM_ARCH_QWEN35 (src/models/qwen35.cpp load_tensors): every `interval`-th layer is
// gated full attention (q has a gate half), the others gated delta nets.
std::vector<T> qwen35_tensors(int n_layer, int64_t embd, int64_t heads, int64_t kv, int64_t hd, int64_t ff,
                              int64_t vocab, int64_t d_state, int64_t n_group, int64_t dt_rank, int64_t conv,
                              int interval) {
    std::vector<T> t = {
        {"token_embd.weight", {embd, vocab}}, {"output_norm.weight", {embd}}, {"output.weight", {embd, vocab}}};
    const int64_t key_dim = d_state * n_group, value_dim = d_state * dt_rank, conv_dim = 2 * key_dim + value_dim;
    for (int il = 0; il < n_layer; ++il) {
        t.push_back({blk(il, "attn_norm.weight"), {embd}, il});
        t.push_back({blk(il, "post_attention_norm.weight"), {embd}, il});
        if ((il + 1) % interval == 0) {
            t.push_back({blk(il, "attn_q.weight"), {embd, hd * heads * 2}, il});
            t.push_back({blk(il, "attn_k.weight"), {embd, hd * kv}, il});
            t.push_back({blk(il, "attn_v.weight"), {embd, hd * kv}, il});
            t.push_back({blk(il, "attn_output.weight"), {hd * heads, embd}, il});
            t.push_back({blk(il, "attn_q_norm.weight"), {hd}, il});
            t.push_back({blk(il, "attn_k_norm.weight"), {hd}, il});
        } else {
            t.push_back({blk(il, "attn_qkv.weight"), {embd, conv_dim}, il});
            t.push_back({blk(il, "attn_gate.weight"), {embd, value_dim}, il});
            t.push_back({blk(il, "ssm_conv1d.weight"), {conv, conv_dim}, il});
            t.push_back({blk(il, "ssm_dt.bias"), {dt_rank}, il});
            t.push_back({blk(il, "ssm_a"), {dt_rank}, il});
            t.push_back({blk(il, "ssm_beta.weight"), {embd, dt_rank}, il});
            t.push_back({blk(il, "ssm_alpha.weight"), {embd, dt_rank}, il});
            t.push_back({blk(il, "ssm_norm.weight"), {d_state}, il});
            t.push_back({blk(il, "ssm_out.weight"), {value_dim, embd}, il});
        }
        t.push_back({blk(il, "ffn_gate.weight"), {embd, ff}, il});
        t.push_back({blk(il, "ffn_down.weight"), {ff, embd}, il});
        t.push_back({blk(il, "ffn_up.weight"), {embd, ff}, il});
    }
    return t;
}

// ---- quantization rules -------------------------------------------------------------

// Q8_0 / MXFP4 conversions: vectors, routers, expert-score biases stay f32.
uint32_t q8_0_rule(const T& t) {
    if (one_d(t) || has(t, "ffn_gate_inp") || has(t, ".bias") || has(t, "ssm_conv1d")) return gt::F32;
    return gt::Q8_0;
}
// ggml-org's gpt-oss MXFP4 files: experts MXFP4, other matrices Q8_0.
uint32_t gptoss_rule(const T& t) {
    if (has(t, "_exps.weight")) return gt::MXFP4;
    return q8_0_rule(t);
}
// llama-quant.cpp llama_tensor_get_type for LLAMA_FTYPE_MOSTLY_Q4_K_M on a 32-layer llama:
// output Q6_K; attn_v and ffn_down Q6_K where use_more_bits(i, n) (first and last eighth,
// every third layer between); everything else Q4_K, vectors f32.
uint32_t q4_k_m_llama_rule(const T& t) {
    if (one_d(t)) return gt::F32;
    if (t.name == "output.weight") return gt::Q6_K;
    auto more_bits = [](int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; };
    if ((has(t, "attn_v.weight") || has(t, "ffn_down.weight")) && more_bits(t.layer, 32)) return gt::Q6_K;
    return gt::Q4_K;
}

// ---- building the header(s) ---------------------------------------------------------

using Meta = std::function<void(GgufBuilder&)>;

// One file, or `shards` files with the split.* keys (gguf-split: the first shard holds
// the metadata, every shard split.no / split.count / split.tensors.count).
std::vector<GgufHeader> build(const Meta& meta, const std::vector<T>& tensors, const TypeRule& rule, int shards = 1) {
    std::vector<GgufBuilder> b(static_cast<size_t>(shards));
    meta(b[0]);
    for (int s = 0; s < shards; ++s) {
        if (shards > 1) {
            b[static_cast<size_t>(s)].u16("split.no", static_cast<uint16_t>(s));
            b[static_cast<size_t>(s)].i32("split.tensors.count", static_cast<int32_t>(tensors.size()));
            b[static_cast<size_t>(s)].u16("split.count", static_cast<uint16_t>(shards));
        }
    }
    const size_t per = (tensors.size() + static_cast<size_t>(shards) - 1) / static_cast<size_t>(shards);
    for (size_t k = 0; k < tensors.size(); ++k) b[k / per].tensor(tensors[k].name, tensors[k].ne, rule(tensors[k]));
    std::vector<GgufHeader> out;
    for (auto& x : b) {
        auto bytes = x.bytes();
        // The builder writes no tensor data: the header is parsed as the prefix of the file.
        auto p = parse_gguf(bytes.data(), bytes.size(), "fixture.gguf");
        REQUIRE_MESSAGE(p.ok(), p.error.message);
        out.push_back(std::move(p.header));
    }
    return out;
}

ModelSpec spec(const std::vector<GgufHeader>& h, const std::string& name) {
    auto m = h.size() == 1 ? spec_from_gguf(h[0], name) : spec_from_gguf_shards(h, name);
    REQUIRE_MESSAGE(m.ok(), (m.ok() ? "" : m.error().message));
    REQUIRE(m->gguf);
    return m.value();
}

LlamaLayout layout(const ModelSpec& m, int64_t ctx, int64_t np = 1, int64_t ub = 512, bool unified = false) {
    LlamaOptions o;
    o.n_ctx = ctx;
    o.n_seq_max = np;
    o.n_ubatch = ub;
    o.kv_unified = unified;
    auto l = llamacpp_layout(m, o);
    REQUIRE_MESSAGE(l.ok(), (l.ok() ? "" : l.error().message));
    return l.value();
}

std::vector<std::string> types(const ModelSpec& m) {
    return llamacpp_type_lines(*m.gguf);
}

// gpt-oss metadata as ggml-org's conversion writes it (kv 7..23 of the logs below).
void gptoss_meta(GgufBuilder& b, uint32_t layers, uint32_t experts) {
    b.str("general.architecture", "gpt-oss")
        .str("general.type", "model")
        .str("general.name", layers == 24 ? "Gpt Oss 20b" : "Gpt Oss 120b")
        .str("general.basename", "gpt-oss")
        .str("general.size_label", layers == 24 ? "20B" : "120B")
        .str("general.license", "apache-2.0")
        .str_array("general.tags", 2)
        .u32("gpt-oss.block_count", layers)
        .u32("gpt-oss.context_length", 131072)
        .u32("gpt-oss.embedding_length", 2880)
        .u32("gpt-oss.feed_forward_length", 2880)
        .u32("gpt-oss.attention.head_count", 64)
        .u32("gpt-oss.attention.head_count_kv", 8)
        .f32("gpt-oss.rope.freq_base", 150000.0f)
        .f32("gpt-oss.attention.layer_norm_rms_epsilon", 1e-5f)
        .u32("gpt-oss.expert_count", experts)
        .u32("gpt-oss.expert_used_count", 4)
        .u32("gpt-oss.attention.key_length", 64)
        .u32("gpt-oss.attention.value_length", 64)
        .u32("gpt-oss.attention.sliding_window", 128)
        .u32("gpt-oss.expert_feed_forward_length", 2880)
        .str("gpt-oss.rope.scaling.type", "yarn")
        .f32("gpt-oss.rope.scaling.factor", 32.0f)
        .u32("gpt-oss.rope.scaling.original_context_length", 4096)
        .str("tokenizer.ggml.model", "gpt2")
        .str("tokenizer.ggml.pre", "gpt-4o")
        .str_array("tokenizer.ggml.tokens", 201088)
        .num_array("tokenizer.ggml.token_type", GgufType::I32, 201088, {1})
        .str_array("tokenizer.ggml.merges", 446189)
        .u32("tokenizer.ggml.bos_token_id", 199998)
        .u32("tokenizer.ggml.eos_token_id", 200002)
        .u32("tokenizer.ggml.padding_token_id", 199999)
        .str("tokenizer.chat_template", "{#- ... #}")
        .u32("general.quantization_version", 2)
        .u32("general.file_type", 38);
}

// DeepSeek-V3 / R1 metadata (deepseek2.* keys of the logs below). `split`: the
// conversion with key_length = kv_lora_rank + rope and the *_mla lengths.
void deepseek_meta(GgufBuilder& b, bool split, uint32_t file_type) {
    b.str("general.architecture", "deepseek2")
        .str("general.type", "model")
        .u32("deepseek2.block_count", 61)
        .u32("deepseek2.context_length", 163840)
        .u32("deepseek2.embedding_length", 7168)
        .u32("deepseek2.feed_forward_length", 18432)
        .u32("deepseek2.attention.head_count", 128)
        .u32("deepseek2.attention.head_count_kv", split ? 1 : 128)
        .f32("deepseek2.rope.freq_base", 10000.0f)
        .f32("deepseek2.attention.layer_norm_rms_epsilon", 1e-6f)
        .u32("deepseek2.expert_used_count", 8)
        .u32("general.file_type", file_type)
        .u32("deepseek2.leading_dense_block_count", 3)
        .u32("deepseek2.vocab_size", 129280)
        .u32("deepseek2.attention.q_lora_rank", 1536)
        .u32("deepseek2.attention.kv_lora_rank", 512)
        .u32("deepseek2.attention.key_length", split ? 576 : 192)
        .u32("deepseek2.attention.value_length", split ? 512 : 128);
    if (split) b.u32("deepseek2.attention.key_length_mla", 192).u32("deepseek2.attention.value_length_mla", 128);
    b.u32("deepseek2.expert_feed_forward_length", 2048)
        .u32("deepseek2.expert_count", 256)
        .u32("deepseek2.expert_shared_count", 1)
        .f32("deepseek2.expert_weights_scale", 2.5f)
        .boolean("deepseek2.expert_weights_norm", true)
        .u32("deepseek2.expert_gating_func", 2)
        .u32("deepseek2.rope.dimension_count", 64)
        .str("deepseek2.rope.scaling.type", "yarn")
        .f32("deepseek2.rope.scaling.factor", 40.0f)
        .u32("deepseek2.rope.scaling.original_context_length", 4096)
        .f32("deepseek2.rope.scaling.yarn_log_multiplier", 0.1f)
        .str("tokenizer.ggml.model", "gpt2")
        .str("tokenizer.ggml.pre", "deepseek-v3")
        .str_array("tokenizer.ggml.tokens", 129280)
        .num_array("tokenizer.ggml.token_type", GgufType::I32, 129280, {1})
        .str_array("tokenizer.ggml.merges", 127741)
        .u32("tokenizer.ggml.bos_token_id", 0)
        .u32("tokenizer.ggml.eos_token_id", 1)
        .u32("general.quantization_version", 2);
}

// Qwen3.5 (qwen35.*) metadata; `ssm` = {conv, state, groups, dt_rank, inner}.
void qwen35_meta(GgufBuilder& b, uint32_t layers, uint32_t embd, uint32_t ff, uint32_t heads, uint32_t kv,
                 uint32_t dt_rank, uint32_t inner) {
    b.str("general.architecture", "qwen35")
        .str("general.type", "model")
        .u32("qwen35.block_count", layers)
        .u32("qwen35.context_length", 262144)
        .u32("qwen35.embedding_length", embd)
        .u32("qwen35.feed_forward_length", ff)
        .u32("qwen35.attention.head_count", heads)
        .u32("qwen35.attention.head_count_kv", kv)
        .num_array("qwen35.rope.dimension_sections", GgufType::I32, 4, {11, 11, 10, 0})
        .f32("qwen35.rope.freq_base", 10000000.0f)
        .f32("qwen35.attention.layer_norm_rms_epsilon", 1e-6f)
        .u32("qwen35.attention.key_length", 256)
        .u32("qwen35.attention.value_length", 256)
        .u32("qwen35.ssm.conv_kernel", 4)
        .u32("qwen35.ssm.state_size", 128)
        .u32("qwen35.ssm.group_count", 16)
        .u32("qwen35.ssm.time_step_rank", dt_rank)
        .u32("qwen35.ssm.inner_size", inner)
        .u32("qwen35.full_attention_interval", 4)
        .u32("qwen35.rope.dimension_count", 64)
        .str("tokenizer.ggml.model", "gpt2")
        .str("tokenizer.ggml.pre", "qwen35")
        .str_array("tokenizer.ggml.tokens", 248320)
        .str_array("tokenizer.ggml.merges", 247587)
        .u32("tokenizer.ggml.eos_token_id", 248046)
        .u32("general.quantization_version", 2)
        .u32("general.file_type", 7);
}

}  // namespace

// 1. Dense GQA. bartowski/Meta-Llama-3-8B-Instruct-GGUF Q4_K_M.
//    Metadata: abetlen/llama-cpp-python#1577 (Meta-Llama-3-8B-Instruct, 22 kv, 291 tensors).
//    Per-tensor types (attn_v / ffn_down q6_K on use_more_bits layers): mozilla-ai/llamafile#122.
//    KV line: tests/fixtures/engine-logs.md L1 (llama-server -c 8192 -np 1).
//    Params: ikawrakow/ik_llama.cpp#84 prints "model params = 8.030 B" for Llama-3.1-8B (same tensors + rope_freqs).
TEST_CASE("GGUF Llama-3-8B-Instruct Q4_K_M: 291 tensors, 8.03 B params, the llama_kv_cache line") {
    auto h = build(
        [](GgufBuilder& b) {
            b.str("general.architecture", "llama")
                .str("general.name", "models")
                .u32("llama.block_count", 32)
                .u32("llama.context_length", 8192)
                .u32("llama.embedding_length", 4096)
                .u32("llama.feed_forward_length", 14336)
                .u32("llama.attention.head_count", 32)
                .u32("llama.attention.head_count_kv", 8)
                .f32("llama.rope.freq_base", 500000.0f)
                .f32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
                .u32("general.file_type", 15)
                .u32("llama.vocab_size", 128256)
                .u32("llama.rope.dimension_count", 128)
                .str("tokenizer.ggml.model", "gpt2")
                .str("tokenizer.ggml.pre", "llama-bpe")
                .str_array("tokenizer.ggml.tokens", 128256)
                .num_array("tokenizer.ggml.token_type", GgufType::I32, 128256, {1})
                .str_array("tokenizer.ggml.merges", 280147)
                .u32("tokenizer.ggml.bos_token_id", 128000)
                .u32("tokenizer.ggml.eos_token_id", 128009)
                .str("tokenizer.chat_template", "{% set loop_messages = messages %}")
                .u32("general.quantization_version", 2);
        },
        llama_tensors(32, 4096, 32, 8, 128, 14336, 128256, false), q4_k_m_llama_rule);
    ModelSpec m = spec(h, "Meta-Llama-3-8B-Instruct-Q4_K_M");
    CHECK(m.source == "gguf");
    CHECK(m.model_type == "llama");
    CHECK(m.layers.size() == 32);
    CHECK(m.max_position_embeddings == 8192);
    CHECK(types(m) ==
          std::vector<std::string>{"type  f32:   65 tensors", "type q4_K:  193 tensors", "type q6_K:   33 tensors"});
    CHECK(m.gguf->n_tensors == 291);
    CHECK(m.gguf->params == 8030261248);
    CHECK(llamacpp_model_params(m.gguf->params) == "8.03 B");
    // Not in the cited logs: 4.58 GiB = the 4.92 GB bartowski's page lists for this file.
    CHECK(llamacpp_file_size(m.gguf->tensor_bytes, m.gguf->params) == "4.58 GiB (4.89 BPW)");
    CHECK(!m.dims.tie_word_embeddings);
    CHECK(
        layout(m, 8192).log_lines ==
        std::vector<std::string>{"llama_kv_cache: size = 1024.00 MiB (  8192 cells,  32 layers,  1/1 seqs), K (f16):  "
                                 "512.00 MiB, V (f16):  512.00 MiB"});
    // The llama.cpp budget of this file weighs its own tensors, not an estimate of a Q4_K_M.
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu = "rtx-4090";
    in.context = 8192;
    auto b = compute_budget(m, in);
    REQUIRE(b.ok());
    CHECK(b->weights.bytes == m.gguf->tensor_bytes);
    CHECK(b->weights.params == 8030261248);
    CHECK(b->weights.format.name == "gguf");
    // With -ngl 99 llama.cpp prints "CPU buffer size = 281.81 MiB" (token_embd, the input layer,
    // never offloaded) and "CUDA0 buffer size = 4403.50 MiB": the GPU holds the rest.
    CHECK(b->per_gpu.weights_bytes == 4617396224LL);
    CHECK(m.gguf->tensor_bytes - 4617396224LL == 295501824LL);  // 281.81 MiB
    CHECK(b->per_gpu.kv_bytes == 1073741824);
    CHECK(b->command == "llama-server -m Meta-Llama-3-8B-Instruct-Q4_K_M.gguf -c 8192 -np 1 -ngl 99");
    CHECK(render_english(b->notes[1]) == "llama.cpp: weights are the GGUF file's own tensors, " +
                                             format_bytes(m.gguf->tensor_bytes) + " (8,030,261,248 parameters)");
}

// 2. MoE + sliding window. ggml-org/gpt-oss-20b-GGUF gpt-oss-20b-mxfp4.gguf (35 kv, 459 tensors).
//    ikawrakow/ik_llama.cpp#822 (mainline build 6699): metadata, "model params = 20.91 B", and the iswa
//    lines at -c 131072 (tests/fixtures/engine-logs.md L4). ggml-org/llama.cpp#17609: the same file's
//    kv 18..34 and "type f32: 289 tensors".
TEST_CASE("GGUF gpt-oss-20b MXFP4: 20.91 B params, 289 f32 tensors, the iswa KV lines") {
    auto h = build([](GgufBuilder& b) { gptoss_meta(b, 24, 32); },
                   gptoss_tensors(24, 2880, 64, 8, 64, 2880, 32, 201088), gptoss_rule);
    REQUIRE(h[0].kv.size() == 35);
    ModelSpec m = spec(h, "gpt-oss-20b-mxfp4");
    CHECK(m.model_type == "gpt_oss");
    CHECK(m.count(LayerKind::Sliding) == 12);
    CHECK(m.count(LayerKind::Full) == 12);
    CHECK(m.layers[0].kind == LayerKind::Sliding);  // set_swa_pattern(2): even layers slide
    CHECK(m.layers[0].window == 128);
    CHECK(m.gguf->n_tensors == 459);
    CHECK(types(m) ==
          std::vector<std::string>{"type  f32:  289 tensors", "type q8_0:   98 tensors", "type mxfp4:   72 tensors"});
    CHECK(m.gguf->params == 20914757184);
    CHECK(llamacpp_model_params(m.gguf->params) == "20.91 B");
    CHECK(m.dims.num_experts == 32);
    CHECK(m.dims.experts_per_token == 4);
    CHECK(layout(m, 131072).log_lines ==
          std::vector<std::string>{"llama_kv_cache_iswa: creating non-SWA KV cache, size = 131072 cells",
                                   "llama_kv_cache: size = 3072.00 MiB (131072 cells,  12 layers,  1/1 seqs), K (f16): "
                                   "1536.00 MiB, V (f16): 1536.00 MiB",
                                   "llama_kv_cache_iswa: creating     SWA KV cache, size = 768 cells",
                                   "llama_kv_cache: size =   18.00 MiB (   768 cells,  12 layers,  1/1 seqs), K (f16): "
                                   "   9.00 MiB, V (f16):    9.00 MiB"});
}

// 3. Multi-shard. ggml-org/gpt-oss-120b-GGUF in 2 shards, ggml-org/llama.cpp#15253: split.count 2,
//    split.tensors.count 687, "type f32: 433 / q8_0: 146 / mxfp4: 108", "file size = 59.02 GiB (4.34 BPW)".
//    KV lines of the same model: ollama/ollama#16480 (bundled llama-server, -np 2, n_ctx 262144, n_ubatch 1024).
TEST_CASE("GGUF gpt-oss-120b MXFP4, 2 shards: every shard's tensors, 59.02 GiB, the 2-stream iswa lines") {
    auto h = build([](GgufBuilder& b) { gptoss_meta(b, 36, 128); },
                   gptoss_tensors(36, 2880, 64, 8, 64, 2880, 128, 201088), gptoss_rule, 2);
    REQUIRE(h.size() == 2);
    ModelSpec m = spec(h, "gpt-oss-120b-mxfp4");
    CHECK(m.gguf->shards == 2);
    CHECK(m.gguf->n_tensors == 687);
    CHECK(types(m) ==
          std::vector<std::string>{"type  f32:  433 tensors", "type q8_0:  146 tensors", "type mxfp4:  108 tensors"});
    CHECK(llamacpp_file_size(m.gguf->tensor_bytes, m.gguf->params) == "59.02 GiB (4.34 BPW)");
    // OpenAI's model card: 116.8B parameters (quoted in JonathanChavezTamales/llm-leaderboard#78).
    CHECK(llamacpp_model_params(m.gguf->params) == "116.83 B");
    auto l = layout(m, 262144, 2, 1024);
    REQUIRE(l.log_lines.size() == 4);
    CHECK(l.log_lines[0] == "llama_kv_cache_iswa: creating non-SWA KV cache, size = 131072 cells");
    CHECK(l.log_lines[1] ==
          "llama_kv_cache: size = 9216.00 MiB (131072 cells,  18 layers,  2/2 seqs), K (f16): 4608.00 MiB, V (f16): "
          "4608.00 MiB");
    CHECK(l.log_lines[2] == "llama_kv_cache_iswa: creating     SWA KV cache, size = 1280 cells");
    CHECK(l.log_lines[3].rfind("llama_kv_cache: size =   90.00 MiB (  1280 cells,  18 layers,  2/2 seqs)", 0) == 0);

    // A missing shard, shards out of order, or a shard count that disagrees are refused.
    std::vector<GgufHeader> one = {h[0]};
    CHECK(spec_from_gguf_shards(one, "x").error().message == "x: the model is split in 2 files; shard 2 is missing");
    std::vector<GgufHeader> swapped = {h[1], h[0]};
    CHECK(spec_from_gguf_shards(swapped, "x").error().detail.code == "gguf_split_mismatch");
    std::vector<GgufHeader> three = {h[0], h[1], h[1]};
    CHECK(spec_from_gguf_shards(three, "x").error().detail.code == "gguf_split_mismatch");
}

// 4. DeepSeek without the split MLA tensors, 15 shards. unsloth DeepSeek-R1 Q8_0,
//    ikawrakow/ik_llama.cpp#285: split.count 15, split.tensors.count 1025, "type f32: 361 / q8_0: 664",
//    "file size = 664.29 GiB (8.50 BPW)", n_embd_head_k = 192, n_embd_head_v = 128 (per-head K/V cache).
//    Metadata: ggml-org/llama.cpp#11141 / ollama/ollama#9170 (key_length 192, value_length 128).
TEST_CASE("GGUF DeepSeek-R1 Q8_0 without attn_k_b/attn_v_b: per-head K and V, 664.29 GiB in 15 shards") {
    auto h = build([](GgufBuilder& b) { deepseek_meta(b, false, 7); }, deepseek2_tensors(false), q8_0_rule, 15);
    ModelSpec m = spec(h, "DeepSeek-R1-Q8_0");
    CHECK(m.gguf->shards == 15);
    CHECK(m.gguf->n_tensors == 1025);
    CHECK(types(m) == std::vector<std::string>{"type  f32:  361 tensors", "type q8_0:  664 tensors"});
    CHECK(llamacpp_file_size(m.gguf->tensor_bytes, m.gguf->params) == "664.29 GiB (8.50 BPW)");
    CHECK(llamacpp_model_params(m.gguf->params) == "671.03 B");
    CHECK(!m.gguf->split_mla);
    REQUIRE(m.count(LayerKind::Full) == 61);
    CHECK(m.layers[0].kv_heads == 128);
    CHECK(m.layers[0].k_head_dim == 192);
    CHECK(m.layers[0].v_head_dim == 128);
    bool noted = false;
    for (const auto& n : m.notes) noted |= render_english(n).find("without the split MLA tensors") != std::string::npos;
    CHECK(noted);
    // 128 x (192 + 128) f16 values per layer and token: 71x the 576-wide latent.
    auto l = layout(m, 8192);
    CHECK(l.bytes_per_token == 61 * 128 * (192 + 128) * 2);
    CHECK(l.log_lines[0] ==
          "llama_kv_cache: size = 39040.00 MiB (  8192 cells,  61 layers,  1/1 seqs), K (f16): 23424.00 MiB, V (f16): "
          "15616.00 MiB");
}

// 5. DeepSeek with the split MLA tensors. Metadata: ggml-org/llama.cpp#14201 and
//    ikawrakow/ik_llama.cpp#455 (key_length 576, value_length 512, key_length_mla 192,
//    value_length_mla 128): llama.cpp caches the 576-wide latent as K of one head, no V.
TEST_CASE("GGUF DeepSeek-V3 with attn_k_b/attn_v_b: the MLA latent cache") {
    auto h = build([](GgufBuilder& b) { deepseek_meta(b, true, 7); }, deepseek2_tensors(true), q8_0_rule, 1);
    ModelSpec m = spec(h, "DeepSeek-V3-Q8_0");
    CHECK(m.gguf->split_mla);
    CHECK(m.gguf->n_tensors == 1025 + 61);  // attn_kv_b became attn_k_b + attn_v_b
    REQUIRE(m.count(LayerKind::Mla) == 61);
    CHECK(m.layers[0].kv_lora_rank == 512);
    CHECK(m.layers[0].qk_rope_head_dim == 64);
    CHECK(m.dims.q_head_dim == 192);
    CHECK(m.dims.v_head_dim == 128);
    // The split keeps every parameter: k_b + v_b hold what kv_b held.
    auto legacy =
        spec(build([](GgufBuilder& b) { deepseek_meta(b, false, 7); }, deepseek2_tensors(false), q8_0_rule, 1), "l");
    CHECK(m.gguf->params == legacy.gguf->params);
    auto l = layout(m, 8192);
    CHECK(l.bytes_per_token == 61 * 576 * 2);
    CHECK(l.log_lines[0] ==
          "llama_kv_cache: size =  549.00 MiB (  8192 cells,  61 layers,  1/1 seqs), K (f16):  549.00 MiB, V (f16):    "
          "0.00 MiB");
}

// 6. Qwen3.5 hybrid. Qwen3.5-9B: JamePeng/llama-cpp-python#78 prints ssm_d_conv 4, ssm_d_inner 4096,
//    ssm_d_state 128, ssm_dt_rank 32, ssm_n_group 16 and "model params = 8.95 B". KV and recurrent sizes:
//    tests/fixtures/engine-logs.md L10 (second note: 4 slots unified, 135,168 cells: KV 4224.00 MiB over
//    8 layers; recurrent 201.00 MiB = R 9.00 + S 192.00 for 4 cells, 32 layers).
TEST_CASE("GGUF Qwen3.5-9B: 8.95 B params, 8 KV layers, f32 recurrent state") {
    auto h = build([](GgufBuilder& b) { qwen35_meta(b, 32, 4096, 12288, 16, 4, 32, 4096); },
                   qwen35_tensors(32, 4096, 16, 4, 256, 12288, 248320, 128, 16, 32, 4, 4), q8_0_rule);
    ModelSpec m = spec(h, "Qwen3.5-9B");
    CHECK(m.model_type == "qwen3_5_text");
    CHECK(m.count(LayerKind::Full) == 8);
    CHECK(m.count(LayerKind::Linear) == 24);
    CHECK(m.layers[3].kind == LayerKind::Full);
    CHECK(m.layers[0].state.conv_dim() == 8192);
    CHECK(llamacpp_model_params(m.gguf->params) == "8.95 B");
    auto l = layout(m, 135168, 4, 512, true);
    CHECK(l.kv_bytes == 4224 * MiB);
    CHECK(l.caches[0].layers == 8);
    CHECK(l.recurrent.r_bytes == 9 * MiB);
    CHECK(l.recurrent.s_bytes == 192 * MiB);
    CHECK(l.recurrent.layers_logged == 32);
}

// 7. Qwen3.5-27B geometry (qwen35, 64 layers). Metadata: ggml-org/llama.cpp#22673 (qwen35.ssm.* of a
//    27B: time_step_rank 48, inner_size 6144) and ggml-org/llama.cpp#23792 (block_count 64,
//    embedding_length 5120, feed_forward_length 17408, head_count 24, head_count_kv 4).
//    Sizes: tests/fixtures/engine-logs.md L10 (first note: 24,576 cells, 16 KV layers, 1536.00 MiB;
//    recurrent 149.62 MiB = R 5.62 + S 144.00 for 1 cell, 64 layers).
TEST_CASE("GGUF Qwen3.5-27B: 16 KV layers of 64, recurrent 149.62 MiB") {
    auto h = build([](GgufBuilder& b) { qwen35_meta(b, 64, 5120, 17408, 24, 4, 48, 6144); },
                   qwen35_tensors(64, 5120, 24, 4, 256, 17408, 248320, 128, 16, 48, 4, 4), q8_0_rule);
    ModelSpec m = spec(h, "Qwen3.5-27B");
    auto l = layout(m, 24576);
    CHECK(l.kv_bytes == 1536 * MiB);
    CHECK(l.caches[0].layers == 16);
    CHECK(llamacpp_mib(l.recurrent.r_bytes) == "   5.62");
    CHECK(l.recurrent.s_bytes == 144 * MiB);
    CHECK(llamacpp_mib(l.recurrent.r_bytes + l.recurrent.s_bytes) == " 149.62");
    // ggml-org/Llama-macOS#63 lists unsloth's Qwen3.5-27B GGUF at 26.9B parameters.
    CHECK(llamacpp_model_params(m.gguf->params) == "26.90 B");
}

// 8. MTP layers: Qwen3.6-27B with its nextn layer, ikawrakow/ik_llama.cpp#1790:
//    qwen35.block_count 65, qwen35.nextn_predict_layers 1, n_layer = 65. The 65th block is the
//    multi-token-prediction head: weights in the file, no KV cache and no state in the main model.
TEST_CASE("GGUF Qwen3.6-27B with nextn_predict_layers = 1: 65 blocks, the last holds no cache") {
    auto h = build(
        [](GgufBuilder& b) {
            qwen35_meta(b, 65, 5120, 17408, 24, 4, 48, 6144);
            b.u32("qwen35.nextn_predict_layers", 1);
        },
        qwen35_tensors(64, 5120, 24, 4, 256, 17408, 248320, 128, 16, 48, 4, 4), q8_0_rule);
    ModelSpec m = spec(h, "Qwen3.6-27B");
    REQUIRE(m.layers.size() == 65);
    CHECK(m.layers[64].kind == LayerKind::None);
    CHECK(m.count(LayerKind::Full) == 16);
    CHECK(m.gguf->nextn_layers == 1);
    bool noted = false;
    for (const auto& n : m.notes) noted |= render_english(n).find("nextn_predict_layers = 1") != std::string::npos;
    CHECK(noted);
}

// The file's MTP block is loaded only for an MTP draft: llama.cpp creates the nextn layers' tensors with
// TENSOR_SKIP otherwise ("model has unused tensor blk.64.* -- ignoring", their bytes taken off size_data).
// Here the 65th block carries a full set of tensors, as a GGUF converted with the MTP block does.
TEST_CASE("GGUF with nextn_predict_layers: llama.cpp loads the MTP block's weights only for draft-mtp") {
    auto h = build(
        [](GgufBuilder& b) {
            qwen35_meta(b, 65, 5120, 17408, 24, 4, 48, 6144);
            b.u32("qwen35.nextn_predict_layers", 1);
        },
        qwen35_tensors(65, 5120, 24, 4, 256, 17408, 248320, 128, 16, 48, 4, 4), q8_0_rule);
    ModelSpec m = spec(h, "Qwen3.6-27B");
    REQUIRE(m.layers.size() == 65);
    REQUIRE(m.gguf->block_bytes.size() == 65);
    const int64_t mtp = m.gguf->block_bytes[64];
    CHECK(mtp > 0);
    BudgetInputs in;
    in.engine = BudgetEngine::LlamaCpp;
    in.gpu_memory_bytes = 80LL * 1024 * 1024 * 1024;
    in.context = 16384;
    auto plain = compute_budget(m, in);
    REQUIRE(plain.ok());
    CHECK(plain->weights.bytes == m.gguf->tensor_bytes - mtp);
    CHECK(plain->per_gpu.weights_bytes + m.gguf->input_bytes == m.gguf->tensor_bytes - mtp);
    bool noted = false;
    for (const auto& n : plain->notes)
        if (n.code == "gguf_nextn_unloaded") {
            noted = true;
            CHECK(render_english(n) ==
                  "llama.cpp skips the file's multi-token-prediction layers without --spec-type draft-mtp (\"model "
                  "has unused tensor ... -- ignoring\"): " +
                      format_bytes(mtp) + " of the file are not loaded");
        }
    CHECK(noted);
    in.spec_type = "draft-mtp";
    auto drafting = compute_budget(m, in);
    REQUIRE(drafting.ok());
    CHECK(drafting->weights.bytes == m.gguf->tensor_bytes);
    CHECK(drafting->per_gpu.weights_bytes - plain->per_gpu.weights_bytes == mtp);
}

// The same model read from its config.json and from its GGUF gives llama.cpp the same cache.
TEST_CASE("GGUF and config.json agree on llama.cpp's KV lines") {
    struct Case {
        const char* config;
        std::vector<GgufHeader> gguf;
        int64_t ctx;
    };
    std::vector<Case> cases;
    cases.push_back({"openai/gpt-oss-20b",
                     build([](GgufBuilder& b) { gptoss_meta(b, 24, 32); },
                           gptoss_tensors(24, 2880, 64, 8, 64, 2880, 32, 201088), gptoss_rule),
                     32768});
    cases.push_back({"Qwen/Qwen3.5-27B",
                     build([](GgufBuilder& b) { qwen35_meta(b, 64, 5120, 17408, 24, 4, 48, 6144); },
                           qwen35_tensors(64, 5120, 24, 4, 256, 17408, 248320, 128, 16, 48, 4, 4), q8_0_rule),
                     16384});
    cases.push_back({"deepseek-ai/DeepSeek-V3",
                     build([](GgufBuilder& b) { deepseek_meta(b, true, 7); }, deepseek2_tensors(true), q8_0_rule),
                     8192});
    cases.push_back({"meta-llama/Llama-3.1-8B",
                     build(
                         [](GgufBuilder& b) {
                             b.str("general.architecture", "llama")
                                 .u32("llama.block_count", 32)
                                 .u32("llama.context_length", 131072)
                                 .u32("llama.embedding_length", 4096)
                                 .u32("llama.attention.head_count", 32)
                                 .u32("llama.attention.head_count_kv", 8);
                         },
                         llama_tensors(32, 4096, 32, 8, 128, 14336, 128256, true), q4_k_m_llama_rule),
                     8192});
    for (auto& c : cases) {
        CAPTURE(c.config);
        ModelSpec from_config = kvb::test::fixture(c.config);
        ModelSpec from_gguf = spec(c.gguf, c.config);
        for (int64_t np : {1, 4}) {
            auto a = layout(from_config, c.ctx, np), b = layout(from_gguf, c.ctx, np);
            CHECK(a.log_lines == b.log_lines);
            CHECK(a.total_bytes == b.total_bytes);
            CHECK(a.recurrent.r_bytes == b.recurrent.r_bytes);
            CHECK(a.recurrent.s_bytes == b.recurrent.s_bytes);
        }
        CHECK(from_config.max_position_embeddings == from_gguf.max_position_embeddings);
    }
}
