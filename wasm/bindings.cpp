// The only file that knows Emscripten. Every entry point takes and returns
// strings: JSON in, JSON out, always an object {"ok":true,"value":...} or
// {"ok":false,"code":...,"message":...}. Nothing throws across the boundary:
// without that rule a C++ exception would reach JS as a bare pointer number.
// The JS wrapper (kvbudget.js) turns the error objects into JS errors in one place.
//
// The page never computes memory itself: compute() returns every number the
// page shows, from the same core functions the CLI and the native tests use.
#include <emscripten/bind.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dtype.h"
#include "kv.h"
#include "model.h"
#include "result.h"
#include "units.h"
#if KVB_HAVE_GPUS
#include "gpus.h"
#endif
#if KVB_HAVE_WEIGHTS
#include "weights.h"
#endif

using nlohmann::json;

namespace {

std::string ok(json value) {
    json out = {{"ok", true}, {"value", std::move(value)}};
    return out.dump();
}

std::string fail(const std::string& code, const std::string& message) {
    json out = {{"ok", false}, {"code", code}, {"message", message}};
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string fail(const kvb::Error& e) { return fail(e.code, e.message); }

// Runs `f` and converts anything thrown into an error value.
template <class F>
std::string guarded(F&& f) {
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return fail("out_of_memory", "kvbudget ran out of memory in the browser");
    } catch (const std::exception& e) {
        return fail("internal", std::string("internal error: ") + e.what());
    } catch (...) {
        return fail("internal", "internal error");
    }
}

// Parsed models live here between calls so a control change does not re-parse
// the config (a recompute must stay well under a millisecond).
std::map<int, kvb::ModelSpec>& models() {
    static std::map<int, kvb::ModelSpec> m;
    return m;
}
int next_handle = 1;

json layer_json(const kvb::Layer& l) {
    json j = {{"kind", kvb::to_string(l.kind)}};
    switch (l.kind) {
        case kvb::LayerKind::Full:
        case kvb::LayerKind::Sliding:
        case kvb::LayerKind::Chunked:
            j["kvHeads"] = l.kv_heads;
            j["kHeadDim"] = l.k_head_dim;
            j["vHeadDim"] = l.v_head_dim;
            if (l.kind != kvb::LayerKind::Full) j["window"] = l.window;
            break;
        case kvb::LayerKind::Mla:
            j["kvLoraRank"] = l.kv_lora_rank;
            j["qkRopeHeadDim"] = l.qk_rope_head_dim;
            j["kvHeads"] = l.kv_heads;
            j["kHeadDim"] = l.k_head_dim;
            j["vHeadDim"] = l.v_head_dim;
            break;
        case kvb::LayerKind::Linear:
        case kvb::LayerKind::Mamba:
            j["convKernel"] = l.state.conv_kernel;
            j["dInner"] = l.state.d_inner;
            j["nGroups"] = l.state.n_groups;
            j["dState"] = l.state.d_state;
            j["heads"] = l.state.heads;
            j["convElems"] = l.state.conv_elems();
            j["ssmElems"] = l.state.ssm_elems();
            break;
        case kvb::LayerKind::None:
            break;
    }
    return j;
}

// Runs of identical layers, in model order: what the formula panel shows
// ("2 × 32 layers × 8 KV heads × 128 × 2 B").
json layer_groups(const kvb::ModelSpec& m, const kvb::KvDtypes* d) {
    json groups = json::array();
    std::vector<std::pair<json, std::vector<int64_t>>> seen;
    for (size_t i = 0; i < m.layers.size(); ++i) {
        json sig = layer_json(m.layers[i]);
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == sig; });
        if (it == seen.end()) {
            seen.push_back({sig, {static_cast<int64_t>(i)}});
        } else {
            it->second.push_back(static_cast<int64_t>(i));
        }
    }
    for (auto& [sig, idx] : seen) {
        json g = sig;
        g["layers"] = static_cast<int64_t>(idx.size());
        g["firstLayer"] = idx.front();
        if (d) {
            const kvb::Layer& l = m.layers[static_cast<size_t>(idx.front())];
            const int64_t per_layer = kvb::layer_bytes_per_token(l, *d);
            const int64_t state = kvb::layer_state_bytes(l, *d);
            int64_t total = 0, state_total = 0;
            if (kvb::mul_overflows(per_layer, static_cast<int64_t>(idx.size()), &total) ||
                kvb::mul_overflows(state, static_cast<int64_t>(idx.size()), &state_total)) {
                throw std::overflow_error("bytes overflow in layer group");
            }
            g["bytesPerTokenPerLayer"] = per_layer;
            g["bytesPerToken"] = total;
            g["stateBytesPerLayer"] = state;
            g["stateBytes"] = state_total;
        }
        groups.push_back(std::move(g));
    }
    return groups;
}

json kv_type_json(const kvb::KvType& t) {
    return {{"name", t.name}, {"blockValues", t.block_values}, {"blockBytes", t.block_bytes}};
}

json model_json(const kvb::ModelSpec& m) {
    json j = {
        {"name", m.name},
        {"modelType", m.model_type},
        {"architecture", m.architecture},
        {"family", m.family},
        {"generic", m.generic},
        {"multimodal", m.multimodal},
        {"dtype", m.dtype},
        {"maxPositionEmbeddings", m.max_position_embeddings},
        {"numLayers", static_cast<int64_t>(m.layers.size())},
        {"notes", m.notes},
        {"quantization", {{"method", m.quant.method}, {"bits", m.quant.bits}, {"groupSize", m.quant.group_size}}},
        {"hiddenSize", m.dims.hidden_size},
        {"numAttentionHeads", m.dims.num_attention_heads},
        {"vocabSize", m.dims.vocab_size},
        {"numExperts", m.dims.num_experts},
        {"expertsPerToken", m.dims.experts_per_token},
    };
    json counts = json::object();
    for (auto k : {kvb::LayerKind::Full, kvb::LayerKind::Sliding, kvb::LayerKind::Chunked, kvb::LayerKind::Mla,
                   kvb::LayerKind::Linear, kvb::LayerKind::Mamba, kvb::LayerKind::None}) {
        if (m.count(k)) counts[kvb::to_string(k)] = m.count(k);
    }
    j["layerCounts"] = counts;
    return j;
}

const kvb::ModelSpec* find_model(int handle) {
    auto it = models().find(handle);
    return it == models().end() ? nullptr : &it->second;
}

// --- input reading: every field optional with a default, every bad value an error ---

struct Input {
    const json& j;
    kvb::Error* err;
    int64_t count(const char* key, int64_t def, int64_t lo, int64_t hi) const {
        if (!j.contains(key) || j[key].is_null()) return def;
        const json& v = j[key];
        double d = 0;
        if (v.is_number_integer()) {
            d = static_cast<double>(v.get<int64_t>());
        } else if (v.is_number_float()) {
            d = v.get<double>();
        } else {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a number, got " + v.dump());
            return def;
        }
        if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) || d != static_cast<double>(static_cast<int64_t>(d))) {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a whole number from " + kvb::with_commas(lo) +
                                                    " to " + kvb::with_commas(hi) + ", got " + v.dump());
            return def;
        }
        return static_cast<int64_t>(d);
    }
    double fraction(const char* key, double def) const {
        if (!j.contains(key) || j[key].is_null()) return def;
        const json& v = j[key];
        if (!v.is_number() || !(v.get<double>() > 0.0 && v.get<double>() <= 1.0)) {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a number above 0 and at most 1, got " + v.dump());
            return def;
        }
        return v.get<double>();
    }
    std::string str(const char* key, const std::string& def) const {
        if (!j.contains(key) || j[key].is_null()) return def;
        if (!j[key].is_string()) {
            *err = kvb::make_error("bad_value", std::string(key) + " must be a string");
            return def;
        }
        return j[key].get<std::string>();
    }
};

// KV element types as the chosen engine spells them.
kvb::Result<kvb::KvDtypes> engine_kv_dtypes(const kvb::ModelSpec& m, const std::string& engine, const std::string& kv,
                                            const std::string& ctk, const std::string& ctv) {
    if (engine == "llamacpp") {
        auto k = kvb::llamacpp_kv_type(ctk);
        if (!k) return k.error();
        auto v = kvb::llamacpp_kv_type(ctv);
        if (!v) return v.error();
        kvb::KvDtypes d;
        d.k = k.value();
        d.v = v.value();
        // llama.cpp keeps recurrent state in f32 whatever -ctk/-ctv say.
        d.conv_state_bytes = 4;
        d.ssm_state_bytes = 4;
        return d;
    }
    auto t = kvb::vllm_kv_type(kv, m.dtype);
    if (!t) return t.error();
    return kvb::uniform_kv_dtypes(m, t.value());
}

constexpr int64_t kMaxTokens = int64_t{1} << 40;

std::string compute(int handle, const std::string& input_text) {
    const kvb::ModelSpec* mp = find_model(handle);
    if (!mp) return fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
    json in = json::parse(input_text, nullptr, false);
    if (in.is_discarded() || !in.is_object()) return fail("not_json", "compute input must be a JSON object");
    kvb::Error err;
    Input r{in, &err};
    const std::string engine = r.str("engine", "vllm");
    const int64_t context = r.count("context", 32768, 1, kMaxTokens);
    const int64_t seqs = r.count("seqs", 1, 1, int64_t{1} << 20);
    const std::string kv = r.str("kvDtype", "auto");
    const std::string ctk = r.str("cacheTypeK", "f16");
    const std::string ctv = r.str("cacheTypeV", "f16");
    if (!err.code.empty()) return fail(err);
    if (engine != "vllm" && engine != "llamacpp" && engine != "transformers") {
        return fail("bad_value", "engine must be vllm, llamacpp or transformers, got \"" + engine + "\"");
    }

    // transformers caches MLA decompressed: K and V per head, like a full-attention layer
    // (same rule as `kvbudget kv --engine transformers`).
    kvb::ModelSpec decompressed;
    if (engine == "transformers" && mp->has(kvb::LayerKind::Mla)) {
        decompressed = *mp;
        for (auto& l : decompressed.layers) {
            if (l.kind == kvb::LayerKind::Mla) l.kind = kvb::LayerKind::Full;
        }
    }
    const kvb::ModelSpec& m = decompressed.layers.empty() ? *mp : decompressed;

    auto dt = engine_kv_dtypes(m, engine, kv, ctk, ctv);
    if (!dt) return fail(dt.error());
    const kvb::KvDtypes& d = dt.value();

    json out;
    out["model"] = model_json(m);
    out["engine"] = engine;
    out["kvTypes"] = {{"k", kv_type_json(d.k)}, {"v", kv_type_json(d.v)},
                      {"convStateBytes", d.conv_state_bytes}, {"ssmStateBytes", d.ssm_state_bytes}};

    const kvb::IdealKv ideal = kvb::ideal_kv(m, d);
    auto total = kvb::kv_bytes_at(m, d, context, seqs);
    if (!total) return fail(total.error());
    auto per_seq = kvb::kv_bytes_at(m, d, context, 1);
    if (!per_seq) return fail(per_seq.error());
    out["kv"] = {
        {"bytesPerToken", ideal.bytes_per_token},
        {"windowedBytesPerToken", ideal.windowed_bytes_per_token},
        {"stateBytesPerSeq", ideal.state_bytes_per_seq},
        {"bytesPerSeq", per_seq.value()},
        {"bytesTotal", total.value()},
        {"context", context},
        {"seqs", seqs},
    };
    json kinds = json::array();
    for (const auto& k : ideal.kinds) {
        kinds.push_back({{"kind", kvb::to_string(k.kind)}, {"layers", k.layers}, {"bytesPerToken", k.bytes_per_token},
                         {"window", k.window}, {"stateBytes", k.state_bytes}});
    }
    out["kv"]["kinds"] = kinds;
    out["formula"] = layer_groups(m, &d);

    // The seed article's table: fixed contexts plus the model's own maximum.
    json table = json::array();
    std::vector<int64_t> points = {1024, 4096, 8192, 32768, 131072};
    if (m.max_position_embeddings > 0 &&
        std::find(points.begin(), points.end(), m.max_position_embeddings) == points.end()) {
        points.push_back(m.max_position_embeddings);
    }
    std::sort(points.begin(), points.end());
    for (int64_t c : points) {
        if (m.max_position_embeddings > 0 && c > m.max_position_embeddings) continue;
        auto one = kvb::kv_bytes_at(m, d, c, 1);
        auto all = kvb::kv_bytes_at(m, d, c, seqs);
        if (!one || !all) continue;
        table.push_back({{"context", c}, {"isModelMax", c == m.max_position_embeddings},
                         {"beyondModelMax", m.max_position_embeddings > 0 && c > m.max_position_embeddings},
                         {"bytesPerSeq", one.value()}, {"bytesTotal", all.value()}});
    }
    out["contextTable"] = table;

    // MHA / GQA / MQA: the same model with every attention layer re-headed.
    json cmp = json::array();
    struct Variant { const char* name; int64_t heads; };
    for (Variant v : {Variant{"MHA", 0}, Variant{"actual", -1}, Variant{"MQA", 1}}) {
        kvb::ModelSpec alt = v.heads < 0 ? m : kvb::with_kv_heads(m, v.heads);
        const kvb::IdealKv ik = kvb::ideal_kv(alt, d);
        auto at = kvb::kv_bytes_at(alt, d, context, seqs);
        int64_t heads = 0;
        for (const auto& l : alt.layers) heads = std::max(heads, l.kv_heads);
        // Per token while inside every window, as `kvbudget kv` reports MHA / MQA.
        cmp.push_back({{"variant", v.name}, {"kvHeads", heads}, {"bytesPerToken", ik.bytes_per_token + ik.windowed_bytes_per_token},
                       {"bytesTotal", at ? json(at.value()) : json(nullptr)}});
    }
    out["comparison"] = cmp;

    // KV versus context for the chart: log-spaced points up to past the model maximum.
    int64_t top = std::max<int64_t>({context, m.max_position_embeddings, 4096});
    json xs = json::array(), ys = json::array();
    for (int64_t c = 256; c <= top * 2; c *= 2) {
        for (int64_t step : {c, c + c / 2}) {
            if (step > top * 2) break;
            auto b = kvb::kv_bytes_at(m, d, step, seqs);
            if (!b) break;
            xs.push_back(step);
            ys.push_back(b.value());
        }
    }
    out["chart"] = {{"contexts", xs}, {"kvBytes", ys}};

    return ok(out);
}

std::string parse_config(const std::string& text, const std::string& name) {
    auto r = kvb::parse_config(text, name);
    if (!r) return fail(r.error());
    const int handle = next_handle++;
    json spec = model_json(r.value());
    spec["layerGroups"] = layer_groups(r.value(), nullptr);
    models().emplace(handle, std::move(r.value()));
    return ok({{"handle", handle}, {"spec", spec}});
}

std::string release_model(int handle) {
    return models().erase(handle) ? ok(true) : fail("bad_handle", "no model loaded under handle " + std::to_string(handle));
}

std::string kv_type_names(const std::string& engine) {
    if (engine == "llamacpp") return ok(kvb::llamacpp_kv_type_names());
    if (engine == "vllm" || engine == "transformers") return ok(kvb::vllm_kv_type_names());
    return fail("bad_value", "engine must be vllm, llamacpp or transformers, got \"" + engine + "\"");
}

std::string parse_size(const std::string& text) {
    auto r = kvb::parse_size(text);
    return r ? ok(r.value()) : fail(r.error());
}

std::string format_bytes(double bytes) {
    if (!(bytes >= -9.2e18 && bytes <= 9.2e18)) return fail("bad_value", "bytes out of range");
    return ok(kvb::format_bytes(static_cast<int64_t>(bytes)));
}

// Lists the page builds its selects from: GPUs and weight formats as the core knows them.
std::string catalog() {
    json gpus = json::array();
#if KVB_HAVE_GPUS
    for (const auto& g : kvb::gpu_catalog()) {
        gpus.push_back({{"id", g.id}, {"name", g.name}, {"vendor", g.vendor}, {"memoryBytes", g.memory_bytes},
                        {"totalBytes", g.total_bytes()}, {"bandwidthBytesPerS", g.bandwidth_bytes_per_s},
                        {"unifiedMemory", g.unified_memory}});
    }
#endif
    json formats = json::array();
#if KVB_HAVE_WEIGHTS
    for (const auto& n : kvb::weight_format_names()) formats.push_back({{"id", n}, {"label", n}});
#endif
    return ok({{"gpus", gpus}, {"weightFormats", formats}});
}

}  // namespace

EMSCRIPTEN_BINDINGS(kvbudget) {
    emscripten::function("parseConfig", +[](std::string text, std::string name) {
        return guarded([&] { return parse_config(text, name); });
    });
    emscripten::function("releaseModel", +[](int handle) { return guarded([&] { return release_model(handle); }); });
    emscripten::function("compute", +[](int handle, std::string input) {
        return guarded([&] { return compute(handle, input); });
    });
    emscripten::function("kvTypeNames", +[](std::string engine) { return guarded([&] { return kv_type_names(engine); }); });
    emscripten::function("parseSize", +[](std::string text) { return guarded([&] { return parse_size(text); }); });
    emscripten::function("catalog", +[]() { return guarded([&] { return catalog(); }); });
    emscripten::function("formatBytes", +[](double b) { return guarded([&] { return format_bytes(b); }); });
}
