// llama.cpp KV cache as llama_context / llama_kv_cache(_iswa) / llama_memory_recurrent
// allocate it: K [n_embd_k_gqa, kv_size, n_stream] and V [n_embd_v_gqa, kv_size, n_stream]
// per layer in the -ctk / -ctv types, recurrent R and S rows in f32.
#include "engines/llamacpp.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "model/dtype.h"
#include "base/units.h"

namespace kvb {
namespace {

int64_t pad(int64_t x, int64_t n) { return (x + n - 1) / n * n; }  // GGML_PAD

bool is_attention(LayerKind k) {
    return k == LayerKind::Full || k == LayerKind::Sliding || k == LayerKind::Chunked || k == LayerKind::Mla;
}
bool is_swa(LayerKind k) { return k == LayerKind::Sliding || k == LayerKind::Chunked; }

struct Widths {
    int64_t k = 0, v = 0;
};

// n_embd_k_gqa / n_embd_v_gqa of one layer as llama.cpp sees it.
Widths layer_widths(const Layer& l, bool mla_v) {
    if (l.kind == LayerKind::Mla) {
        // deepseek2 in MLA mode: one KV "head" holding the latent + rope key.
        Widths w;
        w.k = l.kv_lora_rank + l.qk_rope_head_dim;
        w.v = mla_v ? l.kv_lora_rank : 0;
        return w;
    }
    Widths w;
    w.k = l.kv_heads * l.k_head_dim;
    w.v = l.kv_heads * (l.v_head_dim > 0 ? l.v_head_dim : l.k_head_dim);
    return w;
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

float mibf(int64_t bytes) { return static_cast<float>(bytes) / (1024.0f * 1024.0f); }

}  // namespace

std::string llamacpp_mib(int64_t bytes) { return fmt("%7.2f", mibf(bytes)); }

Result<LlamaLogFormat> parse_llama_log_format(const std::string& s) {
    if (s == "" || s == "current") return LlamaLogFormat::Current;
    if (s == "rs-seq") return LlamaLogFormat::RsSeq;
    if (s == "2025") return LlamaLogFormat::Y2025;
    if (s == "legacy" || s == "unified") return LlamaLogFormat::Unified;
    return make_error("bad_value", "--log-format must be current, rs-seq, 2025 or legacy, got '" + s + "'");
}

Result<LlamaLayout> llamacpp_layout(const ModelSpec& m, const LlamaOptions& o) {
    LlamaLayout L;
    auto tk = llamacpp_kv_type(o.type_k);
    if (!tk) return tk.error();
    auto tv = llamacpp_kv_type(o.type_v);
    if (!tv) return tv.error();
    if (o.n_seq_max < 1 || o.n_seq_max > 4096)
        return make_error("bad_value", "-np must be between 1 and 4096, got " + std::to_string(o.n_seq_max));
    if (o.n_ubatch < 1 || o.n_ubatch > (1 << 20))
        return make_error("bad_value", "-ub must be between 1 and 1048576, got " + std::to_string(o.n_ubatch));
    if (o.n_pad < 1 || o.n_pad > 4096) return make_error("bad_value", "context padding must be 1..4096");
    if (o.n_ctx < 0) return make_error("bad_value", "-c must not be negative, got " + std::to_string(o.n_ctx));
    if (m.layers.empty()) return make_error("bad_value", "model " + m.name + " has no layers");

    const bool legacy = o.log_format == LlamaLogFormat::Unified;
    const std::string kv_fn = legacy ? "llama_kv_cache_unified" : "llama_kv_cache";
    const std::string iswa_fn = legacy ? "llama_kv_cache_unified_iswa" : "llama_kv_cache_iswa";

    int64_t n_ctx = o.n_ctx;
    if (n_ctx == 0) {
        n_ctx = m.max_position_embeddings;
        if (n_ctx <= 0)
            return make_error("missing_field", "model " + m.name + " has no max_position_embeddings; pass -c");
        L.notes.push_back("-c 0: using the model's training context " + std::to_string(n_ctx));
    }
    if (n_ctx > (int64_t(1) << 32))
        return make_error("bad_value", "-c " + std::to_string(n_ctx) + " does not fit llama.cpp's 32-bit n_ctx");
    L.n_ctx_requested = n_ctx;
    const int64_t nseq = o.n_seq_max;
    L.n_seq_max = nseq;
    L.unified = legacy || o.kv_unified || nseq == 1;

    n_ctx = pad(n_ctx, o.n_pad);
    int64_t n_ctx_seq = n_ctx;
    // Builds before per-sequence streams (mid 2025) kept one cache of n_ctx cells for all sequences.
    const bool streams = !legacy && !o.kv_unified && nseq > 1;
    if (streams) {
        n_ctx_seq = pad(n_ctx / nseq, o.n_pad);
        if (n_ctx / nseq == 0)
            return make_error("bad_value", "n_ctx_seq == 0: -c " + std::to_string(o.n_ctx) + " is smaller than -np " +
                                               std::to_string(nseq));
        if (n_ctx != n_ctx_seq * nseq) {
            n_ctx = n_ctx_seq * nseq;
            L.notes.push_back("llama_context: n_ctx is not divisible by n_seq_max - rounding down to " +
                              std::to_string(n_ctx));
        }
    }
    L.n_ctx = n_ctx;
    L.n_ctx_seq = n_ctx_seq;
    const int64_t n_stream = streams ? nseq : 1;
    L.n_stream = n_stream;
    if (m.max_position_embeddings > 0 && n_ctx_seq > m.max_position_embeddings)
        L.notes.push_back("llama_context: n_ctx_seq (" + std::to_string(n_ctx_seq) +
                          ") > n_ctx_train (" + std::to_string(m.max_position_embeddings) +
                          ") -- possible training context overflow");

    // Which attention layers are "SWA" for llama.cpp: only when sliding layers are
    // mixed with global ones. Archs whose every layer slides (Mistral-7B-v0.1 as "llama")
    // ignore the window and cache the whole context.
    int64_t n_attn = 0, n_swa_layers = 0, n_swa = 0;
    for (const Layer& l : m.layers) {
        if (!is_attention(l.kind)) continue;
        ++n_attn;
        if (is_swa(l.kind)) {
            ++n_swa_layers;
            n_swa = std::max(n_swa, l.window);
        }
    }
    const bool iswa = n_swa_layers > 0 && n_swa_layers < n_attn;
    if (n_swa_layers > 0 && !iswa)
        L.notes.push_back("every attention layer slides: llama.cpp's architecture for this model keeps the full "
                          "context (no separate SWA cache)");

    auto build = [&](const std::string& role, int64_t cells, bool want_swa) -> Result<LlamaKvCache> {
        LlamaKvCache c;
        c.role = role;
        c.cells = cells;
        c.n_seq_max = nseq;
        c.n_stream = n_stream;
        c.type_k = tk->name;
        c.type_v = tv->name;
        c.window = want_swa ? n_swa : 0;
        for (size_t i = 0; i < m.layers.size(); ++i) {
            const Layer& l = m.layers[i];
            if (!is_attention(l.kind)) continue;
            if (iswa && is_swa(l.kind) != want_swa) continue;
            const Widths w = layer_widths(l, o.mla_v_cache);
            if (w.k % tk->block_values != 0)
                return make_error("unsupported", "layer " + std::to_string(i) + " of " + m.name + ": K row of " +
                                                     std::to_string(w.k) + " values is not a multiple of the " +
                                                     tk->name + " block (" + std::to_string(tk->block_values) + ")");
            if (w.v % tv->block_values != 0)
                return make_error("unsupported", "layer " + std::to_string(i) + " of " + m.name + ": V row of " +
                                                     std::to_string(w.v) + " values is not a multiple of the " +
                                                     tv->name + " block (" + std::to_string(tv->block_values) + ")");
            const int64_t kr = tk->bytes(w.k), vr = tv->bytes(w.v);
            int64_t rows = 0, kb = 0, vb = 0;
            if (mul_overflows(cells, n_stream, &rows) || mul_overflows(kr, rows, &kb) ||
                mul_overflows(vr, rows, &vb) || add_overflows(c.k_bytes, kb, &c.k_bytes) ||
                add_overflows(c.v_bytes, vb, &c.v_bytes))
                return make_error("overflow", "KV cache of " + m.name + " does not fit in 64-bit bytes");
            c.layers += 1;
            c.bytes_per_cell += kr + vr;
        }
        return c;
    };
    auto line = [&](const LlamaKvCache& c) {
        if (legacy)
            return fmt("%s: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB",
                       kv_fn.c_str(), static_cast<double>(mibf(c.k_bytes + c.v_bytes)),
                       static_cast<unsigned>(c.cells), static_cast<int>(c.layers), static_cast<unsigned>(c.n_seq_max),
                       c.type_k.c_str(), static_cast<double>(mibf(c.k_bytes)), c.type_v.c_str(),
                       static_cast<double>(mibf(c.v_bytes)));
        return fmt("%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB",
                   kv_fn.c_str(), static_cast<double>(mibf(c.k_bytes + c.v_bytes)), static_cast<unsigned>(c.cells),
                   static_cast<int>(c.layers), static_cast<unsigned>(c.n_seq_max), static_cast<unsigned>(c.n_stream),
                   c.type_k.c_str(), static_cast<double>(mibf(c.k_bytes)), c.type_v.c_str(),
                   static_cast<double>(mibf(c.v_bytes)));
    };

    if (n_attn > 0) {
        if (iswa) {
            int64_t size_swa;
            if (legacy)
                size_swa = std::min(n_ctx_seq, pad(n_swa * nseq + o.n_ubatch, o.n_pad));
            else
                // note: the SWA cache is always padded to 256 (llama.cpp issue 17037)
                size_swa = pad(std::min(n_ctx_seq, n_swa * (streams ? 1 : nseq) + o.n_ubatch), 256);
            if (o.swa_full) {
                L.log_lines.push_back(iswa_fn +
                                      ": using full-size SWA cache (ref: "
                                      "https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)");
                size_swa = n_ctx_seq;
            }
            L.log_lines.push_back(iswa_fn + ": creating non-SWA KV cache, size = " + std::to_string(n_ctx_seq) +
                                  " cells");
            auto base = build("non-SWA", n_ctx_seq, false);
            if (!base) return base.error();
            L.log_lines.push_back(line(*base));
            L.caches.push_back(*base);
            L.log_lines.push_back(iswa_fn + ": creating     SWA KV cache, size = " + std::to_string(size_swa) +
                                  " cells");
            auto swa = build("SWA", size_swa, true);
            if (!swa) return swa.error();
            L.log_lines.push_back(line(*swa));
            L.caches.push_back(*swa);
            L.bytes_per_token = base->bytes_per_cell + (o.swa_full ? swa->bytes_per_cell : 0);
        } else {
            auto c = build("kv", n_ctx_seq, false);
            if (!c) return c.error();
            L.log_lines.push_back(line(*c));
            L.caches.push_back(*c);
            L.bytes_per_token = c->bytes_per_cell;
        }
    }
    for (const auto& c : L.caches)
        if (add_overflows(L.kv_bytes, c.k_bytes, &L.kv_bytes) || add_overflows(L.kv_bytes, c.v_bytes, &L.kv_bytes))
            return make_error("overflow", "KV cache of " + m.name + " does not fit in 64-bit bytes");

    if (m.has_state()) {
        LlamaRecurrent& r = L.recurrent;
        r.present = true;
        r.cells = std::max<int64_t>(1, nseq);
        r.layers_logged = static_cast<int64_t>(m.layers.size());
        r.n_seq_max = nseq;
        for (const Layer& l : m.layers) {
            if (l.kind != LayerKind::Linear && l.kind != LayerKind::Mamba) continue;
            ++r.state_layers;
            r.r_bytes += l.state.conv_elems() * 4 * r.cells;
            r.s_bytes += l.state.ssm_elems() * 4 * r.cells;
        }
        const float tot = mibf(r.r_bytes + r.s_bytes);
        switch (o.log_format) {
            case LlamaLogFormat::Current:
                L.log_lines.push_back(fmt("llama_memory_recurrent: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs "
                                          "%2u rs_seq), R (f32): %7.2f MiB, S (f32): %7.2f MiB, P (f32): %7.2f MiB",
                                          double(tot), unsigned(r.cells), int(r.layers_logged), unsigned(nseq), 0u,
                                          double(mibf(r.r_bytes)), double(mibf(r.s_bytes)), 0.0));
                break;
            case LlamaLogFormat::RsSeq:
                L.log_lines.push_back(fmt("llama_memory_recurrent: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs "
                                          "%2u rs_seq), R (f32): %7.2f MiB, S (f32): %7.2f MiB",
                                          double(tot), unsigned(r.cells), int(r.layers_logged), unsigned(nseq), 0u,
                                          double(mibf(r.r_bytes)), double(mibf(r.s_bytes))));
                break;
            default:
                L.log_lines.push_back(fmt("llama_memory_recurrent: size = %7.2f MiB (%6u cells, %3d layers, %2u "
                                          "seqs), R (f32): %7.2f MiB, S (f32): %7.2f MiB",
                                          double(tot), unsigned(r.cells), int(r.layers_logged), unsigned(nseq),
                                          double(mibf(r.r_bytes)), double(mibf(r.s_bytes))));
                break;
        }
    }
    L.total_bytes = L.kv_bytes + L.recurrent.r_bytes + L.recurrent.s_bytes;
    if (n_attn == 0 && !m.has_state()) L.notes.push_back("model has no layer with a KV cache or recurrent state");
    return L;
}

}  // namespace kvb
