// kvbudget lab: peak memory measured at several contexts against the formula's KV bytes.
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "args.h"
#include "base/units.h"
#include "check/lab.h"
#include "commands.h"
#include "report/check_json.h"
#include "report/lab_json.h"

namespace kvb::cli {

namespace {

const char* kHelp = R"(Usage: kvbudget lab RUNS --config CONFIG|FILE.gguf|ORG/NAME [--engine llamacpp|transformers]
                  [--measure M] [-ctk T] [-ctv T] [-np N] [--kv-unified] [--swa-full] [--dtype D] [--json]

The lab of "measure, then tune": peak memory measured at several contexts (RUNS, a
file or - for stdin) is fitted by least squares, memory = intercept + slope x context.
The slope (bytes per token) is set beside the formula's KV bytes per token for the
model and engine settings, as a deviation in percent; the intercept is the fixed part
(weights and runtime). Each row shows what the memory grew by since the previous
context and what the formula says it should. Memory that does not grow is flagged:
llama.cpp maps the weights (mmap, always on a Mac) and resident set size may leave
weight pages out. One table takes one measure; rows naming two are refused.

RUNS, one run a line (docs/lab.md):
  4096 5.31 GiB            context and measured peak, with a unit (GiB MiB GB MB G M)
  8192, 5500 MB, rss       the measure may follow each row
  measure: rss             or be named once: rss, footprint, nvidia-smi, memory_allocated,
                           max_memory_allocated, memory_reserved, max_memory_reserved
  baseline 4.61 GiB        the same run with -n 0 (optional)
  weights 4.58 GiB         the weight file (optional): intercept - weights = runtime
or /usr/bin/time -l (macOS) / -v (GNU) output, each run after its command line:
  $ /usr/bin/time -l llama-completion -m model.gguf -c 4096 -n 64 -p hi
        5701632000  maximum resident set size

  --config CONFIG    config.json, .gguf, or a bundled catalog id (meta-llama/Llama-3.1-8B)
  --engine E         llamacpp (default: llama.cpp's KV cache at -c) or transformers (DynamicCache)
  --measure M        the table's measure (default: as RUNS names it; /usr/bin/time output: rss)
  -ctk, -ctv T       llama.cpp KV types (f16 default, q8_0, q4_0, ...)
  -np N, --kv-unified, --swa-full   llama.cpp slots and cache layout, as in `kvbudget llamacpp`
  --dtype D          transformers: the cache dtype (default: the config's)
  --json             {"rows": [...], "fit": {"slope_bytes_per_token", "intercept_bytes",
                     "formula_bytes_per_token", "deviation_percent"}, ...}
)";

std::string two(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%+.2f%%", v);
    return buf;
}

}  // namespace

int cmd_lab(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    auto a = parse_args(argv,
                        ArgSpec{{"--config", "--engine", "--measure", "-ctk", "--cache-type-k", "-ctv",
                                 "--cache-type-v", "-np", "--parallel", "--dtype"},
                                {"--kv-unified", "-kvu", "--swa-full"}},
                        err);
    if (!a) return kUsage;
    if (a->has("--help")) {
        out << kHelp;
        return kOk;
    }
    if (a->positional.size() != 1 || !a->has("--config")) {
        err << "kvbudget: error: lab takes one RUNS file (or - for stdin) and --config CONFIG\n" << kHelp;
        return kUsage;
    }
    const bool json = a->has("--json");
    auto refuse = [&](const Error& e) {
        if (json) out << check_error_json(e) << "\n";
        err << "kvbudget: error: " << e.message << "\n";
        return kRefused;
    };
    std::string text;
    {
        std::ifstream file;
        std::istream* in = &std::cin;
        if (a->positional[0] != "-") {
            file.open(a->positional[0], std::ios::binary);
            if (!file) {
                err << "kvbudget: error: cannot read " << a->positional[0] << "\n";
                return kRefused;
            }
            in = &file;
        }
        char buf[1 << 16];
        while (*in && static_cast<int64_t>(text.size()) <= kMaxLabBytes) {
            in->read(buf, sizeof buf);
            text.append(buf, static_cast<size_t>(in->gcount()));
        }
    }
    auto runs = read_lab_paste(text, a->get("--measure"));
    if (!runs) return refuse(runs.error());

    // A catalog id when no such file exists.
    std::string config = a->get("--config");
    struct stat st {};
    if (config != "-" && ::stat(config.c_str(), &st) != 0) {
        const std::string file = catalog_file(config);
        if (!file.empty()) {
            std::ifstream in(file, std::ios::binary);
            std::stringstream ss;
            ss << in.rdbuf();
            config = "";  // parsed below from the catalog's text
            text = ss.str();
        }
    }
    std::optional<ModelSpec> model;
    if (config.empty()) {
        auto m = parse_config(text, a->get("--config"));
        if (!m) return refuse(m.error());
        model = m.value();
    } else {
        model = load_model(config, err);
        if (!model) return kRefused;
    }

    LabSettings s;
    s.engine = a->get("--engine", "llamacpp");
    auto pick = [&](const char* sh, const char* lo) { return a->has(sh) ? std::string(sh) : std::string(lo); };
    s.llama.type_k = a->get(pick("-ctk", "--cache-type-k"), "f16");
    s.llama.type_v = a->get(pick("-ctv", "--cache-type-v"), "f16");
    auto np = get_count(*a, pick("-np", "--parallel"), 1, err);
    if (!np) return kRefused;
    s.llama.n_seq_max = *np;
    s.llama.kv_unified = a->has("--kv-unified") || a->has("-kvu");
    s.llama.swa_full = a->has("--swa-full");
    s.dtype = a->get("--dtype");
    auto r = lab_table(runs.value(), *model, s);
    if (!r) return refuse(r.error());
    if (json) {
        out << to_json_text(r.value()) << "\n";
        return kOk;
    }
    const LabReport& L = r.value();
    out << "model: " << L.model << "\nengine: " << (L.engine == "llamacpp" ? "llama.cpp" : L.engine);
    for (const auto& [k, v] : L.settings) out << ", " << k << " " << v;
    out << "\nmeasure: " << lab_measure_name(L.measure) << "\n\n";
    char buf[256];
    std::snprintf(buf, sizeof buf, "%10s  %12s  %12s  %12s  %10s\n", "context", "measured", "increment", "formula",
                  "deviation");
    out << buf;
    for (const LabRow& row : L.rows) {
        std::snprintf(buf, sizeof buf, "%10s  %12s  %12s  %12s  %10s\n", with_commas(row.context).c_str(),
                      format_bytes(row.measured).c_str(), row.increment ? format_bytes(*row.increment).c_str() : "",
                      row.formula_increment ? format_bytes(*row.formula_increment).c_str() : "",
                      row.deviation_percent ? two(*row.deviation_percent).c_str() : "");
        out << buf;
    }
    auto per_token = [](double v) {
        const int64_t b = std::fabs(v) < 9.0e18 ? std::llround(v) : 0;
        return with_commas(b) + " B (" + format_bytes(b) + ")";
    };
    out << "\nfitted per token:  " << per_token(L.slope);
    out << "\nformula per token: " << per_token(L.formula_slope) << " KV cache";
    if (L.deviation_percent) out << "\ndeviation:         " << two(*L.deviation_percent);
    if (std::fabs(L.intercept) < 9.0e18)
        out << "\nfixed part (intercept): " << format_bytes(std::llround(L.intercept)) << " (weights + runtime)";
    if (L.weights)
        out << "\nweight file: " << format_bytes(*L.weights)
            << ", runtime (intercept - weights): " << format_bytes(*L.runtime);
    if (L.baseline) out << "\n-n 0 baseline: " << format_bytes(*L.baseline);
    out << "\n";
    for (const Message& n : model->notes) err << "note: " << render_english(n) << "\n";
    for (const Message& n : L.notes) err << "note: " << render_english(n) << "\n";
    return kOk;
}

}  // namespace kvb::cli
