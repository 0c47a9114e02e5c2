#include "model/rope.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/text.h"

namespace kvb {

namespace {

Error bad_rope(const std::string& text) {
    return make_error("bad_value", note("rope_scaling_syntax", {{"value", text}}));
}

}  // namespace

Result<RopeScaling> parse_rope_scaling(const std::string& text) {
    RopeScaling r;
    r.source = "user";
    const size_t c1 = text.find(':');
    if (c1 == std::string::npos) return bad_rope(text);
    r.type = lower(text.substr(0, c1));
    if (r.type != "yarn" && r.type != "linear" && r.type != "dynamic") return bad_rope(text);
    const size_t c2 = text.find(':', c1 + 1);
    const std::string f = text.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
    char* end = nullptr;
    r.factor = f.empty() ? 0 : std::strtod(f.c_str(), &end);
    if (f.empty() || end != f.c_str() + f.size() || !std::isfinite(r.factor) || r.factor <= 1.0 || r.factor > 1024)
        return make_error("bad_value", note("rope_scaling_factor", {{"value", f}}));
    if (c2 != std::string::npos) {
        const std::string o = text.substr(c2 + 1);
        int64_t v = 0;
        for (char ch : o) {
            if (ch < '0' || ch > '9' || v > (int64_t(1) << 32)) return bad_rope(text);
            v = v * 10 + (ch - '0');
        }
        if (o.empty() || v < 1 || v > (int64_t(1) << 32)) return bad_rope(text);
        r.original_max_position_embeddings = v;
    }
    return r;
}

std::string py_float_text(double v) {
    if (std::floor(v) == v && std::fabs(v) < 1e16) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f", v);
        return buf;
    }
    // The shortest text that reads back as the same double, as Python's repr.
    char buf[40];
    for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

std::string rope_scaling_text(const RopeScaling& r) {
    std::string f = py_float_text(r.factor);
    if (f.size() > 2 && f.compare(f.size() - 2, 2, ".0") == 0) f.resize(f.size() - 2);
    std::string s = r.type + ":" + f;
    if (r.original_max_position_embeddings > 0) s += ":" + std::to_string(r.original_max_position_embeddings);
    return s;
}

std::optional<RopeScaling> documented_rope_scaling(const ModelSpec& m) {
    if (m.rope_scaling && m.rope_scaling->type != "default") return std::nullopt;
    // Qwen3 and Qwen2.5 model cards: "add rope_scaling {rope_type: yarn, factor: 4.0,
    // original_max_position_embeddings: 32768}" for 131,072 tokens.
    const bool qwen3 = (m.model_type == "qwen3" || m.model_type == "qwen3_moe") && m.max_position_embeddings == 40960;
    const bool qwen25 = m.model_type == "qwen2" && m.max_position_embeddings == 32768 &&
                        lower(m.name).find("qwen2.5") != std::string::npos;
    if (!qwen3 && !qwen25) return std::nullopt;
    RopeScaling r;
    r.type = "yarn";
    r.factor = 4.0;
    r.original_max_position_embeddings = 32768;
    r.source = "model_card";
    ModelSpec scaled = m;
    scaled.rope_scaling = r;
    r.max_len = context_limits(scaled).max_len;
    return r;
}

ModelSpec with_rope_scaling(const ModelSpec& m, const RopeScaling& r) {
    ModelSpec out = m;
    RopeScaling s = r;
    s.source = "user";
    if (s.original_max_position_embeddings <= 0) {
        auto doc = documented_rope_scaling(m);
        s.original_max_position_embeddings = m.rope_scaling && m.rope_scaling->original_max_position_embeddings > 0
                                                 ? m.rope_scaling->original_max_position_embeddings
                                             : doc ? doc->original_max_position_embeddings
                                                   : m.max_position_embeddings;
    }
    out.rope_scaling = s;
    out.rope_scaling->max_len = context_limits(out).max_len;
    return out;
}

// vLLM's _get_and_verify_max_len (config/model.py): the smallest length key (2048 when
// none), then x factor unless the rope type is llama3 / longrope / su or the model is
// Gemma 3; YaRN starts from original_max_position_embeddings.
ContextLimits context_limits(const ModelSpec& m) {
    ContextLimits c;
    c.native = m.max_position_embeddings;
    c.n_ctx_train = m.max_position_embeddings;
    c.vllm_key = m.max_position_embeddings > 0 ? "max_position_embeddings" : "None";
    double derived = m.max_position_embeddings > 0 ? double(m.max_position_embeddings) : 2048.0;
    const RopeScaling* rs = m.rope_scaling ? &*m.rope_scaling : nullptr;
    const bool gemma3 = m.model_type.find("gemma3") != std::string::npos;
    if (rs && !gemma3) {
        if (rs->type != "su" && rs->type != "longrope" && rs->type != "llama3") {
            const double factor = rs->factor > 0 ? rs->factor : 1.0;
            if (rs->type == "yarn" && rs->original_max_position_embeddings > 0)
                derived = double(rs->original_max_position_embeddings);
            derived *= factor;
            c.vllm_scaled = true;
        }
    }
    c.vllm_derived = derived;
    c.max_len = derived >= 9.0e15 ? int64_t(9e15) : static_cast<int64_t>(derived);
    c.vllm_default = c.max_len;
    if (rs && rs->type == "longrope" && m.original_max_position_embeddings > 0)
        c.vllm_default = m.original_max_position_embeddings;
    return c;
}

}  // namespace kvb
