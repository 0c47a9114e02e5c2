// Sizes follow transformers' cache_utils.py (DynamicLayer, DynamicSlidingWindowLayer,
// which stores full_states[:, :, -sliding_window + 1:, :]) and the model-specific
// hybrid caches (Qwen3-Next: conv state of conv_kernel_size columns in the model dtype,
// recurrent state kept in float32 by the chunked gated-delta rule; Mamba-2 caches: conv and
// ssm states in the model dtype).
#include "engines/transformers_cache.h"

#include <algorithm>

#include "base/units.h"
#include "model/dtype.h"

namespace kvb {

Result<TransformersCache> transformers_cache(const ModelSpec& m, const std::string& dtype) {
    if (std::any_of(m.layers.begin(), m.layers.end(), dsv4_layer))
        return make_error("unsupported", note("transformers_dsv4", {{"model", m.name}}));
    // transformers has no minimax_m3 model (huggingface/transformers main: no models/minimax_m3); the Hub's
    // checkpoints run only through their own remote code (auto_map), whose cache kvbudget does not read.
    if (m.family == "minimax_m3")
        return make_error("unsupported", note("transformers_minimax_m3", {{"model", m.name}}));
    TransformersCache c;
    const std::string dt = dtype.empty() ? m.dtype : dtype;
    const int b = dtype_size(dt);
    if (b <= 0) return make_error("bad_value", note("unknown_cache_dtype", {{"value", dt}, {"model", m.name}}));
    c.dtype_bytes = b;
    const int ssm_cfg = m.ssm_dtype.empty() ? 0 : dtype_size(m.ssm_dtype);
    for (const Layer& l : m.layers) {
        switch (l.kind) {
            case LayerKind::Full:
            case LayerKind::Mla:  // kv_heads / k_head_dim / v_head_dim hold the decompressed view
                c.bytes_per_token += l.kv_heads * (l.k_head_dim + l.v_head_dim) * b;
                ++c.full_layers;
                break;
            case LayerKind::Sliding:
            case LayerKind::Chunked:
                c.windowed_bytes_per_token += l.kv_heads * (l.k_head_dim + l.v_head_dim) * b;
                ++c.windowed_layers;
                break;
            case LayerKind::Linear: {
                const StateGeometry& g = l.state;
                const int64_t conv = g.conv_kernel * g.conv_dim() * b;
                c.state_bytes += conv + g.ssm_elems() * 4;
                ++c.state_layers;
                break;
            }
            case LayerKind::Mamba: {
                const StateGeometry& g = l.state;
                const int64_t conv = g.conv_kernel * g.conv_dim() * b;
                c.state_bytes += conv + g.ssm_elems() * (ssm_cfg ? ssm_cfg : b);
                ++c.state_layers;
                break;
            }
            case LayerKind::None: break;
        }
    }
    return c;
}

Result<int64_t> transformers_cache_bytes(const ModelSpec& m, int64_t tokens, int64_t batch, const std::string& dtype) {
    if (tokens < 0 || batch < 0) return make_error("bad_value", note("negative_tokens"));
    const auto overflow = [] { return make_error("overflow", note("transformers_cache_overflow")); };
    auto c = transformers_cache(m, dtype);
    if (!c) return c.error();
    int64_t per_seq = 0, t = 0;
    if (mul_overflows(c->bytes_per_token, tokens, &t) || add_overflows(per_seq, t, &per_seq)) return overflow();
    for (const Layer& l : m.layers) {
        if (l.kind != LayerKind::Sliding && l.kind != LayerKind::Chunked) continue;
        const int64_t kept = std::min(tokens, std::max<int64_t>(0, l.window - 1));
        if (mul_overflows(l.kv_heads * (l.k_head_dim + l.v_head_dim) * c->dtype_bytes, kept, &t) ||
            add_overflows(per_seq, t, &per_seq))
            return overflow();
    }
    if (add_overflows(per_seq, c->state_bytes, &per_seq)) return overflow();
    int64_t total = 0;
    if (mul_overflows(per_seq, batch, &total)) return overflow();
    return total;
}

}  // namespace kvb
