#include <cstdio>
#include <iostream>
#include <sstream>

#include "args.h"
#include "base/arith.h"
#include "base/units.h"
#include "commands.h"
#include "kv/kv.h"
#include "kv/tables.h"
#include "model/weights.h"
#include "report/json.h"
#include "report/kv_report.h"

namespace kvb::cli {

namespace {

const char* kHelp =
    R"(Usage: kvbudget kv CONFIG [--context N] [--seqs N] [--kv-dtype T] [--engine vllm|llamacpp|transformers] [--json]

The model's own KV cache, before any engine's block rounding:
  per token     what one more token adds once the context is past every sliding
                window or chunk (full-attention and MLA layers), one sequence
  state         fixed per-sequence bytes of linear-attention / Mamba layers
  at context    bytes for --seqs sequences of --context tokens (windows capped)
  MHA / MQA     the same model with one KV head per attention head / one KV head

  --context N     tokens per sequence (default: the model's max_position_embeddings)
  --seqs N        concurrent sequences (default 1)
  --kv-dtype T    vllm: auto bfloat16 float16 fp8 fp8_e4m3 fp8_e5m2 nvfp4 (default auto; the newest release's)
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
    auto context =
        get_context(*a, "--context", loaded->max_position_embeddings ? loaded->max_position_embeddings : 4096, err);
    auto seqs = get_count(*a, "--seqs", 1, err);
    if (!context || !seqs) return kRefused;

    // Where KV overtakes the weights: the config's own weight format.
    int64_t weights = 0;
    if (auto wf = weight_format("auto", *loaded)) {
        if (auto wb = weight_bytes(*loaded, wf.value())) weights = wb->all_bytes();
    }
    KvReportInputs ki;
    ki.engine = engine;
    ki.context = *context;
    ki.seqs = *seqs;
    ki.kv_dtype = ki.cache_type_k = ki.cache_type_v = a->get("--kv-dtype", engine == "llamacpp" ? "f16" : "auto");
    ki.weights_bytes = weights;
    auto rep = compute_kv_report(*loaded, ki);
    if (!rep) {
        err << "kvbudget: error: " << rep.error().message << "\n";
        return kRefused;
    }
    if (a->has("--json")) {
        out << to_json_text(rep.value()) << "\n";
        return kOk;
    }
    const KvReport& r = rep.value();
    const IdealKv& kv = r.ideal;
    const KvType* t = &r.dtypes.k;
    const int64_t mha_per = r.head_variants[0].bytes_per_token, own_per = r.head_variants[1].bytes_per_token,
                  mqa_per = r.head_variants[2].bytes_per_token;
    const int64_t crossover = r.crossover_context;
    const auto& ladder = r.ladder;

    auto line = [&](const std::string& label, int64_t bytes) {
        out << "  " << label << std::string(label.size() < 22 ? 22 - label.size() : 1, ' ') << with_commas(bytes)
            << " B" << (bytes >= 1024 ? "  (" + format_bytes(bytes) + ")" : "") << "\n";
    };
    out << r.model << "  [" << engine << ", KV " << t->name << "]\n";
    line("KV per token:", kv.bytes_per_token);
    for (const auto& k : kv.kinds) {
        if (k.kind == LayerKind::None) continue;
        std::ostringstream label;
        label << "  " << to_string(k.kind) << " x" << k.layers;
        if (k.kind == LayerKind::Sliding || k.kind == LayerKind::Chunked) {
            line(label.str() + ":", k.bytes_per_token);
            out << "      (up to " << with_commas(k.window) << " tokens: at most "
                << format_bytes(sat_mul(k.bytes_per_token, k.window)) << " per sequence)\n";
        } else if (k.kind == LayerKind::Linear || k.kind == LayerKind::Mamba) {
            line(label.str() + " state:", k.state_bytes);
        } else {
            line(label.str() + ":", k.bytes_per_token);
        }
    }
    if (kv.state_bytes_per_seq) line("State per sequence:", kv.state_bytes_per_seq);
    std::ostringstream at_label;
    at_label << "At " << with_commas(*context) << " tokens x " << *seqs << ":";
    out << "  " << at_label.str() << " " << format_bytes(r.bytes_total) << "  (" << with_commas(r.bytes_total)
        << " B)\n";
    out << "  MHA variant:          " << with_commas(mha_per) << " B/token  (" << format_bytes(mha_per) << ")\n";
    out << "  MQA variant:          " << with_commas(mqa_per) << " B/token  (" << format_bytes(mqa_per) << ")\n";
    if (own_per != kv.bytes_per_token) {
        out << "  (MHA/MQA compare per-token bytes of all attention layers; this model: " << with_commas(own_per)
            << " B)\n";
    }
    out << "  Context table (" << *seqs << (*seqs == 1 ? " sequence):\n" : " sequences):\n");
    for (const auto& row : r.context_table) {
        std::string cs = with_commas(row.row.context);
        out << "    " << cs << std::string(cs.size() < 10 ? 10 - cs.size() : 1, ' ')
            << format_bytes(row.row.bytes_total) << "\n";
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
    for (const auto& step : ladder) {
        std::string label = step.step + " (" + step.detail + ")";
        char pct[32];
        double change = -step.saving * 100;
        std::snprintf(pct, sizeof pct, "%+.1f%%", change == 0 ? 0.0 : change);
        out << "    " << label << std::string(label.size() < 44 ? 44 - label.size() : 1, ' ')
            << format_bytes(step.kv_bytes) << "  " << pct << "\n";
    }
    for (const Message& n : r.notes) out << "  note: " << render_english(n) << "\n";
    return kOk;
}

}  // namespace kvb::cli
