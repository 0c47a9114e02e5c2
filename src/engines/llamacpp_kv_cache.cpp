// One llama_kv_cache as llama.cpp allocates it: K [n_embd_k_gqa, kv_size, n_stream] and
// V [n_embd_v_gqa, kv_size, n_stream] per layer in the -ctk / -ctv types (MLA: K only,
// the latent + rope key), and the "llama_kv_cache: size = ..." line it prints.
#include "base/arith.h"
#include "engines/llamacpp_steps.h"

namespace kvb::llamacpp_steps {
namespace {

struct Widths {
    int64_t k = 0, v = 0;
};

// n_embd_k_gqa / n_embd_v_gqa of one layer as llama.cpp sees it.
Widths layer_widths(const Layer& l, bool mla_v) {
    Widths w;
    if (l.kind == LayerKind::Mla) {
        // deepseek2 in MLA mode: one KV "head" holding the latent + rope key.
        w.k = l.kv_lora_rank + l.qk_rope_head_dim;
        w.v = mla_v ? l.kv_lora_rank : 0;
        return w;
    }
    w.k = l.kv_heads * l.k_head_dim;
    w.v = l.kv_heads * (l.v_head_dim > 0 ? l.v_head_dim : l.k_head_dim);
    return w;
}

// ggml rows are whole blocks of the quantized type.
Error row_not_blocks(const char* code, size_t layer, const ModelSpec& m, int64_t width, const KvType& t) {
    return make_error("unsupported", note(code, {{"layer", std::to_string(layer)},
                                                 {"model", m.name},
                                                 {"width", std::to_string(width)},
                                                 {"type", t.name},
                                                 {"block", std::to_string(t.block_values)}}));
}

}  // namespace

Result<LlamaKvCache> build_kv_cache(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, const std::string& role,
                                    int64_t cells, const CacheLayers& which) {
    LlamaKvCache kv;
    kv.role = role;
    kv.cells = cells;
    kv.n_seq_max = c.nseq;
    kv.n_stream = c.n_stream;
    kv.type_k = c.tk.name;
    kv.type_v = c.tv.name;
    kv.window = which.swa ? which.window : 0;
    for (size_t i = 0; i < m.layers.size(); ++i) {
        const Layer& l = m.layers[i];
        if (!is_attention(l.kind)) continue;
        if (which.split && is_swa(l.kind) != which.swa) continue;
        const Widths w = layer_widths(l, o.mla_v_cache);
        if (w.k % c.tk.block_values != 0) return row_not_blocks("llama_k_row_block", i, m, w.k, c.tk);
        if (w.v % c.tv.block_values != 0) return row_not_blocks("llama_v_row_block", i, m, w.v, c.tv);
        const int64_t kr = c.tk.bytes(w.k), vr = c.tv.bytes(w.v);
        int64_t rows = 0, kb = 0, vb = 0;
        if (mul_overflows(cells, c.n_stream, &rows) || mul_overflows(kr, rows, &kb) || mul_overflows(vr, rows, &vb) ||
            add_overflows(kv.k_bytes, kb, &kv.k_bytes) || add_overflows(kv.v_bytes, vb, &kv.v_bytes) ||
            add_overflows(kv.bytes_per_cell, kr + vr, &kv.bytes_per_cell))
            return make_error("overflow", note("engine_kv_overflow", {{"model", m.name}}));
        kv.layers += 1;
    }
    // The size line prints K + V: each fits, their sum must too.
    if (int64_t kv_total = 0; add_overflows(kv.k_bytes, kv.v_bytes, &kv_total))
        return make_error("overflow", note("engine_kv_overflow", {{"model", m.name}}));
    return kv;
}

std::string kv_cache_line(const Ctx& c, const LlamaKvCache& kv) {
    if (c.legacy)
        return fmt("%s: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB",
                   c.kv_fn.c_str(), static_cast<double>(mibf(kv.k_bytes + kv.v_bytes)), static_cast<unsigned>(kv.cells),
                   static_cast<int>(kv.layers), static_cast<unsigned>(kv.n_seq_max), kv.type_k.c_str(),
                   static_cast<double>(mibf(kv.k_bytes)), kv.type_v.c_str(), static_cast<double>(mibf(kv.v_bytes)));
    if (c.aligned_streams)
        return fmt("%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%2u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB",
                   c.kv_fn.c_str(), static_cast<double>(mibf(kv.k_bytes + kv.v_bytes)), static_cast<unsigned>(kv.cells),
                   static_cast<int>(kv.layers), static_cast<unsigned>(kv.n_seq_max), static_cast<unsigned>(kv.n_stream),
                   kv.type_k.c_str(), static_cast<double>(mibf(kv.k_bytes)), kv.type_v.c_str(),
                   static_cast<double>(mibf(kv.v_bytes)));
    return fmt("%s: size = %7.2f MiB (%6u cells, %3d layers, %2u/%u seqs), K (%s): %7.2f MiB, V (%s): %7.2f MiB",
               c.kv_fn.c_str(), static_cast<double>(mibf(kv.k_bytes + kv.v_bytes)), static_cast<unsigned>(kv.cells),
               static_cast<int>(kv.layers), static_cast<unsigned>(kv.n_seq_max), static_cast<unsigned>(kv.n_stream),
               kv.type_k.c_str(), static_cast<double>(mibf(kv.k_bytes)), kv.type_v.c_str(),
               static_cast<double>(mibf(kv.v_bytes)));
}

}  // namespace kvb::llamacpp_steps
