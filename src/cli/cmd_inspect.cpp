#include <iostream>
#include <sstream>

#include "args.h"
#include "base/units.h"
#include "commands.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/gguf_spec.h"
#include "report/json.h"

namespace kvb::cli {

namespace {

const char* kHelp = R"(Usage: kvbudget inspect CONFIG [--json]

Prints the normalized model: every layer's kind (full, sliding, chunked, mla,
linear, mamba, none) and geometry, runs of identical layers folded together,
plus what was assumed (defaults filled, fields ignored).
)";

std::string describe(const Layer& l) {
    std::ostringstream s;
    switch (l.kind) {
        case LayerKind::Full:
        case LayerKind::Sliding:
        case LayerKind::Chunked:
            s << l.kv_heads << " KV heads x " << l.k_head_dim;
            if (l.v_head_dim != l.k_head_dim) s << "/" << l.v_head_dim;
            if (l.kind == LayerKind::Sliding) s << ", window " << with_commas(l.window);
            if (l.kind == LayerKind::Chunked) s << ", chunk " << with_commas(l.window);
            break;
        case LayerKind::Mla:
            s << "latent " << l.kv_lora_rank << " + rope " << l.qk_rope_head_dim << " (decompressed " << l.kv_heads
              << " heads x " << l.k_head_dim << "/" << l.v_head_dim << ")";
            if (dsv4_layer(l)) {
                s << ", window " << with_commas(l.window);
                if (l.compress_ratio > 1) s << ", 1 latent per " << l.compress_ratio << " tokens";
                if (l.indexer_head_dim > 0) s << " + indexer key " << l.indexer_head_dim;
            }
            break;
        case LayerKind::Linear:
        case LayerKind::Mamba:
            if (l.state.conv_kernel > 0) s << "conv " << l.state.conv_kernel << " x " << l.state.conv_dim();
            // LFM2's short convolution keeps no SSM state.
            if (l.state.d_state > 0)
                s << (l.state.conv_kernel > 0 ? ", " : "") << "ssm " << l.state.d_state << " x " << l.state.d_inner;
            break;
        case LayerKind::None: s << "no cache"; break;
    }
    return s.str();
}

}  // namespace

int cmd_inspect(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    int rc = kOk;
    auto a = parse_command("inspect", argv, ArgSpec{}, kHelp, out, err, rc);
    if (!a) return rc;
    auto m = load_model(a->positional[0], err);
    if (!m) return kRefused;

    // Runs of identical consecutive layers, so 64 layers print as a few lines.
    struct Run {
        size_t first, count;
    };
    std::vector<Run> runs;
    for (size_t i = 0; i < m->layers.size(); ++i) {
        if (!runs.empty() && same_geometry(m->layers[runs.back().first], m->layers[i])) {
            ++runs.back().count;
        } else {
            runs.push_back({i, 1});
        }
    }

    if (a->has("--json")) {
        out << to_json_text(*m) << "\n";
        return kOk;
    }

    out << m->name << "\n";
    out << "  model_type:   " << m->model_type << (m->generic ? "  (generic: not a known architecture)" : "") << "\n";
    out << "  architecture: " << (m->architecture.empty() ? "-" : m->architecture) << "\n";
    out << "  dtype:        " << m->dtype << (m->ssm_dtype.empty() ? "" : "  (state ssm: " + m->ssm_dtype + ")")
        << "\n";
    out << "  max context:  " << (m->max_position_embeddings ? with_commas(m->max_position_embeddings) : "-") << "\n";
    out << "  layers:       " << m->layers.size() << "\n";
    // A repeating pattern (gpt-oss's sliding/full, Qwen3.5's 3 linear + 1 full) prints once
    // with its period instead of one line per run.
    size_t period = 0;
    const size_t n = m->layers.size();
    for (size_t p = 2; p <= 8 && 2 * p <= n && runs.size() > 4; ++p) {
        bool repeats = true;
        for (size_t i = 0; i + p < n && repeats; ++i) repeats = same_geometry(m->layers[i], m->layers[i + p]);
        if (repeats) {
            period = p;
            break;
        }
    }
    auto print_run = [&](size_t first, size_t count) {
        std::string range =
            count == 1 ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(first + count - 1);
        out << "    " << range << std::string(range.size() < 10 ? 10 - range.size() : 1, ' ')
            << to_string(m->layers[first].kind) << "  " << describe(m->layers[first]) << "\n";
    };
    if (period) {
        out << "    every " << period << " layers repeat (" << n / period << " times"
            << (n % period ? ", plus " + std::to_string(n % period) : std::string()) << "):\n";
        for (const auto& r : runs) {
            if (r.first >= period) break;
            print_run(r.first, std::min(r.count, period - r.first));
        }
    } else {
        for (const auto& r : runs) print_run(r.first, r.count);
    }
    if (!m->quant.method.empty())
        out << "  quantization: " << m->quant.method
            << (m->quant.bits ? " " + std::to_string(m->quant.bits) + "-bit" : "") << "\n";
    if (m->gguf) {
        // The loader's own lines for this file, so they can be compared with a llama.cpp log.
        const GgufWeights& g = *m->gguf;
        out << "  gguf:         " << with_commas(g.n_tensors) << " tensors"
            << (g.shards > 1 ? " in " + std::to_string(g.shards) + " shards" : "") << "\n";
        for (const auto& l : llamacpp_type_lines(g)) out << "    llama_model_loader: - " << l << "\n";
        out << "    print_info: file size   = " << llamacpp_file_size(g.tensor_bytes, g.params) << "\n";
        out << "    print_info: model params     = " << llamacpp_model_params(g.params) << "\n";
    }
    for (const auto& msg : m->notes) out << "  note: " << render_english(msg) << "\n";
    return kOk;
}

}  // namespace kvb::cli
