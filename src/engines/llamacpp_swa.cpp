// llama.cpp's sliding-window cache (llama-kv-cache-iswa.cpp): when sliding layers are
// mixed with global ones, the global layers get a cache of the whole context and the
// sliding layers one of about window x sequences + one micro-batch of cells.
#include <algorithm>

#include "engines/llamacpp.h"
#include "engines/llamacpp_steps.h"

namespace kvb::llamacpp_steps {
namespace {

int64_t pad(int64_t x, int64_t n) {
    return (x + n - 1) / n * n;
}  // GGML_PAD

// Cells of the SWA cache (llama_kv_cache_iswa's size_swa).
int64_t swa_cells(const LlamaOptions& o, const Ctx& c, int64_t n_swa) {
    // Without per-sequence streams (all sequences in one stream) the window is kept for each sequence.
    const int64_t want = n_swa * (c.streams ? 1 : c.nseq) + o.n_ubatch;
    // Before b6975 (#17046): padded to the context's padding, then capped at the context.
    if (!c.swa_pad_256) return std::min(c.n_ctx_seq, pad(want, o.n_pad));
    // note: the SWA cache is always padded to 256 (llama.cpp issue 17037)
    return pad(std::min(c.n_ctx_seq, want), 256);
}

}  // namespace

SwaSplit swa_split(const ModelSpec& m) {
    // Archs whose every layer slides (Mistral-7B-v0.1 as "llama") ignore the window and
    // cache the whole context.
    SwaSplit s;
    for (const Layer& l : m.layers) {
        if (!is_attention(l.kind)) continue;
        ++s.n_attn;
        if (is_swa(l.kind)) {
            ++s.n_swa_layers;
            s.n_swa = std::max(s.n_swa, l.window);
        }
    }
    s.iswa = s.n_swa_layers > 0 && s.n_swa_layers < s.n_attn;
    return s;
}

Result<bool> add_iswa_caches(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, const SwaSplit& s,
                             LlamaLayout& L) {
    int64_t size_swa = swa_cells(o, c, s.n_swa);
    if (o.swa_full) {
        L.log_lines.push_back(c.iswa_fn +
                              ": using full-size SWA cache (ref: "
                              "https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)");
        size_swa = c.n_ctx_seq;
    }
    L.log_lines.push_back(c.iswa_fn + ": creating non-SWA KV cache, size = " + std::to_string(c.n_ctx_seq) + " cells");
    auto base = build_kv_cache(m, o, c, "non-SWA", c.n_ctx_seq, CacheLayers{true, false, s.n_swa});
    if (!base) return base.error();
    L.log_lines.push_back(kv_cache_line(c, *base));
    L.caches.push_back(*base);
    L.log_lines.push_back(c.iswa_fn + ": creating     SWA KV cache, size = " + std::to_string(size_swa) + " cells");
    auto swa = build_kv_cache(m, o, c, "SWA", size_swa, CacheLayers{true, true, s.n_swa});
    if (!swa) return swa.error();
    L.log_lines.push_back(kv_cache_line(c, *swa));
    L.caches.push_back(*swa);
    L.bytes_per_token = base->bytes_per_cell + (o.swa_full ? swa->bytes_per_cell : 0);
    return true;
}

}  // namespace kvb::llamacpp_steps

namespace kvb {

ModelSpec llamacpp_cached_view(const ModelSpec& m) {
    ModelSpec v = m;
    const llamacpp_steps::SwaSplit s = llamacpp_steps::swa_split(m);
    if (s.n_swa_layers > 0 && !s.iswa)
        for (Layer& l : v.layers)
            if (llamacpp_steps::is_swa(l.kind)) {
                l.kind = LayerKind::Full;
                l.window = 0;
            }
    return v;
}

}  // namespace kvb
