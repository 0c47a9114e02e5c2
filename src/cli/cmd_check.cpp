// kvbudget check: an engine's start-up log, line by line, against kvbudget's prediction.
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "args.h"
#include "base/units.h"
#include "check/check.h"
#include "commands.h"
#include "engines/engine_version.h"
#include "report/check_json.h"

namespace kvb::cli {

namespace {

const char* kHelp = R"(Usage: kvbudget check LOG [--config CONFIG|FILE.gguf] [--json]

Reads a vLLM or llama.cpp start-up log (a whole log with timestamps and process
prefixes, or a fragment; - for stdin) and recomputes every engine line in it:
vLLM's "GPU KV cache size", "Maximum concurrency", "# GPU blocks", block-size and
padding lines and its not-enough-memory errors; llama.cpp's llama_kv_cache,
SWA-cache and recurrent-state lines. Each line is shown printed vs predicted;
where they differ, the cause that makes them agree is named (another log format,
block size, KV dtype, mamba cache mode, a speculative drafter's layers, another
amount of memory, ...) or "no known cause". Out-of-memory errors (PyTorch's "CUDA
out of memory. Tried to allocate ...", llama.cpp's "cudaMalloc failed") are
explained from their own numbers, no config needed: where the GPU's memory was,
which buffer it was, and the one change that would have made room.

The model's config: --config, else the bundled catalog entry the log's model id
or path names, else (llama.cpp) the hyper-parameters its print_info lines print.

  --config CONFIG    config.json or .gguf of the model the log is from
  --engine-version V the engine's release when the paste does not print it (vLLM 0.15.2, llama.cpp
                     b6500): its log formats, error wordings and pipeline-parallel check are predicted
  --json             {"engine", "settings", "lines": [{"printed", "predicted", "match", "cause"}], ...}

Exit status: 0 the log was understood (differences included), 1 it is not a log
kvbudget can read (empty, another program's, cut off before its KV lines, too large).
)";

// The bundled catalog (tests/fixtures/configs, installed to share/kvbudget/catalog):
// $KVBUDGET_CATALOG, beside the executable, the install prefix, the source tree.
std::vector<std::string> catalog_dirs() {
    return data_dirs("KVBUDGET_CATALOG", "catalog", "tests/fixtures/configs",
                     {KVB_INSTALL_CATALOG_DIR, KVB_SOURCE_CATALOG_DIR});
}

// Catalog ids ("org/name") and the file each lives in, from the first folder that has any.
std::vector<std::pair<std::string, std::string>> catalog() {
    for (const auto& d : catalog_dirs()) {
        std::vector<std::pair<std::string, std::string>> out;
        DIR* dir = opendir(d.c_str());
        if (!dir) continue;
        while (dirent* e = readdir(dir)) {
            std::string f = e->d_name;
            if (f.size() < 6 || f.compare(f.size() - 5, 5, ".json") != 0) continue;
            const auto sep = f.find("--");
            if (sep == std::string::npos || sep == 0) continue;
            out.emplace_back(f.substr(0, sep) + "/" + f.substr(sep + 2, f.size() - 5 - sep - 2), d + "/" + f);
        }
        closedir(dir);
        if (!out.empty()) {
            std::sort(out.begin(), out.end());
            return out;
        }
    }
    return {};
}

bool read_log(const std::string& path, std::string* text, bool* too_big) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (path != "-") {
        file.open(path, std::ios::binary);
        if (!file) return false;
        in = &file;
    }
    // One byte past the cap is enough to refuse: a 50 MB paste is never held whole.
    char buf[1 << 16];
    while (*in) {
        in->read(buf, sizeof buf);
        text->append(buf, static_cast<size_t>(in->gcount()));
        if (static_cast<int64_t>(text->size()) > kMaxLogBytes) {
            *too_big = true;
            return true;
        }
    }
    return true;
}

}  // namespace

std::string catalog_file(const std::string& id) {
    for (const auto& [cid, file] : catalog())
        if (cid == id) return file;
    return {};
}

int cmd_check(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    int rc = kOk;
    auto a = parse_args(argv, ArgSpec{{"--config", "--engine-version"}, {}}, err);
    if (!a) return kUsage;
    if (a->has("--help")) {
        out << kHelp;
        return kOk;
    }
    if (a->positional.size() != 1) {
        err << "kvbudget: error: check takes one LOG (a log file, or - for stdin)\n" << kHelp;
        return kUsage;
    }
    (void)rc;
    const bool json = a->has("--json");
    std::string text;
    bool too_big = false;
    if (!read_log(a->positional[0], &text, &too_big)) {
        err << "kvbudget: error: cannot read " << a->positional[0] << "\n";
        return kRefused;
    }
    Result<LogFacts> facts =
        too_big ? Result<LogFacts>(make_error(
                      "bad_value", note("check_too_large", {{"size", "more than " + format_bytes(kMaxLogBytes)},
                                                            {"limit", format_bytes(kMaxLogBytes)}})))
                : read_engine_log(text);
    if (!facts) {
        if (json) out << check_error_json(facts.error()) << "\n";
        err << "kvbudget: error: " << facts.error().message << "\n";
        return kRefused;
    }
    // A fragment without its version banner: the version the user names sets the formats and
    // wordings predicted; a banner in the log wins (it is what ran).
    std::optional<Message> version_note;
    if (a->has("--engine-version")) {
        const bool vllm = facts->engine == LogEngine::Vllm;
        auto ev = parse_engine_version(a->get("--engine-version"), vllm ? "vllm" : "llamacpp");
        if (!ev) {
            err << "kvbudget: error: " << ev.error().message << "\n";
            return kUsage;
        }
        const std::string given = vllm ? ev->text : "b" + std::to_string(ev->build);
        if (facts->version.empty())
            facts.value().version = given;
        else if (facts->version != given && facts->version != "v" + given)
            version_note = note("check_version_from_log", {{"given", given}, {"printed", facts->version}});
    }
    std::optional<ModelSpec> spec;
    std::string config, source;
    if (a->has("--config")) {
        spec = load_model(a->get("--config"), err);
        if (!spec) return kRefused;
        config = a->get("--config");
        source = "argument";
    } else if (!facts->model.empty()) {
        const auto cat = catalog();
        std::vector<std::string> ids;
        for (const auto& [id, file] : cat) ids.push_back(id);
        const std::string id = match_catalog(facts->model, ids);
        for (const auto& [cid, file] : cat)
            if (cid == id && !id.empty()) {
                std::ifstream in(file, std::ios::binary);
                std::stringstream ss;
                ss << in.rdbuf();
                auto m = parse_config(ss.str(), id);
                if (m) {
                    spec = m.value();
                    config = id;
                    source = "catalog";
                }
            }
    }
    CheckReport r = check_log(*facts, spec ? &*spec : nullptr, config, source);
    if (version_note) r.notes.insert(r.notes.begin(), *version_note);
    if (json) {
        out << to_json_text(r) << "\n";
        return kOk;
    }
    out << "engine: " << to_string(r.engine);
    if (!r.version.empty()) out << " " << r.version;
    out << "\nmodel: " << (r.model.empty() ? "(not named in the log)" : r.model) << "\n";
    out << "config: " << (r.config.empty() ? "(none)" : r.config);
    if (!r.config_source.empty()) out << " (" << r.config_source << ")";
    out << "\n";
    for (const auto& [k, v] : r.settings) out << "  " << k << " = " << v << "\n";
    for (const CheckLine& c : r.lines) {
        // An out-of-memory error is explained, not predicted: no "predicted" row.
        const bool oom = c.kind.size() > 13 && c.kind.compare(c.kind.size() - 13, 13, "out_of_memory") == 0;
        out << "\nline " << c.number << (c.match ? "  [match]" : oom ? "  [out of memory]" : "  [differs]") << "\n";
        out << "  printed:   " << c.printed << "\n";
        if (!oom) out << "  predicted: " << (c.predicted.empty() ? "(none)" : c.predicted) << "\n";
        if (c.deviation_percent && !c.match) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%+.2f%%", *c.deviation_percent);
            out << "  deviation: " << buf << "\n";
        }
        if (!c.cause.code.empty())
            out << "  " << (c.match ? "note" : "cause") << ":     " << render_english(c.cause) << "\n";
        for (const Message& m : c.more_causes) out << "  and:       " << render_english(m) << "\n";
    }
    out << "\n" << r.matched << " matched, " << r.explained << " explained, " << r.unexplained << " unexplained\n";
    for (const Message& n : r.notes) err << "note: " << render_english(n) << "\n";
    return kOk;
}

}  // namespace kvb::cli
