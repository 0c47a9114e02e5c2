#include "kv/kv.h"

#include <algorithm>

#include "base/units.h"

namespace kvb {

namespace {
bool is_attention(LayerKind k) {
    return k == LayerKind::Full || k == LayerKind::Sliding || k == LayerKind::Chunked;
}
bool is_state(LayerKind k) {
    return k == LayerKind::Linear || k == LayerKind::Mamba;
}
constexpr int64_t kMaxContext = int64_t(1) << 40;
}  // namespace

KvDtypes uniform_kv_dtypes(const ModelSpec& m, const KvType& t) {
    KvDtypes d{t, t, 2, 2};
    int model = dtype_size(m.dtype);
    // vLLM serves float32 checkpoints in 16 bit, and the state follows the served dtype.
    d.conv_state_bytes = model == 0 || model == 4 ? 2 : model;
    int ssm = m.ssm_dtype.empty() ? 0 : dtype_size(m.ssm_dtype);
    d.ssm_state_bytes = ssm ? ssm : d.conv_state_bytes;
    return d;
}

int64_t layer_bytes_per_token(const Layer& l, const KvDtypes& d) {
    if (is_attention(l.kind)) return d.k.bytes(l.kv_heads * l.k_head_dim) + d.v.bytes(l.kv_heads * l.v_head_dim);
    // DeepSeek-V4: what grows with the context is one latent (and one indexer key) per compress_ratio tokens.
    if (dsv4_layer(l))
        return l.compress_ratio > 1
                   ? (d.k.bytes(l.kv_lora_rank + l.qk_rope_head_dim) + d.k.bytes(l.indexer_head_dim)) / l.compress_ratio
                   : 0;
    if (l.kind == LayerKind::Mla) return d.k.bytes(l.kv_lora_rank + l.qk_rope_head_dim);
    return 0;
}

int64_t layer_window_bytes_per_token(const Layer& l, const KvDtypes& d) {
    if (l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) return layer_bytes_per_token(l, d);
    if (dsv4_layer(l)) return d.k.bytes(l.kv_lora_rank + l.qk_rope_head_dim);
    return 0;
}

int64_t layer_state_bytes(const Layer& l, const KvDtypes& d) {
    if (!is_state(l.kind)) return 0;
    int64_t conv = l.state.conv_kernel > 0 ? l.state.conv_elems() : 0;
    return conv * d.conv_state_bytes + l.state.ssm_elems() * d.ssm_state_bytes;
}

IdealKv ideal_kv(const ModelSpec& m, const KvDtypes& d) {
    IdealKv out;
    for (const Layer& l : m.layers) {
        int64_t per = layer_bytes_per_token(l, d);
        int64_t st = layer_state_bytes(l, d);
        if (l.kind == LayerKind::Full || l.kind == LayerKind::Mla) out.bytes_per_token += per;
        out.windowed_bytes_per_token += layer_window_bytes_per_token(l, d);
        out.state_bytes_per_seq += st;
        auto it =
            std::find_if(out.kinds.begin(), out.kinds.end(), [&](const KindSummary& k) { return k.kind == l.kind; });
        if (it == out.kinds.end()) {
            out.kinds.push_back(KindSummary{l.kind});
            it = out.kinds.end() - 1;
        }
        it->layers += 1;
        it->bytes_per_token += per;
        it->window_bytes_per_token += dsv4_layer(l) ? layer_window_bytes_per_token(l, d) : 0;
        it->window = std::max(it->window, l.window);
        it->state_bytes += st;
    }
    return out;
}

Result<int64_t> kv_bytes_at(const ModelSpec& m, const KvDtypes& d, int64_t context, int64_t seqs) {
    if (context < 0 || seqs < 0) return make_error("bad_value", note("negative_context"));
    // Per layer: bytes (< 2^40) x tokens (< 2^63) < 2^103; 10^5 layers add under 2^120, inside
    // 128 bits. Times seqs (< 2^63) only once per_seq itself fits int64, so < 2^126.
    __int128 per_seq = 0;
    for (const Layer& l : m.layers) {
        if (l.kind == LayerKind::Sliding || l.kind == LayerKind::Chunked) {
            per_seq += static_cast<__int128>(layer_bytes_per_token(l, d)) * std::min(context, l.window);
            continue;
        }
        per_seq += static_cast<__int128>(layer_bytes_per_token(l, d)) * context + layer_state_bytes(l, d);
        if (dsv4_layer(l))
            per_seq += static_cast<__int128>(layer_window_bytes_per_token(l, d)) * std::min(context, l.window);
    }
    const __int128 total = per_seq > static_cast<__int128>(INT64_MAX) ? per_seq : per_seq * seqs;
    if (total > static_cast<__int128>(INT64_MAX)) {
        return make_error(
            "overflow",
            note("kv_overflow", {{"model", m.name}, {"seqs", with_commas(seqs)}, {"context", with_commas(context)}}));
    }
    return static_cast<int64_t>(total);
}

ModelSpec with_kv_heads(const ModelSpec& m, int64_t kv_heads) {
    ModelSpec out = m;
    int64_t heads = kv_heads > 0 ? kv_heads : m.dims.num_attention_heads;
    for (Layer& l : out.layers) {
        if (l.kind == LayerKind::Mla) {
            l.kind = LayerKind::Full;  // decompressed: per-head K (nope + rope) and V
        }
        if (is_attention(l.kind)) l.kv_heads = heads;
    }
    return out;
}

int64_t crossover_context(const ModelSpec& m, const KvDtypes& d, int64_t weights_bytes, int64_t seqs) {
    auto over = [&](int64_t ctx) {
        auto b = kv_bytes_at(m, d, ctx, seqs);
        return !b.ok() || b.value() > weights_bytes;
    };
    if (!over(kMaxContext)) return 0;
    int64_t lo = 0, hi = kMaxContext;  // over(lo) is false or lo == 0, over(hi) is true
    if (over(0)) return 0;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        (over(mid) ? hi : lo) = mid;
    }
    return hi;
}

}  // namespace kvb
