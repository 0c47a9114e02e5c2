// llama_memory_recurrent (llama-memory-recurrent.cpp): one R (conv) and one S (ssm)
// row per state layer and sequence, always f32, and the size line of each build.
#include <algorithm>

#include "engines/llamacpp_steps.h"

namespace kvb::llamacpp_steps {

void add_recurrent(const ModelSpec& m, const LlamaOptions& o, const Ctx& c, LlamaLayout& L) {
    LlamaRecurrent& r = L.recurrent;
    const int64_t nseq = c.nseq;
    r.present = true;
    r.cells = std::max<int64_t>(1, nseq);
    r.n_rs_seq = o.n_rs_seq;
    // llama_memory_recurrent: n_rows = mem_size * (1 + n_rs_seq) rows of R and S per layer.
    const int64_t rows = r.cells * (1 + o.n_rs_seq);
    r.layers_logged = static_cast<int64_t>(m.layers.size());
    r.n_seq_max = nseq;
    for (const Layer& l : m.layers) {
        if (l.kind != LayerKind::Linear && l.kind != LayerKind::Mamba) continue;
        ++r.state_layers;
        r.r_bytes += l.state.conv_elems() * 4 * rows;
        r.s_bytes += l.state.ssm_elems() * 4 * rows;
    }
    const float tot = mibf(r.r_bytes + r.s_bytes);
    switch (o.log_format) {
        case LlamaLogFormat::Current:
            L.log_lines.push_back(
                fmt("llama_memory_recurrent: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs "
                    "%2u rs_seq), R (f32): %7.2f MiB, S (f32): %7.2f MiB, P (f32): %7.2f MiB",
                    double(tot), unsigned(r.cells), int(r.layers_logged), unsigned(nseq), unsigned(o.n_rs_seq),
                    double(mibf(r.r_bytes)), double(mibf(r.s_bytes)), 0.0));
            break;
        case LlamaLogFormat::RsSeq:
            L.log_lines.push_back(
                fmt("llama_memory_recurrent: size = %7.2f MiB (%6u cells, %3d layers, %2u seqs "
                    "%2u rs_seq), R (f32): %7.2f MiB, S (f32): %7.2f MiB",
                    double(tot), unsigned(r.cells), int(r.layers_logged), unsigned(nseq), unsigned(o.n_rs_seq),
                    double(mibf(r.r_bytes)), double(mibf(r.s_bytes))));
            break;
        default:
            L.log_lines.push_back(
                fmt("llama_memory_recurrent: size = %7.2f MiB (%6u cells, %3d layers, %2u "
                    "seqs), R (f32): %7.2f MiB, S (f32): %7.2f MiB",
                    double(tot), unsigned(r.cells), int(r.layers_logged), unsigned(nseq), double(mibf(r.r_bytes)),
                    double(mibf(r.s_bytes))));
            break;
    }
}

}  // namespace kvb::llamacpp_steps
