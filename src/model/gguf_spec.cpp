// GGUF metadata -> ModelSpec. Keys and defaults follow llama.cpp's llama-model.cpp
// (load_hparams) and llama-hparams.cpp (set_swa_pattern, is_recurrent): a key given as
// an array is per layer, a scalar applies to every layer, head_count_kv defaults to
// head_count and key/value_length to embedding_length / head_count.
#include "model/gguf_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "base/arith.h"
#include "base/units.h"

namespace kvb {
namespace {

constexpr int64_t kMaxLayers = 10000;  // real models have at most a few hundred: 50x headroom, and every pass over the
                                       // layers stays well under a second, WASM included
constexpr int64_t kMaxHeads = 65536;
constexpr int64_t kMaxDim = 65536;
constexpr int64_t kMaxHidden = 1 << 20;
constexpr int64_t kMaxTokens = int64_t(1) << 40;

// llama.cpp architecture name -> the Hugging Face model_type the rest of kvbudget keys
// its rules on (weights, vLLM). Names not listed keep the GGUF name and are sized
// from the generic keys, which every llama.cpp architecture writes.
const std::map<std::string, std::string>& arch_model_types() {
    static const std::map<std::string, std::string> t = {
        {"llama", "llama"},
        {"llama4", "llama4_text"},
        {"deci", "nemotron-nas"},
        {"mistral3", "mistral3"},
        {"qwen2", "qwen2"},
        {"qwen2moe", "qwen2_moe"},
        {"qwen2vl", "qwen2_vl"},
        {"qwen3", "qwen3"},
        {"qwen3moe", "qwen3_moe"},
        {"qwen3vl", "qwen3_vl_text"},
        {"qwen3vlmoe", "qwen3_vl_moe_text"},
        {"qwen3next", "qwen3_next"},
        {"qwen35", "qwen3_5_text"},
        {"qwen35moe", "qwen3_5_moe_text"},
        {"internlm2", "internlm2"},
        {"baichuan", "baichuan"},
        {"phi2", "phi"},
        {"phi3", "phi3"},
        {"phimoe", "phimoe"},
        {"gemma", "gemma"},
        {"gemma2", "gemma2"},
        {"gemma3", "gemma3_text"},
        {"gemma3n", "gemma3n_text"},
        {"gpt-oss", "gpt_oss"},
        {"deepseek", "deepseek"},
        {"deepseek2", "deepseek_v3"},
        {"jamba", "jamba"},
        {"falcon-h1", "falcon_h1"},
        {"granitehybrid", "granitemoehybrid"},
        {"nemotron_h", "nemotron_h"},
        {"nemotron_h_moe", "nemotron_h"},
        {"mamba", "mamba"},
        {"mamba2", "mamba2"},
        {"gpt2", "gpt2"},
        {"falcon", "falcon"},
        {"bloom", "bloom"},
        {"mpt", "mpt"},
        {"chatglm", "chatglm"},
        {"glm4", "glm4"},
        {"glm4moe", "glm4_moe"},
        {"olmo", "olmo"},
        {"olmo2", "olmo2"},
        {"olmo3", "olmo3"},
        {"olmoe", "olmoe"},
        {"starcoder2", "starcoder2"},
        {"gptneox", "gpt_neox"},
        {"gptj", "gptj"},
        {"starcoder", "gpt_bigcode"},
        {"command-r", "cohere"},
        {"cohere2", "cohere2"},
        {"granite", "granite"},
        {"granitemoe", "granitemoe"},
        {"exaone", "exaone"},
        {"stablelm", "stablelm"},
        {"hunyuan-dense", "hunyuan_v1_dense"},
        {"seed_oss", "seed_oss"},
        {"ernie4_5", "ernie4_5"},
        {"ernie4_5-moe", "ernie4_5_moe"},
        {"smollm3", "smollm3"},
        {"minimax-m2", "minimax_m2"},
        {"kimi-linear", "kimi_linear"},
    };
    return t;
}

// Interleaved sliding-window attention as llama.cpp sets it per architecture
// (llama-model.cpp: hparams.set_swa_pattern(n) = the last layer of every n is global).
int64_t default_swa_period(const std::string& arch) {
    if (arch == "gemma2" || arch == "gpt-oss") return 2;
    if (arch == "gemma3") return 6;
    if (arch == "gemma3n") return 5;
    if (arch == "cohere2" || arch == "llama4") return 4;
    return 0;
}

std::string value_text(const GgufValue& v) {
    if (v.type == GgufType::String) return "'" + v.str.substr(0, 40) + "'";
    if (v.type == GgufType::Array)
        return std::string("arr[") + gguf_type_name(v.elem_type) + "," + std::to_string(v.count) + "]";
    if (auto i = v.as_int()) return std::to_string(*i);
    if (auto d = v.as_number()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", *d);
        return buf;
    }
    return gguf_type_name(v.type);
}

struct Reader {
    const GgufHeader& h;
    const std::string& name;
    std::string arch;
    int64_t n_layer = 0;

    Error missing(const std::string& key) const {
        return make_error("missing_field", note("gguf_missing_key", {{"file", name}, {"key", key}}));
    }
    Error bad(const std::string& key, const std::string& expected, const GgufValue& v) const {
        return make_error(
            "bad_value",
            note("gguf_bad_key", {{"file", name}, {"key", key}, {"expected", expected}, {"got", value_text(v)}}));
    }
    const GgufValue* get(const std::string& suffix) const { return h.find(arch + "." + suffix); }

    Result<std::optional<int64_t>> opt_int(const std::string& suffix, int64_t lo, int64_t hi) const {
        const std::string key = arch + "." + suffix;
        const GgufValue* v = h.find(key);
        if (!v) return std::optional<int64_t>{};
        auto i = v->as_int();
        if (!i || *i < lo || *i > hi)
            return bad(key, "an integer in " + std::to_string(lo) + ".." + std::to_string(hi), *v);
        return std::optional<int64_t>(*i);
    }
    Result<int64_t> req_int(const std::string& suffix, int64_t lo, int64_t hi) const {
        auto v = opt_int(suffix, lo, hi);
        if (!v) return v.error();
        if (!v.value()) return missing(arch + "." + suffix);
        return *v.value();
    }
    std::optional<double> opt_num(const std::string& suffix) const {
        const GgufValue* v = get(suffix);
        return v ? v->as_number() : std::nullopt;
    }
    // A per-layer key (scalar for every layer, or an array of block_count entries) as
    // llama.cpp's get_key_or_arr reads it. Absent: `def` for every layer.
    Result<std::vector<int64_t>> per_layer(const std::string& suffix, int64_t lo, int64_t hi,
                                           std::optional<int64_t> def) const {
        const std::string key = arch + "." + suffix;
        const GgufValue* v = h.find(key);
        std::vector<int64_t> out;
        if (!v) {
            if (!def) return missing(key);
            out.assign(static_cast<size_t>(n_layer), *def);
            return out;
        }
        if (!v->is_array()) {
            auto i = v->as_int();
            if (!i || *i < lo || *i > hi)
                return bad(key, "an integer in " + std::to_string(lo) + ".." + std::to_string(hi), *v);
            out.assign(static_cast<size_t>(n_layer), *i);
            return out;
        }
        if (static_cast<int64_t>(v->count) != n_layer)
            return make_error("contradictory_fields", note("gguf_array_length", {{"file", name},
                                                                                 {"key", key},
                                                                                 {"n", std::to_string(v->count)},
                                                                                 {"arch", arch},
                                                                                 {"layers", std::to_string(n_layer)}}));
        if (!v->items_kept) return bad(key, "a per-layer array", *v);
        for (size_t k = 0; k < v->items.size(); ++k) {
            auto i = v->items[k].as_int();
            if (!i || *i < lo || *i > hi)
                return bad(key + "[" + std::to_string(k) + "]",
                           "an integer in " + std::to_string(lo) + ".." + std::to_string(hi), v->items[k]);
            out.push_back(*i);
        }
        return out;
    }
    bool has_tensor(const std::string& n) const {
        for (const auto& t : h.tensors)
            if (t.name == n) return true;
        return false;
    }
};

// llama.cpp's layer of a tensor, by its name (LLM_TENSOR_NAMES): "blk.N." repeating, "output"
// output layer, the rest input layer. Block indices past kMaxBlockIndex (no real model) count
// with the input layer rather than sizing a vector from a hostile name.
constexpr int64_t kMaxBlockIndex = 1 << 16;

bool starts(const std::string& s, const char* p) {
    return s.rfind(p, 0) == 0;
}

// `rest`: the name after "blk.N.", matched as common/fit.cpp's regexes match it (a search
// anchored at "blk.N.", so any suffix such as ".weight" or ".bias" counts).
void place_ffn(GgufWeights& w, size_t idx, const std::string& rest, int64_t bytes) {
    if (!starts(rest, "ffn_")) return;
    if (w.block_ffn.size() <= idx) w.block_ffn.resize(idx + 1);
    GgufWeights::BlockFfn& f = w.block_ffn[idx];
    const bool gate = starts(rest, "ffn_gate"), up = starts(rest, "ffn_up"), down = starts(rest, "ffn_down");
    if (gate || up || down) f.ffn = sat_add(f.ffn, bytes);
    if (gate || down) f.no_up = sat_add(f.no_up, bytes);
    if (down) f.down = sat_add(f.down, bytes);
    for (const char* p : {"ffn_up_", "ffn_down_", "ffn_gate_up_", "ffn_gate_"}) {
        if (!starts(rest, p)) continue;
        const std::string tail = rest.substr(std::char_traits<char>::length(p));
        if (starts(tail, "exps") || starts(tail, "chexps")) {
            f.exps = sat_add(f.exps, bytes);
            break;
        }
    }
}

void place_tensor(GgufWeights& w, const GgufTensorInfo& t) {
    const std::string& n = t.name;
    if (n.rfind("blk.", 0) == 0) {
        int64_t idx = 0;
        size_t i = 4;
        while (i < n.size() && i < 10 && n[i] >= '0' && n[i] <= '9') idx = idx * 10 + (n[i++] - '0');
        if (i > 4 && i < n.size() && n[i] == '.' && idx < kMaxBlockIndex) {
            if (static_cast<int64_t>(w.block_bytes.size()) <= idx)
                w.block_bytes.resize(static_cast<size_t>(idx) + 1, 0);
            w.block_bytes[static_cast<size_t>(idx)] = sat_add(w.block_bytes[static_cast<size_t>(idx)], t.bytes);
            place_ffn(w, static_cast<size_t>(idx), n.substr(i + 1), t.bytes);
            return;
        }
    }
    if (n.rfind("output", 0) == 0) {
        w.output_bytes = sat_add(w.output_bytes, t.bytes);
        return;
    }
    if (n == "token_embd.weight") w.token_embd_bytes = t.bytes;
    w.input_bytes = sat_add(w.input_bytes, t.bytes);
}

GgufWeights weights_of(const std::vector<const GgufHeader*>& hs) {
    GgufWeights w;
    std::map<uint32_t, int64_t> counts;
    for (const GgufHeader* h : hs) {
        for (const auto& t : h->tensors) {
            w.tensor_bytes = sat_add(w.tensor_bytes, t.bytes);
            w.params = sat_add(w.params, t.elements);
            ++w.n_tensors;
            ++counts[t.type];
            place_tensor(w, t);
        }
    }
    w.tied_output = true;
    for (const GgufHeader* h : hs)
        for (const auto& t : h->tensors)
            if (t.name == "output.weight") w.tied_output = false;
    for (const auto& [id, n] : counts) w.type_counts.emplace_back(ggml_type_info(id)->name, n);
    w.shards = static_cast<int64_t>(hs.size());
    return w;
}

Result<ModelSpec> build(const GgufHeader& h, const std::vector<const GgufHeader*>& all, const std::string& name) {
    ModelSpec m;
    m.name = name;
    m.source = "gguf";
    const GgufValue* a = h.find("general.architecture");
    if (!a) return make_error("missing_field", note("gguf_no_architecture", {{"file", name}}));
    if (a->type != GgufType::String || a->str.empty() || a->str.size() > 64)
        return make_error(
            "bad_value",
            note("gguf_bad_key",
                 {{"file", name}, {"key", "general.architecture"}, {"expected", "a string"}, {"got", value_text(*a)}}));
    Reader r{h, name, a->str};
    const std::string& arch = r.arch;
    m.architecture = arch;
    auto mt = arch_model_types().find(arch);
    m.model_type = mt != arch_model_types().end() ? mt->second : arch;
    m.family = arch;
    if (mt == arch_model_types().end()) {
        m.generic = true;
        m.notes.push_back(note("generic", {{"type", arch}}));
    }
    if (all.empty() || std::all_of(all.begin(), all.end(), [](const GgufHeader* s) { return s->tensors.empty(); }))
        return make_error("bad_value", note("gguf_no_tensors", {{"file", name}}));

    auto nl = r.req_int("block_count", 1, kMaxLayers);
    if (!nl) return nl.error();
    r.n_layer = nl.value();
    const int64_t n_layer = r.n_layer;
    auto ctx = r.opt_int("context_length", 1, kMaxTokens);
    if (!ctx) return ctx.error();
    m.max_position_embeddings = ctx.value().value_or(0);
    // llama.cpp's load_hparams: rope.scaling.type (default linear), rope.scaling.factor
    // (or the old rope.scale_linear), rope.scaling.original_context_length.
    if (const GgufValue* st = r.get("rope.scaling.type"); st && st->type == GgufType::String && st->str != "none") {
        RopeScaling rs;
        rs.type = st->str;
        rs.source = "gguf";
        auto f = r.opt_num("rope.scaling.factor");
        if (!f) f = r.opt_num("rope.scale_linear");
        if (f && std::isfinite(*f) && *f > 0 && *f < 1e6) rs.factor = *f;
        auto orig = r.opt_int("rope.scaling.original_context_length", 1, kMaxTokens);
        if (orig && orig.value()) rs.original_max_position_embeddings = *orig.value();
        m.rope_scaling = rs;
    }
    auto embd = r.req_int("embedding_length", 1, kMaxHidden);
    if (!embd) return embd.error();

    // Pure recurrent models write no attention keys.
    const bool pure_ssm = arch == "mamba" || arch == "mamba2";
    auto heads = r.per_layer("attention.head_count", 0, kMaxHeads, pure_ssm ? std::optional<int64_t>(0) : std::nullopt);
    if (!heads) return heads.error();
    const int64_t head0 = *std::max_element(heads->begin(), heads->end());
    auto kvh = r.per_layer("attention.head_count_kv", 0, kMaxHeads, std::nullopt);
    if (!kvh && kvh.error().code != "missing_field") return kvh.error();
    std::vector<int64_t> kv_heads = kvh ? kvh.value() : heads.value();  // llama.cpp: n_head_kv defaults to n_head
    for (int64_t il = 0; il < n_layer; ++il) {
        const int64_t hq = heads.value()[static_cast<size_t>(il)], hk = kv_heads[static_cast<size_t>(il)];
        if (hk > 0 && (hq == 0 || hq % hk != 0))
            return make_error(
                "contradictory_fields",
                note("gguf_bad_key", {{"file", name},
                                      {"key", arch + ".attention.head_count_kv"},
                                      {"expected", "a divisor of attention.head_count (" + std::to_string(hq) + ")"},
                                      {"got", std::to_string(hk)}}));
    }
    const int64_t def_head_dim = head0 > 0 && embd.value() % head0 == 0 ? embd.value() / head0 : 0;
    auto kl = r.opt_int("attention.key_length", 1, kMaxDim);
    if (!kl) return kl.error();
    auto vl = r.opt_int("attention.value_length", 1, kMaxDim);
    if (!vl) return vl.error();
    const int64_t head_k = kl.value().value_or(def_head_dim), head_v = vl.value().value_or(head_k);
    bool any_attention = std::any_of(kv_heads.begin(), kv_heads.end(), [](int64_t k) { return k > 0; });
    if (any_attention && head_k == 0) return r.missing(arch + ".attention.key_length");

    auto nextn = r.opt_int("nextn_predict_layers", 0, n_layer);
    if (!nextn) return nextn.error();
    const int64_t n_nextn = nextn.value().value_or(0);

    auto sw = r.opt_int("attention.sliding_window", 0, kMaxTokens);
    if (!sw) return sw.error();
    int64_t n_swa = sw.value().value_or(0);

    auto attn = [&](int64_t il, LayerKind kind, int64_t window) {
        Layer l;
        l.kind = kind;
        l.kv_heads = kv_heads[static_cast<size_t>(il)];
        l.k_head_dim = head_k;
        l.v_head_dim = head_v;
        l.window = window;
        return l;
    };

    // Which layers slide: an explicit per-layer pattern in the file, else the architecture's period.
    std::vector<bool> swa(static_cast<size_t>(n_layer), false);
    LayerKind swa_kind = LayerKind::Sliding;
    if (arch == "llama4") {
        // llama-model.cpp: chunked attention of 8192 tokens, every 4th layer global (NoPE).
        swa_kind = LayerKind::Chunked;
        n_swa = 8192;
    }
    if (const GgufValue* pat = r.get("attention.sliding_window_pattern")) {
        if (pat->is_array()) {
            if (static_cast<int64_t>(pat->count) != n_layer || !pat->items_kept)
                return make_error("contradictory_fields",
                                  note("gguf_array_length", {{"file", name},
                                                             {"key", arch + ".attention.sliding_window_pattern"},
                                                             {"n", std::to_string(pat->count)},
                                                             {"arch", arch},
                                                             {"layers", std::to_string(n_layer)}}));
            for (int64_t il = 0; il < n_layer; ++il)
                swa[static_cast<size_t>(il)] = pat->items[static_cast<size_t>(il)].as_int().value_or(0) != 0;
        } else {
            auto p = pat->as_int();
            if (!p || *p < 0 || *p > kMaxLayers)
                return r.bad(arch + ".attention.sliding_window_pattern", "a layer period", *pat);
            for (int64_t il = 0; il<n_layer&& * p> 1; ++il) swa[static_cast<size_t>(il)] = (il % *p) < (*p - 1);
        }
    } else if (int64_t p = default_swa_period(arch); p > 0 && n_swa > 0) {
        for (int64_t il = 0; il < n_layer; ++il) swa[static_cast<size_t>(il)] = (il % p) < (p - 1);
    }

    // Recurrent state geometry (ssm.* keys), shared by Mamba, Mamba-2 and gated delta nets.
    auto state = [&]() -> Result<StateGeometry> {
        StateGeometry g;
        auto K = r.req_int("ssm.conv_kernel", 1, 64);
        if (!K) return K.error();
        auto di = r.req_int("ssm.inner_size", 1, kMaxHidden * 4);
        if (!di) return di.error();
        auto ds = r.req_int("ssm.state_size", 1, kMaxDim);
        if (!ds) return ds.error();
        auto ng = r.opt_int("ssm.group_count", 0, kMaxHeads);
        if (!ng) return ng.error();
        auto dt = r.opt_int("ssm.time_step_rank", 0, kMaxHeads * 16);
        if (!dt) return dt.error();
        g.conv_kernel = K.value();
        g.d_inner = di.value();
        g.d_state = ds.value();
        g.n_groups = ng.value().value_or(0);
        g.heads = g.n_groups > 0 ? dt.value().value_or(0) : 0;  // Mamba-1: the channel axis is split
        return g;
    };

    const bool gdn = arch == "qwen3next" || arch == "qwen35" || arch == "qwen35moe";
    const bool hybrid_kv0 = arch == "jamba" || arch == "granitehybrid" || arch == "lfm2" || arch == "nemotron_h" ||
                            arch == "nemotron_h_moe";
    std::optional<StateGeometry> geo;
    if (gdn || hybrid_kv0 || pure_ssm || arch == "falcon-h1") {
        auto g = state();
        if (!g) return g.error();
        geo = g.value();
    }
    auto recurrent = [&](LayerKind kind) {
        Layer l;
        l.kind = kind;
        l.state = *geo;
        return l;
    };
    // Kimi Linear (llama_model_kimi_linear::load_arch_hparams): a KDA layer is one whose
    // head_count_kv is 0 (conversion/kimi_linear.py writes 0 for every layer not in full_attn_layers);
    // its state is sized by ssm.conv_kernel, kda.head_dim and head_count (llama_hparams::n_embd_r:
    // 3 x (d_conv - 1) x n_head x head_dim; n_embd_s: head_dim^2 x n_head), the gated delta net
    // geometry with as many key heads as value heads, as the config's linear_attn_config gives it.
    const bool kda = arch == "kimi-linear";
    std::optional<Layer> kda_layer;
    if (kda) {
        auto K = r.req_int("ssm.conv_kernel", 1, 64);
        if (!K) return K.error();
        auto hd = r.req_int("kda.head_dim", 1, kMaxDim);
        if (!hd) return hd.error();
        if (head0 <= 0) return r.missing(arch + ".attention.head_count");
        Layer l;
        l.kind = LayerKind::Linear;
        l.state.conv_kernel = K.value();
        l.state.d_inner = head0 * hd.value();
        l.state.n_groups = head0;
        l.state.d_state = hd.value();
        l.state.heads = head0;
        kda_layer = l;
    }
    std::vector<int64_t> n_ff;
    if (arch == "nemotron_h" || arch == "nemotron_h_moe") {
        auto ff = r.per_layer("feed_forward_length", 0, kMaxHidden * 16, int64_t(0));
        if (!ff) return ff.error();
        n_ff = ff.value();
    }

    // DeepSeek-style MLA: kv_lora_rank. The split conversion (key_length_mla / attn_k_b)
    // caches the latent; older files cache per-head K and V of key_length / value_length.
    auto lora = r.opt_int("attention.kv_lora_rank", 0, kMaxDim);
    if (!lora) return lora.error();
    const int64_t kv_lora = lora.value().value_or(0);
    bool split_mla = false;
    int64_t rope_dim = 0;
    if (kv_lora > 0) {
        auto kmla = r.opt_int("attention.key_length_mla", 1, kMaxDim);
        if (!kmla) return kmla.error();
        auto vmla = r.opt_int("attention.value_length_mla", 1, kMaxDim);
        if (!vmla) return vmla.error();
        auto rd = r.opt_int("rope.dimension_count", 0, kMaxDim);
        if (!rd) return rd.error();
        rope_dim = rd.value().value_or(0);
        split_mla = kmla.value() && vmla.value();
        if (split_mla) {
            m.dims.q_head_dim = *kmla.value();
            m.dims.v_head_dim = *vmla.value();
            m.dims.qk_nope_head_dim = *kmla.value() - rope_dim;
            // key_length = kv_lora_rank + rope dims: one shared "head" in llama.cpp's cache.
            if (head_k != kv_lora + rope_dim)
                return make_error("contradictory_fields",
                                  note("gguf_bad_key", {{"file", name},
                                                        {"key", arch + ".attention.key_length"},
                                                        {"expected", std::to_string(kv_lora + rope_dim) +
                                                                         " (kv_lora_rank + rope.dimension_count)"},
                                                        {"got", std::to_string(head_k)}}));
        } else {
            m.dims.q_head_dim = head_k;
            m.dims.v_head_dim = head_v;
            m.dims.qk_nope_head_dim = head_k - rope_dim;
            m.notes.push_back(note("gguf_legacy_mla", {{"file", name},
                                                       {"heads", std::to_string(kv_heads[0])},
                                                       {"k", std::to_string(head_k)},
                                                       {"v", std::to_string(head_v)},
                                                       {"latent", std::to_string(kv_lora + rope_dim)}}));
        }
        auto ql = r.opt_int("attention.q_lora_rank", 0, kMaxDim);
        if (!ql) return ql.error();
        m.dims.q_lora_rank = ql.value().value_or(0);
        m.family = "mla";
    }

    auto full_every = r.opt_int("full_attention_interval", 1, kMaxLayers);
    if (!full_every) return full_every.error();
    if (gdn && !full_every.value()) return r.missing(arch + ".full_attention_interval");

    for (int64_t il = 0; il < n_layer; ++il) {
        const size_t i = static_cast<size_t>(il);
        if (il >= n_layer - n_nextn) {  // MTP layers: weights in the file, no cache in llama.cpp
            Layer none;
            none.kind = LayerKind::None;
            m.layers.push_back(none);
            continue;
        }
        if (pure_ssm) {
            m.layers.push_back(recurrent(LayerKind::Mamba));
        } else if (gdn) {
            m.layers.push_back((il + 1) % *full_every.value() == 0 ? attn(il, LayerKind::Full, 0)
                                                                   : recurrent(LayerKind::Linear));
        } else if (arch == "falcon-h1") {
            m.layers.push_back(attn(il, LayerKind::Full, 0));
            m.layers.push_back(recurrent(LayerKind::Mamba));
        } else if (hybrid_kv0 && kv_heads[i] == 0) {
            // llama-model.cpp: recurrent where n_head_kv(il) == 0 (and, for Nemotron-H, n_ff(il) == 0).
            const bool mlp_only = !n_ff.empty() && n_ff[i] > 0;
            if (mlp_only) {
                Layer none;
                none.kind = LayerKind::None;
                m.layers.push_back(none);
            } else {
                m.layers.push_back(recurrent(LayerKind::Mamba));
            }
        } else if (kda && kv_heads[i] == 0) {
            m.layers.push_back(*kda_layer);
        } else if (kv_heads[i] == 0) {
            Layer none;  // Nemotron-NAS (deci) no-op attention
            none.kind = LayerKind::None;
            m.layers.push_back(none);
        } else if (kv_lora > 0 && split_mla) {
            Layer l;
            l.kind = LayerKind::Mla;
            l.kv_lora_rank = kv_lora;
            l.qk_rope_head_dim = rope_dim;
            l.kv_heads = heads.value()[i];
            l.k_head_dim = m.dims.q_head_dim;
            l.v_head_dim = m.dims.v_head_dim;
            m.layers.push_back(l);
        } else if (arch == "gemma3n" && il >= 20) {
            // llama-model.cpp: gemma3n's last layers reuse the KV of layer 18/19 (n_layer_kv_from_start = 20).
            Layer none;
            none.kind = LayerKind::None;
            m.layers.push_back(none);
        } else {
            m.layers.push_back(swa[i] ? attn(il, swa_kind, n_swa) : attn(il, LayerKind::Full, 0));
        }
    }
    if (arch == "falcon-h1") m.notes.push_back(note("falcon_h1"));
    if (kda) {
        m.family = "kimi_linear";
        m.ssm_dtype = "float32";  // llama.cpp keeps every recurrent state in f32, as vLLM's kda_state_dtype does
    }
    if (n_nextn > 0) m.notes.push_back(note("gguf_nextn", {{"arch", arch}, {"n", std::to_string(n_nextn)}}));
    if (!std::any_of(m.layers.begin(), m.layers.end(), [](const Layer& l) { return l.kind != LayerKind::None; }))
        return make_error("bad_value", name + ": no layer of this model holds a KV cache or state");

    // Weight-side dims: what the weights / budget code reads when it has no exact count.
    auto& d = m.dims;
    d.hidden_size = embd.value();
    d.num_attention_heads = head0;
    if (d.q_head_dim == 0) d.q_head_dim = head_k;
    auto vocab = r.opt_int("vocab_size", 1, int64_t(1) << 27);
    if (!vocab) return vocab.error();
    if (vocab.value()) {
        d.vocab_size = *vocab.value();
    } else if (const GgufValue* toks = h.find("tokenizer.ggml.tokens"); toks && toks->is_array()) {
        d.vocab_size = static_cast<int64_t>(std::min<uint64_t>(toks->count, uint64_t(1) << 27));
    }
    auto ff = r.per_layer("feed_forward_length", 0, kMaxHidden * 16, int64_t(0));
    if (!ff) return ff.error();
    d.intermediate_size = *std::max_element(ff->begin(), ff->end());
    d.tie_word_embeddings = !r.has_tensor("output.weight");
    auto ne = r.opt_int("expert_count", 0, 1 << 20);
    if (!ne) return ne.error();
    d.num_experts = ne.value().value_or(0);
    if (d.num_experts > 0) {
        auto k = r.opt_int("expert_used_count", 0, d.num_experts);
        if (!k) return k.error();
        d.experts_per_token = k.value().value_or(1);
        auto ei = r.opt_int("expert_feed_forward_length", 0, kMaxHidden * 16);
        if (!ei) return ei.error();
        d.moe_intermediate_size = ei.value().value_or(d.intermediate_size);
        auto se = r.opt_int("expert_shared_count", 0, 1024);
        if (!se) return se.error();
        d.shared_experts = se.value().value_or(0);
        auto si = r.opt_int("expert_shared_feed_forward_length", 0, kMaxHidden * 16);
        if (!si) return si.error();
        d.shared_intermediate_size = si.value().value_or(0);
        auto fk = r.opt_int("leading_dense_block_count", 0, n_layer);
        if (!fk) return fk.error();
        d.first_dense_layers = fk.value().value_or(0);
    }
    d.max_position_embeddings = m.max_position_embeddings;

    // Model dtype from general.file_type (llama_ftype): 0 all f32, 1 mostly f16, 32 mostly bf16;
    // quantized files compute in f16 buffers.
    GgufWeights w = weights_of(all);
    if (const GgufValue* ft = h.find("general.file_type")) w.file_type = ft->as_int().value_or(-1);
    m.dtype = w.file_type == 0 ? "float32" : w.file_type == 32 ? "bfloat16" : "float16";
    w.arch = arch;
    w.nextn_layers = n_nextn;
    w.split_mla = split_mla;
    m.notes.push_back(
        note("gguf_read", {{"tensors", with_commas(w.n_tensors)}, {"bytes", format_bytes(w.tensor_bytes)}}));
    m.gguf = w;
    if (auto ok = check_state_total(m); !ok) return ok.error();
    return m;
}

uint64_t split_value(const GgufHeader& h, const char* key, uint64_t def) {
    const GgufValue* v = h.find(key);
    if (!v) return def;
    auto i = v->as_int();
    return i && *i >= 0 ? static_cast<uint64_t>(*i) : def;
}

}  // namespace

Result<ModelSpec> spec_from_gguf(const GgufHeader& h, const std::string& name) {
    return build(h, {&h}, name);
}

Result<ModelSpec> spec_from_gguf_shards(const std::vector<GgufHeader>& shards, const std::string& name) {
    if (shards.empty()) return make_error("bad_value", note("gguf_no_tensors", {{"file", name}}));
    const uint64_t count = split_value(shards[0], "split.count", 1);
    if (count != shards.size()) {
        if (shards.size() < count)
            return make_error(
                "missing_field",
                note("gguf_split_missing",
                     {{"file", name}, {"count", std::to_string(count)}, {"shard", std::to_string(shards.size() + 1)}}));
        return make_error("contradictory_fields",
                          note("gguf_split_mismatch", {{"file", name},
                                                       {"shard", "1"},
                                                       {"count", std::to_string(count)},
                                                       {"expected", std::to_string(shards.size())}}));
    }
    std::vector<const GgufHeader*> all;
    int64_t n_tensors = 0;
    for (size_t k = 0; k < shards.size(); ++k) {
        const uint64_t c = split_value(shards[k], "split.count", 1);
        const uint64_t no = split_value(shards[k], "split.no", 0);
        if (c != count || no != k)
            return make_error("contradictory_fields",
                              note("gguf_split_mismatch", {{"file", name},
                                                           {"shard", std::to_string(k + 1)},
                                                           {"count", std::to_string(c)},
                                                           {"expected", std::to_string(count)}}));
        all.push_back(&shards[k]);
        n_tensors += static_cast<int64_t>(shards[k].tensors.size());
    }
    if (const GgufValue* tc = shards[0].find("split.tensors.count")) {
        auto want = tc->as_int();
        if (!want || *want != n_tensors)
            return make_error("contradictory_fields", note("gguf_split_tensors", {{"file", name},
                                                                                  {"have", std::to_string(n_tensors)},
                                                                                  {"expected", value_text(*tc)}}));
    }
    std::set<std::string> seen;
    for (const GgufHeader* s : all)
        for (const auto& t : s->tensors)
            if (!seen.insert(t.name).second)
                return make_error("bad_value", note("gguf_duplicate_tensor", {{"file", name}, {"tensor", t.name}}));
    return build(shards[0], all, name);
}

std::string llamacpp_file_size(int64_t bytes, int64_t elements) {
    // llama-model.cpp print_info: MiB below 1 GiB, GiB above; BPW = bytes*8/elements.
    char buf[96];
    const double bpw = elements > 0 ? static_cast<double>(bytes) * 8.0 / static_cast<double>(elements) : 0.0;
    if (bytes < (int64_t(1) << 30))
        std::snprintf(buf, sizeof buf, "%.2f MiB (%.2f BPW)", static_cast<double>(bytes) / 1024.0 / 1024.0, bpw);
    else
        std::snprintf(buf, sizeof buf, "%.2f GiB (%.2f BPW)", static_cast<double>(bytes) / 1024.0 / 1024.0 / 1024.0,
                      bpw);
    return buf;
}

std::string llamacpp_model_params(int64_t elements) {
    char buf[64];
    const double n = static_cast<double>(elements);
    if (n >= 1e12)
        std::snprintf(buf, sizeof buf, "%.3f T", n * 1e-12);
    else if (n >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2f B", n * 1e-9);
    else if (n >= 1e6)
        std::snprintf(buf, sizeof buf, "%.2f M", n * 1e-6);
    else
        std::snprintf(buf, sizeof buf, "%.2f K", n * 1e-3);
    return buf;
}

std::vector<std::string> llamacpp_type_lines(const GgufWeights& w) {
    // llama-model-loader.cpp: "%s: - type %4s: %4d tensors"
    std::vector<std::string> out;
    for (const auto& [t, n] : w.type_counts) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "type %4s: %4d tensors", t.c_str(), static_cast<int>(n));
        out.push_back(buf);
    }
    return out;
}

std::vector<std::string> gguf_shard_names(const std::string& first) {
    // llama.cpp's llama_split_prefix: PREFIX-%05d-of-%05d.gguf
    const std::string tail = ".gguf";
    if (first.size() < 20 + tail.size() || first.compare(first.size() - tail.size(), tail.size(), tail) != 0) return {};
    const std::string core = first.substr(0, first.size() - tail.size());  // ...-00001-of-00003
    const size_t n = core.size();
    if (n < 15 || core.compare(n - 15, 7, "-00001-") != 0 || core.compare(n - 8, 3, "of-") != 0) return {};
    const std::string count_s = core.substr(n - 5);
    for (char c : count_s)
        if (c < '0' || c > '9') return {};
    const int count = std::stoi(count_s);
    if (count < 1 || count > 99999) return {};
    const std::string prefix = core.substr(0, n - 15);
    std::vector<std::string> out;
    for (int k = 1; k <= count; ++k) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "-%05d-of-%05d", k, count);
        out.push_back(prefix + buf + tail);
    }
    return out;
}

}  // namespace kvb
