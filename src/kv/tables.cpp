#include "kv/tables.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/units.h"
#include "engines/llamacpp.h"
#include "engines/vllm.h"
#include "model/dtype.h"

namespace kvb {

Result<EngineKv> engine_kv(const ModelSpec& m, const std::string& engine, const std::string& kv, const std::string& ctk,
                           const std::string& ctv, const std::string& vllm_version, const std::string& served_dtype) {
    EngineKv e{engine, m, {}};
    if (engine != "vllm" && std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer))
        return make_error("unsupported",
                          note(engine == "llamacpp" ? "llamacpp_dsv4" : "transformers_dsv4", {{"model", m.name}}));
    // transformers has no MiniMax-M3 model (engines/transformers_cache.cpp).
    if (engine == "transformers" && m.family == "minimax_m3")
        return make_error("unsupported", note("transformers_minimax_m3", {{"model", m.name}}));
    if (engine == "llamacpp") {
        e.view = llamacpp_cached_view(m);
        auto k = llamacpp_kv_type(ctk);
        if (!k) return k.error();
        auto v = llamacpp_kv_type(ctv);
        if (!v) return v.error();
        e.dtypes = uniform_kv_dtypes(m, k.value());
        e.dtypes.v = v.value();
        // llama.cpp keeps recurrent state in f32 whatever -ctk / -ctv say.
        e.dtypes.conv_state_bytes = e.dtypes.ssm_state_bytes = 4;
        return e;
    }
    if (engine == "vllm") {
        auto rel = vllm_release(vllm_version);
        if (!rel) return rel.error();
        // The budget's dtype for auto: the served float, or the KV cache the checkpoint declares (fp8_e4m3).
        auto served = [&] {
            auto kt = vllm_kv_type(served_dtype, m.dtype);
            return kt ? kt.value() : vllm_auto_kv_type(served_dtype);
        };
        // Without a budget, what vLLM makes of the spelling on this checkpoint (vllm_kv_choice).
        auto chosen = [&]() -> Result<KvType> {
            auto c = vllm_kv_choice(m, rel.value(), kv, nullptr);
            if (!c) return c.error();
            return vllm_kv_cache_dtype(c->dtype, m, rel->kv_cache_dtypes);
        };
        auto t = kv == "auto" && !served_dtype.empty() ? Result<KvType>(served()) : chosen();
        if (!t) return t.error();
        e.dtypes = uniform_kv_dtypes(m, t.value());
        return e;
    }
    if (engine == "transformers") {
        // DynamicCache holds tensors in the loaded dtype (float32 checkpoints stay float32).
        std::string dt = kv == "auto" || kv.empty() ? m.dtype : kv;
        int b = dtype_size(dt);
        if (b <= 0 || b == 1) {
            return make_error("bad_kv_dtype", note("unknown_transformers_kv_dtype", {{"value", dt}}));
        }
        KvType t{dt, 1, b};
        e.dtypes = KvDtypes{t, t, b, b};
        for (Layer& l : e.view.layers) {
            switch (l.kind) {
                case LayerKind::Mla: l.kind = LayerKind::Full; break;  // cached decompressed, per head
                case LayerKind::Sliding:
                case LayerKind::Chunked: l.window = std::max<int64_t>(0, l.window - 1); break;  // keeps window-1
                case LayerKind::Linear:
                case LayerKind::Mamba: l.state.conv_kernel += 1; break;  // conv state of conv_kernel columns
                default: break;
            }
        }
        // Gated-delta-net recurrent state is kept in float32; Mamba's follows the config.
        if (m.has(LayerKind::Linear))
            e.dtypes.ssm_state_bytes = 4;
        else if (!m.ssm_dtype.empty() && dtype_size(m.ssm_dtype))
            e.dtypes.ssm_state_bytes = dtype_size(m.ssm_dtype);
        return e;
    }
    return make_error("bad_value", note("unknown_engine", {{"value", engine}}));
}

bool same_geometry(const Layer& a, const Layer& b) {
    return a.kind == b.kind && a.kv_heads == b.kv_heads && a.k_head_dim == b.k_head_dim &&
           a.v_head_dim == b.v_head_dim && a.window == b.window && a.kv_lora_rank == b.kv_lora_rank &&
           a.qk_rope_head_dim == b.qk_rope_head_dim && a.state.conv_kernel == b.state.conv_kernel &&
           a.state.d_inner == b.state.d_inner && a.state.n_groups == b.state.n_groups &&
           a.state.d_state == b.state.d_state && a.state.heads == b.state.heads &&
           a.compress_ratio == b.compress_ratio && a.indexer_head_dim == b.indexer_head_dim;
}

std::vector<LayerGroup> layer_groups(const ModelSpec& m, const KvDtypes& d) {
    std::vector<LayerGroup> groups;
    // Geometry -> group, so that a model of many distinct layers stays near-linear (a
    // search over the groups per layer was O(layers^2) for a per-layer head list).
    using Key = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t, int64_t, int64_t>;
    std::map<Key, size_t> where;
    for (size_t i = 0; i < m.layers.size(); ++i) {
        const Layer& l = m.layers[i];
        const Key key{
            static_cast<int>(l.kind), l.kv_heads,         l.k_head_dim,        l.v_head_dim,      l.window,
            l.kv_lora_rank,           l.qk_rope_head_dim, l.state.conv_kernel, l.state.d_inner,   l.state.n_groups,
            l.state.d_state,          l.state.heads,      l.compress_ratio,    l.indexer_head_dim};
        auto [pos, fresh] = where.emplace(key, groups.size());
        auto it = fresh ? groups.end() : groups.begin() + static_cast<std::ptrdiff_t>(pos->second);
        if (fresh) {
            LayerGroup g;
            g.layer = m.layers[i];
            g.first_layer = i;
            g.bytes_per_token_per_layer = layer_bytes_per_token(g.layer, d);
            g.state_bytes_per_layer = layer_state_bytes(g.layer, d);
            groups.push_back(g);
            it = groups.end() - 1;
        }
        // Layer counts are bounded (100,000) and per-layer bytes by the parser's limits,
        // so these sums stay far inside int64.
        it->layers += 1;
        it->bytes_per_token += it->bytes_per_token_per_layer;
        it->state_bytes += it->state_bytes_per_layer;
    }
    return groups;
}

std::vector<ContextRow> context_table(const EngineKv& e, int64_t seqs, int64_t model_max, int64_t chosen) {
    const int64_t max = model_max > 0 ? model_max : e.view.max_position_embeddings;
    const int64_t end = max > 0 ? std::max(max, chosen) : 0;
    std::vector<int64_t> points = {1024, 4096, 8192, 32768, 131072};
    for (int64_t p : {max, chosen})
        if (p > 0 && std::find(points.begin(), points.end(), p) == points.end()) points.push_back(p);
    std::sort(points.begin(), points.end());
    std::vector<ContextRow> rows;
    for (int64_t c : points) {
        if (end > 0 && c > end) continue;
        auto one = kv_bytes_at(e.view, e.dtypes, c, 1);
        auto all = kv_bytes_at(e.view, e.dtypes, c, seqs);
        if (!one || !all) continue;
        rows.push_back({c, c == max, one.value(), all.value()});
    }
    return rows;
}

std::vector<HeadVariant> head_variants(const EngineKv& e, int64_t context, int64_t seqs) {
    std::vector<HeadVariant> out;
    struct V {
        const char* name;
        int64_t heads;
    };
    for (V v : {V{"MHA", 0}, V{"actual", -1}, V{"MQA", 1}}) {
        ModelSpec alt = v.heads < 0 ? e.view : with_kv_heads(e.view, v.heads);
        IdealKv ik = ideal_kv(alt, e.dtypes);
        HeadVariant h;
        h.variant = v.name;
        for (const auto& l : alt.layers) {
            if (head_attention(l.kind) || l.kind == LayerKind::Mla)
                h.kv_heads = std::max(h.kv_heads, l.kind == LayerKind::Mla ? 1 : l.kv_heads);
        }
        h.bytes_per_token = ik.bytes_per_token + ik.windowed_bytes_per_token;
        if (auto at = kv_bytes_at(alt, e.dtypes, context, seqs)) h.bytes_total = at.value();
        out.push_back(h);
    }
    return out;
}

std::vector<LadderRow> optimization_ladder(const ModelSpec& m, const std::string& engine, int64_t context, int64_t seqs,
                                           const std::string& served_dtype) {
    std::vector<LadderRow> rows;
    // The baseline is the model as the chosen engine caches it at its default cache type (llama.cpp keeps a
    // recurrent state in f32 where vLLM keeps it in the model dtype); every other row is its own engine's view.
    auto model_kv = engine_kv(m, engine, "auto", "f16", "f16", "", engine == "vllm" ? served_dtype : "");
    if (!model_kv) return rows;
    const ModelSpec& base_view = model_kv->view;
    auto base = kv_bytes_at(base_view, model_kv->dtypes, context, seqs);
    if (!base) return rows;
    const double baseline = static_cast<double>(base.value());
    auto saving = [&](int64_t b) { return baseline > 0 ? 1.0 - static_cast<double>(b) / baseline : 0.0; };
    auto add = [&](const std::string& step, const ModelSpec& spec, const KvDtypes& d, const std::string& detail) {
        auto at = kv_bytes_at(spec, d, context, seqs);
        if (!at) return;
        IdealKv ik = ideal_kv(spec, d);
        rows.push_back(
            {step, detail, ik.bytes_per_token + ik.windowed_bytes_per_token, at.value(), saving(at.value())});
    };
    const KvDtypes& md = model_kv->dtypes;
    const bool attention = m.has(LayerKind::Full) || m.has(LayerKind::Sliding) || m.has(LayerKind::Chunked);
    if (attention) add("mha", with_kv_heads(base_view, 0), md, md.k.name);
    add("model", base_view, md, md.k.name);
    if (auto fp8 = engine_kv(m, "vllm", "fp8")) add("fp8", fp8->view, fp8->dtypes, "vLLM --kv-cache-dtype fp8");
    for (const char* q : {"q8_0", "q4_0"}) {
        if (auto e = engine_kv(m, "llamacpp", "", q, q))
            add(q, e->view, e->dtypes, std::string("llama.cpp -ctk ") + q + " -ctv " + q);
    }
    // Paging: contiguous caches reserve the model's whole context for every sequence.
    if (m.max_position_embeddings > context) {
        if (auto full = kv_bytes_at(base_view, md, m.max_position_embeddings, seqs)) {
            rows.push_back({"contiguous", std::to_string(m.max_position_embeddings), std::nullopt, full.value(),
                            saving(full.value())});
        }
    }
    // MLA reference: DeepSeek-V3's latent (512 + 64) in place of every attention layer.
    if (attention && !m.has(LayerKind::Mla)) {
        ModelSpec mla = base_view;
        for (auto& l : mla.layers) {
            if (head_attention(l.kind)) {
                l.kind = LayerKind::Mla;
                l.kv_lora_rank = 512;
                l.qk_rope_head_dim = 64;
                l.window = 0;
            }
        }
        add("mla", mla, md, "512 + 64");
    }
    return rows;
}

std::vector<CurvePoint> kv_curve(const EngineKv& e, int64_t seqs, int64_t top) {
    std::vector<CurvePoint> pts;
    for (int64_t c = 256; c <= top * 2; c *= 2) {
        for (int64_t step : {c, c + c / 2}) {
            if (step > top * 2) break;
            auto b = kv_bytes_at(e.view, e.dtypes, step, seqs);
            if (!b) return pts;
            pts.push_back({step, b.value()});
        }
    }
    return pts;
}

}  // namespace kvb
