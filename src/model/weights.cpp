// Weight formats and the bytes a parameter count takes in one: "auto" read from the
// config, per-tensor rules of each format (GGUF mixes, group scales), tensor- and
// pipeline-parallel shards. The count itself is params.cpp.
#include "model/weights.h"

#include <algorithm>
#include <cctype>
#include <climits>

#include "base/arith.h"
#include "base/function_ref.h"
#include "base/text.h"
#include "base/units.h"
#include "model/dtype.h"
#include "model/quant.h"
#include "model/weights_family.h"

namespace kvb {

const char* to_string(TensorRole r) {
    switch (r) {
        case TensorRole::TokenEmbedding: return "token_embedding";
        case TensorRole::PositionEmbedding: return "position_embedding";
        case TensorRole::Output: return "output";
        case TensorRole::AttnQ: return "attn_q";
        case TensorRole::AttnK: return "attn_k";
        case TensorRole::AttnV: return "attn_v";
        case TensorRole::AttnQkv: return "attn_qkv";
        case TensorRole::AttnOut: return "attn_output";
        case TensorRole::MlaQa: return "mla_q_a";
        case TensorRole::MlaQb: return "mla_q_b";
        case TensorRole::MlaKva: return "mla_kv_a";
        case TensorRole::MlaKvb: return "mla_kv_b";
        case TensorRole::FfnGate: return "ffn_gate";
        case TensorRole::FfnUp: return "ffn_up";
        case TensorRole::FfnDown: return "ffn_down";
        case TensorRole::ExpertGate: return "expert_gate";
        case TensorRole::ExpertUp: return "expert_up";
        case TensorRole::ExpertDown: return "expert_down";
        case TensorRole::Router: return "router";
        case TensorRole::StateIn: return "state_in";
        case TensorRole::StateOut: return "state_out";
        case TensorRole::StateConv: return "state_conv";
        case TensorRole::NextnProj: return "nextn_eh_proj";
        case TensorRole::PerLayerEmbedding: return "per_layer_embedding";
        case TensorRole::Vector: return "vector";
    }
    return "?";
}

namespace {
using i128 = __int128;
using weights_detail::Family;
}  // namespace

// ---------------------------------------------------------------------------------------
// Formats

const std::vector<std::string>& weight_format_names() {
    static const std::vector<std::string> names = {"auto",   "bf16",   "fp16",      "fp32",  "fp8",  "int8",
                                                   "awq",    "gptq",   "gptq-int8", "mxfp4", "Q8_0", "Q6_K",
                                                   "Q5_K_M", "Q4_K_M", "Q4_0",      "IQ4_XS"};
    return names;
}

namespace {

WeightFormat float_format(const std::string& name, int bytes) {
    WeightFormat f;
    f.name = name;
    f.kind = WeightKind::Float;
    f.float_bytes = bytes;
    f.bits = bytes * 8;
    return f;
}

// Quantized weights whose scales and unquantized tensors stay 16-bit (fp8, int8, mxfp4).
WeightFormat quantized_format(const std::string& name, WeightKind kind, int bits) {
    WeightFormat f;
    f.name = name;
    f.kind = kind;
    f.bits = bits;
    f.float_bytes = 2;
    return f;
}

WeightFormat int_group(const std::string& name, int bits, int group, bool zp, int float_bytes) {
    WeightFormat f;
    f.name = name;
    f.kind = WeightKind::IntGroup;
    f.bits = bits;
    f.group_size = group;
    f.zero_point = zp;
    f.float_bytes = float_bytes;
    return f;
}

}  // namespace

namespace {

// A GGUF file's format. 1-D tensors are F32 in every GGUF file (convert_hf_to_gguf writes them so
// and llama-quantize leaves them alone). An MXFP4 checkpoint's routed experts reach the GGUF as
// MXFP4: convert_hf_to_gguf skips dequant_model for it and repacks the experts' blocks and scales
// into GGML MXFP4 blocks (conversion/gpt_oss.py repack_mxfp4), whatever --outtype says, and the
// published quants of it keep them so (see gguf_type).
WeightFormat gguf_format(const std::string& name, const ModelSpec& m) {
    WeightFormat f;
    f.name = name;
    f.kind = WeightKind::Gguf;
    f.gguf = true;
    f.float_bytes = 4;
    f.mxfp4_experts = lower(m.quant.method) == "mxfp4";
    return f;
}

}  // namespace

Result<WeightFormat> weight_format(const std::string& name_in, const ModelSpec& m, bool gguf_file) {
    const std::string n = lower(name_in);
    if (gguf_file) {
        // llama-quantize's MXFP4_MOE type (what ggml-org's gpt-oss-*-mxfp4.gguf files are).
        if (n == "mxfp4" || n == "mxfp4_moe") return gguf_format("mxfp4", m);
        auto f = weight_format(name_in, m, false);
        if (!f) return f;
        WeightFormat g = f.value();
        if (g.kind == WeightKind::Float || g.kind == WeightKind::Mxfp4) {
            g = gguf_format(g.kind == WeightKind::Mxfp4 ? "mxfp4" : g.name, m);
            g.from = f->from;
        }
        return g;
    }
    int model_bytes = dtype_size(m.dtype);
    if (model_bytes != 2 && model_bytes != 4) model_bytes = 2;
    if (n == "bf16" || n == "bfloat16") return float_format("bf16", 2);
    if (n == "fp16" || n == "f16" || n == "float16" || n == "half") return float_format("fp16", 2);
    if (n == "fp32" || n == "f32" || n == "float32") return float_format("fp32", 4);
    if (n == "fp8" || n == "fp8_e4m3" || n == "f8") return quantized_format("fp8", WeightKind::Fp8, 8);
    if (n == "int8" || n == "w8a8" || n == "i8") return quantized_format("int8", WeightKind::Int8, 8);
    if (n == "awq" || n == "int4" || n == "awq-int4" || n == "w4a16") return int_group("awq", 4, 128, true, 2);
    if (n == "gptq" || n == "gptq-int4") return int_group("gptq", 4, 128, false, 2);
    if (n == "gptq-int8") return int_group("gptq-int8", 8, 128, false, 2);
    if (n == "mxfp4") return quantized_format("mxfp4", WeightKind::Mxfp4, 4);
    for (const char* g : {"q8_0", "q6_k", "q5_k_m", "q4_k_m", "q4_0", "iq4_xs"}) {
        if (n == g) {
            std::string up = name_in;
            for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            return gguf_format(up, m);
        }
    }
    if (n == "auto" || n.empty()) {
        const Quantization& q = m.quant;
        const std::string method = lower(q.method);
        const std::string dtype_name = model_bytes == 4 ? "fp32" : (lower(m.dtype) == "float16" ? "fp16" : "bf16");
        WeightFormat f;
        if (method.empty()) {
            f = float_format(dtype_name, model_bytes);
            f.from = note("auto_dtype", {{"dtype", m.dtype}});
            return f;
        }
        if (!q.plan) {
            f = float_format(dtype_name, model_bytes);
            f.from = note("quant_not_modelled", {{"method", q.method}, {"dtype", dtype_name}});
            return f;
        }
        const QuantPlan& plan = *q.plan;
        const QuantScheme& main = plan.schemes[static_cast<size_t>(plan.default_scheme >= 0 ? plan.default_scheme : 0)];
        // The kinds a name also selects keep their names (and the commands that go with them);
        // the bytes of every kind come from the plan, layer by layer.
        if (method == "awq" || method == "awq_marlin") {
            f = int_group("awq", main.bits, static_cast<int>(main.group), main.zero_bits > 0, 2);
        } else if (method == "gptq" || method == "gptq_marlin") {
            f = int_group(main.bits == 8 ? "gptq-int8" : "gptq", main.bits, static_cast<int>(main.group), true, 2);
        } else if (method == "fp8") {
            f = weight_format("fp8", m).value();
            f.fp8_block = main.block_rows;
            f.mxfp4_experts = m.dims.fp4_experts;
        } else if (method == "mxfp4") {
            f = weight_format("mxfp4", m).value();
        } else {
            f = quantized_format(main.name, WeightKind::Checkpoint, main.bits);
            f.group_size = static_cast<int>(main.group);
            for (const QuantScheme& s : plan.schemes)
                if (s.name != main.name) f.name = "mixed";
        }
        f.plan = q.plan;
        // The method (with the schemes a checkpoint of kvbudget's own kind mixes), bits and group as separate
        // parameters, so each language words them.
        std::string shown = q.method;
        if (f.kind == WeightKind::Checkpoint) {
            std::string schemes;
            for (const QuantScheme& s : plan.schemes)
                if (schemes.find(s.name) == std::string::npos) schemes += (schemes.empty() ? "" : " + ") + s.name;
            shown += " (" + schemes + ")";
        }
        MessageParams p = {{"method", shown}};
        std::string code = "auto_quant";
        if (q.bits > 0) {
            code += "_bits";
            p.push_back({"bits", std::to_string(q.bits)});
            if (q.group_size > 0) {
                code += "_group";
                p.push_back({"group", std::to_string(q.group_size)});
            }
        }
        f.from = note(code, std::move(p));
        return f;
    }
    std::string list;
    for (const std::string& s : weight_format_names()) list += (list.empty() ? "" : ", ") + s;
    return make_error("bad_value", note("weights_unknown_format", {{"name", name_in}, {"list", list}}));
}

// ---------------------------------------------------------------------------------------
// Bytes

namespace {

enum class Gg { F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q6_K, Q5_K, Q4_K, IQ4_XS, IQ4_NL, MXFP4 };

struct GgInfo {
    int64_t blck, bytes;
};
GgInfo gg_info(Gg t) {
    switch (t) {
        case Gg::F32: return {1, 4};
        case Gg::F16: return {1, 2};
        case Gg::Q8_0: return {32, 34};
        case Gg::Q4_0: return {32, 18};
        case Gg::Q4_1: return {32, 20};
        case Gg::Q5_0: return {32, 22};
        case Gg::Q5_1: return {32, 24};
        case Gg::Q6_K: return {256, 210};
        case Gg::Q5_K: return {256, 176};
        case Gg::Q4_K: return {256, 144};
        case Gg::IQ4_XS: return {256, 136};
        case Gg::IQ4_NL: return {32, 18};
        case Gg::MXFP4: return {32, 17};  // ggml's block_mxfp4: one E8M0 scale + 16 bytes of 4-bit values
    }
    return {1, 4};
}

// llama-quant.cpp tensor_type_fallback: rows whose width is not a multiple of the block.
Gg gg_fallback(Gg t, int64_t cols) {
    if (cols % gg_info(t).blck == 0) return t;
    Gg r = t;
    switch (t) {
        case Gg::Q4_K: r = Gg::Q5_0; break;
        case Gg::Q5_K: r = Gg::Q5_1; break;
        case Gg::Q6_K: r = Gg::Q8_0; break;
        case Gg::IQ4_XS: r = Gg::IQ4_NL; break;
        default: r = Gg::F16; break;
    }
    if (cols % gg_info(r).blck != 0) r = Gg::F16;
    return r;
}

bool use_more_bits(int64_t i, int64_t n) {
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

bool is_expert(TensorRole r) {
    return r == TensorRole::ExpertGate || r == TensorRole::ExpertUp || r == TensorRole::ExpertDown;
}

struct GgufPlan {
    Gg deflt;
    std::string ftype;        // Q8_0, Q6_K, Q5_K_M, Q4_K_M, Q4_0, IQ4_XS, MXFP4_MOE, F16, F32
    bool float_file = false;  // convert_hf_to_gguf's own output (F16, BF16, F32): no llama-quantize mix
    bool mxfp4_experts = false;
    int64_t n_layer = 0;
    int64_t n_expert = 0;
    int64_t n_attn_v = 0;
    int64_t n_gqa = 1;
    bool is_70b = false;
    bool falcon = false;
    bool tied = false;
    int64_t i_attn_v = 0;
    int64_t i_ffn_down = 0;
};

Gg gguf_type(GgufPlan& p, const TensorGroup& g) {
    switch (g.role) {
        case TensorRole::Vector:
        case TensorRole::Router:
        case TensorRole::PositionEmbedding:
        case TensorRole::StateConv:
            return Gg::F32;  // convert_hf_to_gguf keeps these in F32; llama-quantize leaves them alone
        default: break;
    }
    // MiniMax-M3's indexer projections: the converter forces every ".indexer." tensor to F32
    // (conversion/minimax.py MiniMaxM3Model.tensor_force_quant), and llama-quantize keeps F32 tensors.
    if (g.indexer) return Gg::F32;
    // Published GGUFs of an MXFP4 checkpoint (gpt-oss) keep the routed experts as the converter
    // wrote them, in every type (bartowski's b6096 quants: "all quants keep the feed forward
    // networks at mxfp4"; their sizes say so too). llama-quantize itself has no such rule
    // (src/llama-quant.cpp): a k-quant's target for the experts is not MXFP4, and it refuses to
    // requantize a quantized tensor ("requantizing from type mxfp4 is disabled") unless
    // --allow-requantize, which would give Q5_0 / Q8_0 (2,880-wide rows fall back).
    if (p.mxfp4_experts && is_expert(g.role)) return Gg::MXFP4;
    if (p.float_file) return p.deflt;  // TextModel.prepare_tensors: every other tensor in --outtype
    Gg t = p.deflt;
    const std::string& f = p.ftype;
    if (f == "MXFP4_MOE") {
        // llama_tensor_get_type_impl for LLAMA_FTYPE_MOSTLY_MXFP4_MOE: output (and a tied token
        // embedding) Q8_0; a 3-D tensor (ne[2] > 1: the routed experts) MXFP4; every other Q8_0.
        return gg_fallback(is_expert(g.role) && g.count > 1 ? Gg::MXFP4 : Gg::Q8_0, g.cols);
    }
    if (g.role == TensorRole::Output || (p.tied && g.role == TensorRole::TokenEmbedding)) {
        if (p.falcon || g.cols % gg_info(t).blck != 0)
            t = Gg::Q8_0;
        else if (t != Gg::Q8_0)
            t = Gg::Q6_K;
        return gg_fallback(t, g.cols);
    }
    if (g.role == TensorRole::TokenEmbedding) return gg_fallback(t, g.cols);
    const bool attn_v = g.role == TensorRole::AttnV || g.role == TensorRole::AttnQkv || g.role == TensorRole::MlaKvb;
    if (attn_v) {
        if ((f == "IQ4_XS") && p.n_gqa >= 4)
            t = Gg::Q5_K;
        else if ((f == "Q4_K_M" || f == "Q5_K_M") && use_more_bits(p.i_attn_v, p.n_attn_v))
            t = Gg::Q6_K;
        if (p.is_70b && t == Gg::Q4_K) t = Gg::Q5_K;
        if (p.n_expert == 8) t = Gg::Q8_0;
        ++p.i_attn_v;
    } else if (g.role == TensorRole::AttnK) {
        if (p.n_expert == 8) t = Gg::Q8_0;
    } else if (g.role == TensorRole::FfnDown || g.role == TensorRole::ExpertDown) {
        int64_t i = p.n_expert > 1 ? g.layer : p.i_ffn_down;
        const int64_t n = p.n_layer;
        if (f == "Q4_K_M") {
            if (p.falcon)
                t = i < n / 16 ? Gg::Q6_K : (use_more_bits(i, n) ? Gg::Q5_K : Gg::Q4_K);
            else if (use_more_bits(i, n))
                t = Gg::Q6_K;
        } else if (f == "IQ4_XS" && i < n / 8) {
            t = Gg::Q5_K;  // no imatrix assumed
        } else if (f == "Q5_K_M" && use_more_bits(i, n)) {
            t = Gg::Q6_K;
        }
        ++p.i_ffn_down;
    } else if (g.role == TensorRole::AttnOut) {
        if (!p.falcon && p.n_expert == 8 && (f == "Q4_K_M" || f == "IQ4_XS")) t = Gg::Q5_K;
    }
    return gg_fallback(t, g.cols);
}

// llama-quantize's view of the model for its per-tensor type choice (llama_model_quantize_impl).
GgufPlan gguf_plan(const ModelSpec& m, const WeightFormat& format, const ParamCount& pc, const Family& family) {
    GgufPlan plan;
    const std::string& n = format.name;
    plan.ftype = n == "mxfp4" ? "MXFP4_MOE" : n == "bf16" || n == "fp16" ? "F16" : n == "fp32" ? "F32" : n;
    plan.float_file = plan.ftype == "F16" || plan.ftype == "F32";
    plan.mxfp4_experts = format.mxfp4_experts;
    plan.deflt = n == "Q8_0"       ? Gg::Q8_0
                 : n == "Q6_K"     ? Gg::Q6_K
                 : n == "Q5_K_M"   ? Gg::Q5_K
                 : n == "Q4_K_M"   ? Gg::Q4_K
                 : n == "Q4_0"     ? Gg::Q4_0
                 : n == "mxfp4"    ? Gg::Q8_0
                 : n == "fp32"     ? Gg::F32
                 : plan.float_file ? Gg::F16  // BF16 and F16 take 2 bytes alike
                                   : Gg::IQ4_XS;
    plan.n_layer = static_cast<int64_t>(m.layers.size());
    plan.n_expert = m.dims.num_experts;
    plan.tied = m.dims.tie_word_embeddings;
    plan.falcon = family.falcon;
    int64_t kvh = 0;
    for (const Layer& l : m.layers)
        if (l.kv_heads > 0) {
            kvh = l.kv_heads;
            break;
        }
    plan.n_gqa = kvh > 0 && m.dims.num_attention_heads > 0 ? m.dims.num_attention_heads / kvh : 1;
    for (const Layer& l : m.layers)
        if (l.kind == LayerKind::Mla) plan.n_gqa = 1;
    plan.is_70b = m.model_type == "llama" && plan.n_layer == 80 && plan.n_gqa > 1;
    for (const TensorGroup& g : pc.tensors)
        if (g.role == TensorRole::AttnV || g.role == TensorRole::AttnQkv || g.role == TensorRole::MlaKvb)
            ++plan.n_attn_v;
    return plan;
}

bool quantizable(TensorRole r) {
    switch (r) {
        case TensorRole::TokenEmbedding:
        case TensorRole::PositionEmbedding:
        case TensorRole::PerLayerEmbedding:
        case TensorRole::Output:
        case TensorRole::Router:
        case TensorRole::StateConv:
        case TensorRole::Vector: return false;
        default: return true;
    }
}

// The module name a checkpoint's quantization_config would give the tensor, in Llama's naming
// with the leading "model." dropped (normalize_quant_pattern maps other families' names onto it).
std::string module_name(const ModelSpec& m, const TensorGroup& g) {
    switch (g.role) {
        case TensorRole::TokenEmbedding: return "embed_tokens";
        case TensorRole::PositionEmbedding: return "embed_positions";
        case TensorRole::Output: return "lm_head";
        default: break;
    }
    std::string L = "layers." + std::to_string(g.layer) + ".";
    LayerKind kind = LayerKind::Full;
    if (g.layer >= 0 && static_cast<size_t>(g.layer) < m.layers.size())
        kind = m.layers[static_cast<size_t>(g.layer)].kind;
    const bool linear = kind == LayerKind::Linear, mamba = kind == LayerKind::Mamba;
    const std::string attn = L + (linear ? "linear_attn." : mamba ? "mixer." : "self_attn.");
    const std::string mlp = L + (g.shared ? "mlp.shared_experts." : "mlp.");
    switch (g.role) {
        case TensorRole::AttnQ: return attn + (g.indexer ? "index_q_proj" : "q_proj");
        case TensorRole::AttnK: return attn + (g.indexer ? "index_k_proj" : "k_proj");
        case TensorRole::AttnV: return attn + "v_proj";
        case TensorRole::AttnQkv: return attn + (linear ? "in_proj_qkv" : "qkv_proj");
        case TensorRole::AttnOut: return attn + "o_proj";
        case TensorRole::MlaQa: return attn + "q_a_proj";
        case TensorRole::MlaQb: return attn + "q_b_proj";
        case TensorRole::MlaKva: return attn + "kv_a_proj_with_mqa";
        case TensorRole::MlaKvb: return attn + "kv_b_proj";
        case TensorRole::StateIn: return attn + (linear ? "in_proj_z" : "in_proj");
        case TensorRole::StateOut: return attn + "out_proj";
        case TensorRole::StateConv: return attn + "conv1d";
        case TensorRole::FfnGate: return mlp + "gate_proj";
        case TensorRole::FfnUp: return mlp + "up_proj";
        case TensorRole::FfnDown: return mlp + "down_proj";
        case TensorRole::ExpertGate: return L + "mlp.experts.0.gate_proj";
        case TensorRole::ExpertUp: return L + "mlp.experts.0.up_proj";
        case TensorRole::ExpertDown: return L + "mlp.experts.0.down_proj";
        case TensorRole::Router: return L + "mlp.gate";
        case TensorRole::NextnProj: return L + "eh_proj";
        default: return L + "norm";
    }
}

// The stored format of one tensor of a pre-quantized checkpoint, or nullptr for the model dtype.
// vLLM quantizes linear layers only: embeddings, routers (ReplicatedLinear with quant_config
// None), convolutions and 1-D tensors stay as stored; the lm_head only where the config names it.
const QuantScheme* checkpoint_scheme(const QuantPlan& plan, const ModelSpec& m, const TensorGroup& g) {
    if (g.role == TensorRole::Output) return plan.scheme_for("lm_head", !plan.lm_head);
    if (!quantizable(g.role)) return nullptr;
    if (plan.experts_only && !is_expert(g.role)) return nullptr;
    return plan.scheme_for(module_name(m, g));
}

// Bytes of ONE copy of the tensor. count_params bounds every tensor below 2^55
// elements, so int64 arithmetic is exact here (i128 division is slow on hot paths).
int64_t one_copy_bytes(const WeightFormat& f, const ModelSpec& m, const TensorGroup& g, GgufPlan* plan,
                       bool* quantized) {
    const int64_t elems = g.rows * g.cols;
    *quantized = false;
    // An fp8 checkpoint with MXFP4 routed experts (DeepSeek-V4: w13 / w2 as packed uint8 plus one E8M0 scale per
    // 32, Mxfp4MoEMethod): its quantization_config says fp8 for them all.
    if (f.kind == WeightKind::Fp8 && f.mxfp4_experts && is_expert(g.role)) {
        *quantized = true;
        return elems / 2 + elems / 32;
    }
    if (f.plan) {
        const QuantScheme* s = checkpoint_scheme(*f.plan, m, g);
        if (!s) return elems * f.float_bytes;
        *quantized = true;
        return s->bytes(g.rows, g.cols);
    }
    if (f.kind == WeightKind::Gguf) {
        Gg t = gguf_type(*plan, g);
        *quantized = t != Gg::F32 && t != Gg::F16;
        GgInfo gi = gg_info(t);
        return g.rows * (g.cols / gi.blck) * gi.bytes;
    }
    if (f.kind == WeightKind::Float || (f.kind == WeightKind::Mxfp4 ? !is_expert(g.role) : !quantizable(g.role)))
        return elems * f.float_bytes;
    *quantized = true;
    switch (f.kind) {
        case WeightKind::Fp8:
            if (f.fp8_block > 0) return elems + cdiv(g.rows, f.fp8_block) * cdiv(g.cols, f.fp8_block) * 4;
            return elems + 4;
        case WeightKind::Int8: return elems + g.rows * 4;
        case WeightKind::IntGroup: {
            const int64_t groups = f.group_size > 0 ? cdiv(g.cols, f.group_size) : 1;
            int64_t b = (elems * f.bits + 7) / 8;                       // packed weights
            b += groups * g.rows * 2;                                   // fp16 scales
            if (f.zero_point) b += (groups * g.rows * f.bits + 7) / 8;  // packed zeros
            if (f.g_idx) b += g.cols * 4;
            return b;
        }
        case WeightKind::Mxfp4: return elems / 2 + elems / 32;  // 4-bit values + one E8M0 scale per 32
        default: return elems * f.float_bytes;
    }
}

// Bytes per parameter of the format's main type, as a fraction, for params the count
// does not place (given totals above the config's count).
void main_rate(const WeightFormat& f, int64_t* num, int64_t* den) {
    switch (f.kind) {
        case WeightKind::Float:
            *num = f.float_bytes;
            *den = 1;
            return;
        case WeightKind::Fp8:
        case WeightKind::Int8:
            *num = 1;
            *den = 1;
            return;
        case WeightKind::IntGroup: {
            const int64_t g = f.group_size > 0 ? f.group_size : 4096;
            // bits*g value bits + 16 scale bits + zero bits per group of g, in bytes
            *num = f.bits * g + 16 + (f.zero_point ? f.bits : 0);
            *den = 8 * g;
            return;
        }
        case WeightKind::Mxfp4:
            *num = 17;
            *den = 32;
            return;
        case WeightKind::Checkpoint:
            if (f.plan && !f.plan->schemes.empty()) {
                const int i = f.plan->default_scheme >= 0 ? f.plan->default_scheme : 0;
                f.plan->schemes[static_cast<size_t>(i)].rate(num, den);
                return;
            }
            break;
        case WeightKind::Gguf: {
            Gg t = Gg::Q8_0;
            if (f.name == "Q6_K")
                t = Gg::Q6_K;
            else if (f.name == "Q5_K_M")
                t = Gg::Q5_K;
            else if (f.name == "Q4_K_M")
                t = Gg::Q4_K;
            else if (f.name == "Q4_0")
                t = Gg::Q4_0;
            else if (f.name == "IQ4_XS")
                t = Gg::IQ4_XS;
            else if (f.name == "bf16" || f.name == "fp16")
                t = Gg::F16;
            else if (f.name == "fp32")
                t = Gg::F32;
            *num = gg_info(t).bytes;
            *den = gg_info(t).blck;
            return;
        }
    }
    *num = 2;
    *den = 1;
}

}  // namespace

std::pair<int64_t, int64_t> pp_layer_range(int64_t num_layers, int64_t rank, int64_t pp) {
    if (pp <= 1) return {0, num_layers};
    // vllm/distributed/utils.py get_pp_indices: even split, the remainder goes to the
    // stages just before the last one (the last stage also holds the lm_head).
    std::vector<int64_t> parts(static_cast<size_t>(pp), num_layers / pp);
    const int64_t rem = num_layers % pp;
    for (int64_t i = 2; i < rem + 2; ++i) parts[static_cast<size_t>(pp - i)] += 1;
    int64_t start = 0;
    for (int64_t r = 0; r < rank; ++r) start += parts[static_cast<size_t>(r)];
    return {start, start + parts[static_cast<size_t>(rank)]};
}

Result<WeightBytes> weight_bytes(const ModelSpec& m, const WeightFormat& format, int64_t given_params, int64_t tp,
                                 int64_t pp, bool given_is_advisory, const std::vector<int64_t>& stage_layers,
                                 const ExpertParallel& ep) {
    if (given_params < 0)
        return make_error("bad_value", note("weights_params_negative", {{"value", std::to_string(given_params)}}));
    if (given_params > (int64_t(1) << 50))
        return make_error("bad_value", note("weights_params_implausible", {{"value", std::to_string(given_params)}}));
    if (tp < 1 || pp < 1) return make_error("bad_value", note("weights_parallel_range"));
    const Family family = weights_detail::family_of(m);
    auto pcr = weights_detail::count_params(m, family);
    if (!pcr) return pcr.error();
    const ParamCount& pc = pcr.value();
    const int64_t num_layers = static_cast<int64_t>(m.layers.size());
    if (pp > num_layers)
        return make_error(
            "bad_value", note("weights_pp_over_layers",
                              {{"pp", std::to_string(pp)}, {"layers", std::to_string(num_layers)}, {"model", m.name}}));

    WeightBytes wb;
    wb.format = format;
    GgufPlan plan;
    if (format.kind == WeightKind::Gguf) plan = gguf_plan(m, format, pc, family);

    std::vector<i128> stage(static_cast<size_t>(pp), 0);
    std::vector<std::pair<int64_t, int64_t>> ranges;
    if (static_cast<int64_t>(stage_layers.size()) == pp) {
        int64_t start = 0;
        for (int64_t n : stage_layers) {
            ranges.emplace_back(start, start + n);
            start += n;
        }
    } else {
        for (int64_t r = 0; r < pp; ++r) ranges.push_back(pp_layer_range(num_layers, r, pp));
    }
    auto stage_of = [&](int layer) -> int64_t {
        if (layer == -1) return 0;
        if (layer == -2) return pp - 1;
        for (int64_t r = 0; r < pp; ++r)
            if (layer >= ranges[r].first && layer < ranges[r].second) return r;
        return pp - 1;
    };
    int64_t first_kvh = 0;
    for (const Layer& l : m.layers)
        if (l.kv_heads > 0) {
            first_kvh = l.kv_heads;
            break;
        }

    i128 total = 0, active = 0, qparams = 0, uparams = 0, embed_bytes = 0;
    for (const TensorGroup& g : pc.tensors) {
        bool q = false;
        const int64_t one = one_copy_bytes(format, m, g, &plan, &q);
        const int64_t all = one * g.count;
        wb.tensor_bytes.push_back(all);
        total += all;
        (q ? qparams : uparams) += g.rows * g.cols * g.count;
        if (g.role == TensorRole::TokenEmbedding) embed_bytes = all;
        if (g.role != TensorRole::TokenEmbedding && g.role != TensorRole::PositionEmbedding &&
            g.role != TensorRole::PerLayerEmbedding)
            active += one * g.active;
        // Per tensor-parallel rank.
        int64_t rank_bytes;
        // A routed expert's tensors (and its biases: one per expert) go whole to the rank that holds it.
        const bool routed =
            is_expert(g.role) || (g.role == TensorRole::Vector && g.count > 1 && g.count == m.dims.num_experts);
        if (ep.size > 1 && routed) {
            rank_bytes = one * ep_local_experts(g.count, ep);
        } else if (tp == 1 || g.tp_replicated) {
            rank_bytes = all;
        } else if (g.role == TensorRole::TokenEmbedding || g.role == TensorRole::Output) {
            const int64_t padded = cdiv(g.rows, 64) * 64;  // vLLM pads the vocab to 64
            rank_bytes = one / g.rows * cdiv(padded, tp);
        } else if ((g.role == TensorRole::AttnK || g.role == TensorRole::AttnV) && first_kvh > 0 && tp > first_kvh) {
            rank_bytes = all / first_kvh;  // one KV head per rank, replicated
        } else {
            rank_bytes = (all + tp - 1) / tp;
        }
        stage[static_cast<size_t>(stage_of(g.layer))] += rank_bytes;
        // Tied embeddings: with pipeline parallelism the last stage keeps its own lm_head copy.
        if (pp > 1 && g.role == TensorRole::TokenEmbedding && m.dims.tie_word_embeddings)
            stage[static_cast<size_t>(pp - 1)] += rank_bytes;
    }
    if (m.dims.tie_word_embeddings) active += embed_bytes;  // the table is read as the lm_head

    int64_t params = pc.total;
    if (given_params > 0 && !m.quant.method.empty() && given_params != pc.total) {
        // A pre-quantized checkpoint's safetensors element count counts packed int32 words,
        // scales and zeros, not parameters: the config's own count is the better number.
        wb.notes.push_back(note("params_ignored", {{"given", std::to_string(given_params)},
                                                   {"method", m.quant.method},
                                                   {"count", std::to_string(pc.total)}}));
        given_params = 0;
    }
    // A count far from the config's own is a typo (70 for 70e9) or the wrong model's total:
    // believing it gives 140 bytes of weights, or negative active bytes for a count below
    // what the config's non-expert tensors alone hold.
    if (given_params > 0 && pc.total > 0 &&
        (i128(given_params) * kParamsPlausibleFactor < pc.total ||
         i128(given_params) > i128(pc.total) * kParamsPlausibleFactor)) {
        MessageParams p = {{"model", m.name},
                           {"given", with_commas(given_params)},
                           {"count", with_commas(pc.total)},
                           {"factor", std::to_string(kParamsPlausibleFactor)}};
        if (!given_is_advisory) return make_error("bad_value", note("params_implausible", std::move(p)));
        wb.notes.push_back(note("params_hub_implausible", std::move(p)));
        given_params = 0;
    }
    if (given_params > 0 && given_params != pc.total) {
        int64_t num = 2, den = 1;
        main_rate(format, &num, &den);
        const i128 diff = i128(given_params) - pc.total;
        const i128 extra = diff * num / den;
        total += extra;
        if (pc.experts == 0) active += extra;
        for (int64_t r = 0; r < pp; ++r) stage[static_cast<size_t>(r)] += extra / tp / pp;
        params = given_params;
        wb.notes.push_back(note("params_differ", {{"given", std::to_string(given_params)},
                                                  {"count", std::to_string(pc.total)},
                                                  {"diff", std::to_string(int64_t(diff))}}));
        qparams += diff;
    }
    if (total < 0) total = 0;
    if (active < 0) active = 0;
    wb.params = params;
    wb.bytes = int64_t(total);
    wb.active_bytes = int64_t(active);
    const int64_t vision_param_bytes = format.kind == WeightKind::Gguf ? 2 : format.float_bytes;  // mmproj: f16
    wb.vision_bytes = pc.vision * vision_param_bytes;
    // vLLM builds its vision encoders' attention and MLP from parallel linears, split over the TP ranks of stage 0
    // (mm_encoder_tp_mode "weights", the default; qwen2_vl, qwen2_5_vl, qwen3_vl, glm4_1v, siglip, pixtral, mllama4,
    // intern_vit at v0.27.1, the same linears at v0.9.2). Heads TP does not divide keep it whole on every rank where
    // vLLM falls back to data parallelism (is_vit_use_data_parallel with the heads: Kimi K2.5's ViT from 0.26.0, PR
    // #49046); elsewhere vLLM stops (engines/vllm.cpp check_tp). What every rank keeps whole (the patch embedding,
    // norms, row-parallel biases: dims.vision_replicated) is counted where the tower's reader knows it.
    const int64_t vh = m.dims.vision_heads;
    if (tp > 1 && (vh == 0 || vh % tp == 0)) {
        const int64_t whole = std::min(wb.vision_bytes, m.dims.vision_replicated * vision_param_bytes);
        stage[0] += whole + (wb.vision_bytes - whole + tp - 1) / tp;
    } else {
        stage[0] += wb.vision_bytes;
    }
    wb.quantized_params = int64_t(qparams);
    wb.unquantized_params = int64_t(uparams);
    for (i128 s : stage) wb.stage_bytes.push_back(int64_t(s));
    wb.per_gpu_bytes = *std::max_element(wb.stage_bytes.begin(), wb.stage_bytes.end());
    wb.bits_per_weight = params > 0 ? double(wb.bytes) * 8.0 / double(params) : 0;
    for (const Message& n : pc.notes) wb.notes.push_back(n);
    if (!format.from.code.empty()) wb.notes.push_back(format.from);
    return Result<WeightBytes>(std::move(wb));
}

int64_t ep_local_experts(int64_t experts, const ExpertParallel& ep) {
    if (ep.size <= 1) return experts;
    const int64_t base = experts / ep.size, rest = experts % ep.size;
    return ep.remainder_last ? base + rest : base + (rest > 0 ? 1 : 0);
}

namespace {

bool block_scheme(const QuantScheme* s) {
    return s && s->block_rows > 0 && s->block_cols > 0;
}

// One linear layer as vLLM builds it on each tensor-parallel rank (linear.py): a column-parallel layer splits its
// output, each of a merged layer's parts (QKVParallelLinear's q / k / v, a gate_up_proj's gate / up) on its own; a
// row-parallel layer splits its input.
struct RankLinear {
    std::vector<int64_t> out_parts;  // output_partition_sizes; empty for a row-parallel layer
    int64_t in_part = 0;             // input_size_per_partition of a row-parallel layer
    bool merged() const { return out_parts.size() > 1; }
};

// validate_fp8_block_shape (fp8_utils.py; inline in Fp8LinearMethod.create_weights before 0.11): the ValueError, in
// vLLM's words, for one layer stored in [block_n, block_k] blocks. `off_grid_merged_allowed`: the layer's
// allow_fp8_block_shape_mismatch (ColumnParallelLinear._maybe_allow_fp8_block_shape_mismatch, 0.14.0 on, for a
// quantization config with a weight_block_size, i.e. fp8's): a merged layer any of whose parts is off the grid is not
// checked at all.
std::optional<Message> linear_block_refusal(const RankLinear& l, const QuantScheme& s, int64_t tp,
                                            bool off_grid_merged_allowed) {
    const int64_t block_n = s.block_rows, block_k = s.block_cols;
    if (l.out_parts.empty()) {
        if (tp > 1 && l.in_part % block_k != 0)
            return note("vllm_fp8_block_k", {{"size", std::to_string(l.in_part)}, {"block", std::to_string(block_k)}});
        return std::nullopt;
    }
    if (off_grid_merged_allowed && l.merged() &&
        std::any_of(l.out_parts.begin(), l.out_parts.end(), [&](int64_t n) { return n % block_n != 0; }))
        return std::nullopt;
    // A column-parallel layer is split at TP > 1; a merged one unsplit (TP 1) may end off the grid.
    size_t check = l.out_parts.size();
    if (tp == 1) check = l.merged() ? check - 1 : 0;
    for (size_t i = 0; i < check; ++i)
        if (l.out_parts[i] % block_n != 0)
            return note("vllm_fp8_block_n",
                        {{"size", std::to_string(l.out_parts[i])}, {"block", std::to_string(block_n)}});
    return std::nullopt;
}

// Fp8MoEMethod / CompressedTensorsW8A8Fp8MoEMethod.create_weights: each rank's share of an expert's intermediate
// size must be a multiple of block_n, and of block_k when TP splits it. Under expert parallelism FusedMoE's own TP is
// 1, so a rank's share is the whole intermediate size; the block_k check still follows the model's TP
// (get_tensor_model_parallel_world_size()).
std::optional<Message> experts_block_refusal(const TensorGroup& g, const QuantScheme& s, int64_t tp,
                                             bool expert_parallel) {
    const int64_t per = expert_parallel ? g.rows : g.rows / tp;  // intermediate_size_per_partition
    if (per % s.block_rows != 0)
        return note("vllm_fp8_moe_block_n", {{"size", std::to_string(per)}, {"block", std::to_string(s.block_rows)}});
    if (tp > 1 && per % s.block_cols != 0)
        return note("vllm_fp8_moe_block_k", {{"size", std::to_string(per)}, {"block", std::to_string(s.block_cols)}});
    return std::nullopt;
}

// Each linear layer of the decoder as vLLM builds it on one tensor-parallel rank, in the order it builds them: a
// decoder layer's token mixer, then its MLP; a MoE block's shared experts before the routed ones (FusedMoE takes them
// as shared_experts). So the first layer a check stops at is the one vLLM's first ValueError is about. `dense` is
// given each ColumnParallel / RowParallel / merged linear, `experts` (may be empty) each routed-expert group, with the
// scheme the checkpoint stores it in (nullptr: the model dtype) and the checkpoint tensor it starts from; either
// returns true to stop. Replicated layers, the MTP block (only a drafter builds one), embeddings and the lm_head are
// not visited: they are not split, or not ColumnParallel / RowParallel linears.
using DenseVisit = FunctionRef<bool(const RankLinear&, const QuantScheme*, const TensorGroup&)>;
using ExpertsVisit = FunctionRef<bool(const TensorGroup&, const QuantScheme*)>;
void walk_rank_linears(const ModelSpec& m, const ParamCount& pc, const QuantPlan& plan, int64_t tp, DenseVisit dense,
                       ExpertsVisit experts) {
    const bool interleaved_gdn = m.model_type == "qwen3_next";  // Qwen3NextGatedDeltaNet: gqa_interleaved_layout
    auto column = [&](int64_t rows) { return RankLinear{{rows / tp}, 0}; };
    auto row = [&](int64_t cols) { return RankLinear{{}, cols / tp}; };

    const std::vector<TensorGroup>& t = pc.tensors;
    for (size_t i = 0; i < t.size();) {
        const int li = t[i].layer;
        size_t end = i;
        while (end < t.size() && t[end].layer == li) ++end;
        const bool block = li >= 0 && static_cast<size_t>(li) < m.layers.size();
        const Layer* L = block ? &m.layers[static_cast<size_t>(li)] : nullptr;
        // The main model builds no MTP block (only a drafter does), and embeddings and the lm_head are not
        // ColumnParallel / RowParallel linears.
        if (!L || L->nextn) {
            i = end;
            continue;
        }
        const bool linear_attn = L->kind == LayerKind::Linear;
        const bool mla = L->kind == LayerKind::Mla;
        for (int pass = 0; pass < 2; ++pass)
            for (size_t k = i; k < end; ++k) {
                const TensorGroup& g = t[k];
                if ((pass == 1) != is_expert(g.role)) continue;
                if (g.tp_replicated || g.indexer) continue;
                bool stop = false;
                switch (g.role) {
                    case TensorRole::ExpertGate: stop = experts && experts(g, checkpoint_scheme(plan, m, g)); break;
                    case TensorRole::AttnQ:
                        if (!mla && !linear_attn && k + 2 < end && t[k + 1].role == TensorRole::AttnK &&
                            t[k + 2].role == TensorRole::AttnV) {
                            // QKVParallelLinear: q heads split, KV heads split or, past their count, one per rank.
                            const int64_t kvh = L->kv_heads > 0 ? L->kv_heads : 1;
                            auto kv = [&](int64_t rows) { return tp >= kvh ? rows / kvh : rows / tp; };
                            stop = dense(RankLinear{{g.rows / tp, kv(t[k + 1].rows), kv(t[k + 2].rows)}, 0},
                                         checkpoint_scheme(plan, m, g), g);
                            k += 2;
                        } else if (!linear_attn) {
                            // MLA's q_proj (no q_lora_rank), Step-3.5's head-wise g_proj: ColumnParallelLinear.
                            stop = dense(column(g.rows), checkpoint_scheme(plan, m, g), g);
                        }
                        break;
                    case TensorRole::AttnQkv:
                        if (linear_attn && k + 1 < end && t[k + 1].role == TensorRole::StateIn) {
                            // Gated delta net: in_proj_qkvz (q, k, v and the z gate) and in_proj_ba, as vLLM packs
                            // the checkpoint's in_proj_qkv + in_proj_z and in_proj_b + in_proj_a.
                            const StateGeometry& s = L->state;
                            const int64_t kd = s.n_groups * s.d_state, vd = s.d_inner, nv = s.heads;
                            const std::string at = "layers." + std::to_string(li) + ".linear_attn.";
                            const RankLinear qkvz = interleaved_gdn
                                                        ? column(2 * kd + 2 * vd)
                                                        : RankLinear{{kd / tp, kd / tp, vd / tp, vd / tp}, 0};
                            stop = dense(qkvz, checkpoint_scheme(plan, m, g), g);
                            if (!stop) {
                                const RankLinear ba =
                                    interleaved_gdn ? column(2 * nv) : RankLinear{{nv / tp, nv / tp}, 0};
                                stop =
                                    dense(ba, plan.scheme_for(at + (interleaved_gdn ? "in_proj_ba" : "in_proj_b")), g);
                            }
                            k += 1;
                        } else if (!linear_attn && L->kv_heads > 0) {
                            // A fused checkpoint qkv (Falcon, Phi-3): QKVParallelLinear all the same.
                            const int64_t kvh = L->kv_heads;
                            const int64_t kr = kvh * L->k_head_dim, vr = kvh * L->v_head_dim, qr = g.rows - kr - vr;
                            auto kv = [&](int64_t rows) { return tp >= kvh ? rows / kvh : rows / tp; };
                            if (qr > 0)
                                stop =
                                    dense(RankLinear{{qr / tp, kv(kr), kv(vr)}, 0}, checkpoint_scheme(plan, m, g), g);
                        }
                        break;
                    case TensorRole::MlaQb:
                    case TensorRole::MlaKvb: stop = dense(column(g.rows), checkpoint_scheme(plan, m, g), g); break;
                    case TensorRole::AttnOut:
                    case TensorRole::StateOut:
                    case TensorRole::FfnDown: stop = dense(row(g.cols), checkpoint_scheme(plan, m, g), g); break;
                    case TensorRole::FfnGate:
                        // gate_up_proj: MergedColumnParallelLinear of the gate and up halves.
                        if (k + 1 < end && t[k + 1].role == TensorRole::FfnUp) {
                            stop = dense(RankLinear{{g.rows / tp, t[k + 1].rows / tp}, 0},
                                         checkpoint_scheme(plan, m, g), g);
                            k += 1;
                        }
                        break;
                    case TensorRole::FfnUp:
                        // An ungated MLP's up projection (c_fc, fc1): ColumnParallelLinear.
                        if (!m.dims.gated_mlp) stop = dense(column(g.rows), checkpoint_scheme(plan, m, g), g);
                        break;
                    default: break;  // Mamba and KDA input projections, routers, convs, norms: not read
                }
                if (stop) return;
            }
        i = end;
    }
}

// walk_rank_linears over a plan with a scheme `any` takes; nothing walked otherwise. Every budget asks these checks and
// most plans have no such scheme, so the tensors are counted only for one that has.
void walk_planned(const ModelSpec& m, const WeightFormat& format, int64_t tp, FunctionRef<bool(const QuantScheme&)> any,
                  DenseVisit dense, ExpertsVisit experts) {
    if (!format.plan || std::none_of(format.plan->schemes.begin(), format.plan->schemes.end(),
                                     [&](const QuantScheme& s) { return any(s); }))
        return;
    if (auto pc = count_params(m)) walk_rank_linears(m, *pc, *format.plan, tp, dense, experts);
}

}  // namespace

std::optional<VllmBlockRefusal> vllm_fp8_block_refusal(const ModelSpec& m, const WeightFormat& format, int64_t tp,
                                                       bool off_grid_merged_allowed, bool expert_parallel) {
    // DeepSeek-V4 loads through its own DeepseekV4FP8Config (experts MXFP4 or fp8 by expert_dtype), not read here.
    if (!format.plan || tp < 1 || std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer)) return std::nullopt;
    // The skip applies to Fp8Config only: CompressedTensorsConfig has no weight_block_size for the layer to read.
    const bool allow = off_grid_merged_allowed && format.plan->method == "fp8";
    std::optional<VllmBlockRefusal> found;
    auto dense = [&](const RankLinear& l, const QuantScheme* s, const TensorGroup&) {
        if (block_scheme(s))
            if (auto e = linear_block_refusal(l, *s, tp, allow)) found = VllmBlockRefusal{*e, false};
        return found.has_value();
    };
    auto experts = [&](const TensorGroup& g, const QuantScheme* s) {
        if (block_scheme(s))
            if (auto e = experts_block_refusal(g, *s, tp, expert_parallel)) found = VllmBlockRefusal{*e, true};
        return found.has_value();
    };
    walk_planned(
        m, format, tp, [](const QuantScheme& s) { return s.block_rows > 0 && s.block_cols > 0; }, dense, experts);
    return found;
}

std::optional<PlannedLinear> first_planned_linear(const ModelSpec& m, const WeightFormat& format,
                                                  FunctionRef<bool(const QuantScheme&)> pick) {
    std::optional<PlannedLinear> found;
    auto dense = [&](const RankLinear& l, const QuantScheme* s, const TensorGroup& g) {
        if (!s || !pick(*s)) return false;
        // Named as vLLM builds it: the merged layers under their merged names.
        std::string name = module_name(m, g);
        const auto dot = name.rfind('.');
        const std::string last = name.substr(dot + 1);
        if (g.role == TensorRole::AttnQkv && last == "in_proj_qkv")
            name += "z";
        else if (l.out_parts.size() > 1 && last == "q_proj")
            name.replace(dot + 1, std::string::npos, "qkv_proj");
        else if (l.out_parts.size() > 1 && last == "gate_proj")
            name.replace(dot + 1, std::string::npos, "gate_up_proj");
        found = PlannedLinear{s, name};
        return true;
    };
    walk_planned(m, format, 1, pick, dense, {});
    return found;
}

namespace {

// The first row-parallel layer stored in a scheme `grouped` takes whose per-rank input (at TP `tp`) is not a whole
// number of its groups: the layer and sizes, as the split notes name them.
std::optional<MessageParams> first_group_split(const ModelSpec& m, const WeightFormat& format, int64_t tp,
                                               FunctionRef<bool(const QuantScheme&)> grouped) {
    if (tp <= 1) return std::nullopt;
    std::optional<MessageParams> found;
    auto dense = [&](const RankLinear& l, const QuantScheme* s, const TensorGroup& g) {
        // Only a row-parallel layer splits its input. One whose input TP does not divide stops vLLM earlier, in
        // divide(); a group as wide as the input is one group per output row, which Marlin takes whole.
        if (!s || !grouped(*s) || !l.out_parts.empty() || g.cols % tp != 0 || s->group >= g.cols) return false;
        if (l.in_part % s->group == 0) return false;
        found = MessageParams{{"layer", module_name(m, g)},
                              {"size", with_commas(l.in_part)},
                              {"group", std::to_string(s->group)},
                              {"tp", std::to_string(tp)}};
        return true;
    };
    walk_planned(m, format, tp, grouped, dense, {});
    return found;
}

}  // namespace

std::optional<VllmGroupRefusal> vllm_awq_group_refusal(const ModelSpec& m, const WeightFormat& format, int64_t tp) {
    auto split = first_group_split(m, format, tp, [](const QuantScheme& s) { return s.name == "awq" && s.group > 0; });
    if (!split) return std::nullopt;
    return VllmGroupRefusal{note("vllm_awq_group"), note("vllm_awq_group_split", *split), true, "vllm_awq_group_fix"};
}

std::optional<VllmGroupRefusal> vllm_wna16_group_refusal(const ModelSpec& m, const WeightFormat& format, int64_t tp,
                                                         bool zero_points_read) {
    auto split = first_group_split(m, format, tp, [&](const QuantScheme& s) {
        return s.ct_scheme == "WNA16" && s.group > 0 && s.g_idx_words == 0 && (s.zero_bits == 0 || zero_points_read);
    });
    if (!split) return std::nullopt;
    return VllmGroupRefusal{note("vllm_ct_wna16_group", *split), {}, false, "vllm_ct_wna16_group_fix"};
}

}  // namespace kvb
