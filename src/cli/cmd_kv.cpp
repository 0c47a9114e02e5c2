#include <cstdio>
#include <iostream>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/weights.h"
#include "base/units.h"

namespace kvb::cli {

namespace {

const char* kHelp = R"(Usage: kvbudget kv CONFIG [--context N] [--seqs N] [--kv-dtype T] [--engine vllm|llamacpp|transformers] [--json]

The model's own KV cache, before any engine's block rounding:
  per token     what one more token adds once the context is past every sliding
                window or chunk (full-attention and MLA layers), one sequence
  state         fixed per-sequence bytes of linear-attention / Mamba layers
  at context    bytes for --seqs sequences of --context tokens (windows capped)
  MHA / MQA     the same model with one KV head per attention head / one KV head

  --context N     tokens per sequence (default: the model's max_position_embeddings)
  --seqs N        concurrent sequences (default 1)
  --kv-dtype T    vllm: auto bfloat16 float16 float32 fp8 fp8_e4m3 fp8_e5m2 (default auto)
                  llamacpp: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl (default f16)
                  transformers: auto bfloat16 float16 float32 (default auto: the checkpoint's)
  --engine E      whose element types and cache layout: vllm (default), llamacpp
                  (recurrent state in f32), transformers (DynamicCache: MLA decompressed
                  per head, sliding layers keep window-1 tokens)

Also prints the optimization ladder: what MHA, fp8, q8_0 / q4_0 KV, contiguous
allocation and an MLA-style latent would make of this model's KV at --context x --seqs.
)";

}  // namespace

int cmd_kv(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    int rc = kOk;
    auto a =
        parse_command("kv", argv, ArgSpec{{"--context", "--seqs", "--kv-dtype", "--engine"}, {}}, kHelp, out, err, rc);
    if (!a) return rc;
    std::string engine = a->get("--engine", "vllm");
    if (engine != "vllm" && engine != "llamacpp" && engine != "transformers") {
        err << "kvbudget: error: --engine must be vllm, llamacpp or transformers, got '" << engine << "'\n";
        return kUsage;
    }
    auto loaded = load_model(a->positional[0], err);
    if (!loaded) return kRefused;
    auto context = get_count(*a, "--context", loaded->max_position_embeddings ? loaded->max_position_embeddings : 4096, err);
    auto seqs = get_count(*a, "--seqs", 1, err);
    if (!context || !seqs) return kRefused;

    std::string dtype_name = a->get("--kv-dtype", engine == "llamacpp" ? "f16" : "auto");
    auto e = engine_kv(*loaded, engine, dtype_name, dtype_name, dtype_name);
    if (!e) {
        err << "kvbudget: error: " << e.error().message << "\n";
        return kRefused;
    }
    const ModelSpec& m = e->view;
    const KvDtypes& d = e->dtypes;
    const KvType* t = &d.k;
    IdealKv kv = ideal_kv(m, d);
    auto at = kv_bytes_at(m, d, *context, *seqs);
    if (!at) {
        err << "kvbudget: error: " << at.error().message << "\n";
        return kRefused;
    }
    auto variants = head_variants(e.value(), *context, *seqs);
    int64_t mha_per = variants[0].bytes_per_token, own_per = variants[1].bytes_per_token, mqa_per = variants[2].bytes_per_token;
    std::vector<std::pair<int64_t, int64_t>> table;
    for (const auto& row : context_table(e.value(), 1)) table.push_back({row.context, row.bytes_per_seq});
    auto ladder = optimization_ladder(*loaded, *context, *seqs);
    // Where KV overtakes the weights (the config's own weight format), for --seqs sequences.
    int64_t weights = 0, crossover = 0;
    if (auto wf = weight_format("auto", *loaded)) {
        if (auto wb = weight_bytes(*loaded, wf.value())) weights = wb->bytes;
    }
    if (weights > 0) crossover = crossover_context(m, d, weights, *seqs);

    if (a->has("--json")) {
        out << "{\"model\":" << json_string(m.name) << ",\"engine\":" << json_string(engine)
            << ",\"kv_dtype\":" << json_string(t->name) << ",\"bytes_per_token\":" << kv.bytes_per_token
            << ",\"windowed_bytes_per_token\":" << kv.windowed_bytes_per_token
            << ",\"state_bytes_per_seq\":" << kv.state_bytes_per_seq << ",\"context\":" << *context
            << ",\"seqs\":" << *seqs << ",\"bytes_at_context\":" << at.value() << ",\"kinds\":[";
        for (size_t i = 0; i < kv.kinds.size(); ++i) {
            const auto& k = kv.kinds[i];
            out << (i ? "," : "") << "{\"kind\":\"" << to_string(k.kind) << "\",\"layers\":" << k.layers
                << ",\"bytes_per_token\":" << k.bytes_per_token << ",\"window\":" << k.window
                << ",\"state_bytes\":" << k.state_bytes << "}";
        }
        out << "],\"mha_bytes_per_token\":" << mha_per << ",\"mqa_bytes_per_token\":" << mqa_per
            << ",\"context_table\":[";
        for (size_t i = 0; i < table.size(); ++i) {
            out << (i ? "," : "") << "{\"context\":" << table[i].first << ",\"bytes\":" << table[i].second << "}";
        }
        out << "],\"weights_bytes\":" << weights << ",\"crossover_context\":" << crossover << ",\"ladder\":[";
        for (size_t i = 0; i < ladder.size(); ++i) {
            const auto& r = ladder[i];
            out << (i ? "," : "") << "{\"step\":" << json_string(r.step) << ",\"detail\":" << json_string(r.detail)
                << ",\"bytes_per_token\":" << (r.bytes_per_token ? std::to_string(*r.bytes_per_token) : "null")
                << ",\"kv_bytes\":" << r.kv_bytes << ",\"saving\":" << r.saving << "}";
        }
        out << "],\"notes\":[";
        for (size_t i = 0; i < m.notes.size(); ++i) out << (i ? "," : "") << json_string(render_english(m.notes[i]));
        out << "]}\n";
        return kOk;
    }

    auto line = [&](const std::string& label, int64_t bytes) {
        out << "  " << label << std::string(label.size() < 22 ? 22 - label.size() : 1, ' ') << with_commas(bytes) << " B"
            << (bytes >= 1024 ? "  (" + format_bytes(bytes) + ")" : "") << "\n";
    };
    out << m.name << "  [" << engine << ", KV " << t->name << "]\n";
    line("KV per token:", kv.bytes_per_token);
    for (const auto& k : kv.kinds) {
        if (k.kind == LayerKind::None) continue;
        std::ostringstream label;
        label << "  " << to_string(k.kind) << " x" << k.layers;
        if (k.kind == LayerKind::Sliding || k.kind == LayerKind::Chunked) {
            line(label.str() + ":", k.bytes_per_token);
            out << "      (up to " << with_commas(k.window) << " tokens: at most "
                << format_bytes(k.bytes_per_token * k.window) << " per sequence)\n";
        } else if (k.kind == LayerKind::Linear || k.kind == LayerKind::Mamba) {
            line(label.str() + " state:", k.state_bytes);
        } else {
            line(label.str() + ":", k.bytes_per_token);
        }
    }
    if (kv.state_bytes_per_seq) line("State per sequence:", kv.state_bytes_per_seq);
    std::ostringstream at_label;
    at_label << "At " << with_commas(*context) << " tokens x " << *seqs << ":";
    out << "  " << at_label.str() << " " << format_bytes(at.value()) << "  (" << with_commas(at.value()) << " B)\n";
    out << "  MHA variant:          " << with_commas(mha_per) << " B/token  (" << format_bytes(mha_per) << ")\n";
    out << "  MQA variant:          " << with_commas(mqa_per) << " B/token  (" << format_bytes(mqa_per) << ")\n";
    if (own_per != kv.bytes_per_token) {
        out << "  (MHA/MQA compare per-token bytes of all attention layers; this model: " << with_commas(own_per) << " B)\n";
    }
    out << "  Context table (1 sequence):\n";
    for (const auto& [c, b] : table) {
        std::string cs = with_commas(c);
        out << "    " << cs << std::string(cs.size() < 10 ? 10 - cs.size() : 1, ' ') << format_bytes(b) << "\n";
    }
    if (weights > 0) {
        out << "  KV overtakes the weights (" << format_bytes(weights) << ") ";
        if (crossover > 0) {
            out << "at " << with_commas(crossover) << " tokens x " << *seqs << "\n";
        } else {
            out << "never: windows and fixed state bound it\n";
        }
    }
    out << "  Optimization ladder (" << with_commas(*context) << " tokens x " << *seqs << "):\n";
    for (const auto& r : ladder) {
        std::string label = r.step + " (" + r.detail + ")";
        char pct[32];
        double change = -r.saving * 100;
        std::snprintf(pct, sizeof pct, "%+.1f%%", change == 0 ? 0.0 : change);
        out << "    " << label << std::string(label.size() < 44 ? 44 - label.size() : 1, ' ') << format_bytes(r.kv_bytes)
            << "  " << pct << "\n";
    }
    for (const auto& n : m.notes) out << "  note: " << render_english(n) << "\n";
    return kOk;
}

}  // namespace kvb::cli
