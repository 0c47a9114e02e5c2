// kvbudget check: an engine's own start-up log against kvbudget's prediction. Every
// engine line the log holds (vLLM's token count, concurrency, block-size and padding
// lines, its not-enough-memory errors; llama.cpp's KV-cache, SWA and recurrent lines)
// is recomputed with src/engines from the settings the log states, and compared.
// Where a line differs, a list of known causes is tried (another log format, block
// size, KV dtype, mamba cache mode, a speculative drafter's layers, another amount of
// memory, ...) and the first that makes the line agree is named.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "check/log_reader.h"
#include "engines/vllm.h"
#include "model/model.h"

namespace kvb {

struct CheckLine {
    int64_t number = 0;                       // line in the paste
    std::string kind;                         // "vllm_tokens", "llama_kv_cache", ... (LogLineKind in snake_case)
    std::string printed;                      // as the engine printed it (prefixes cut)
    std::string predicted;                    // kvbudget's line for the same settings; "" when none
    bool match = false;                       // the numbers agree
    Message cause;                            // why they differ (or which wording); empty code = identical
    std::vector<Message> more_causes;         // a second cause needed together with `cause`
    std::optional<double> deviation_percent;  // (printed - predicted) / predicted of the first differing number
};

struct CheckReport {
    LogEngine engine = LogEngine::Vllm;
    std::string version;
    std::string model;          // as the log names it
    std::string config;         // which config was used: a file name, a catalog id, or "log" (print_info)
    std::string config_source;  // "argument", "catalog", "log", "" (none found)
    std::vector<std::pair<std::string, std::string>> settings;
    std::vector<CheckLine> lines;
    std::vector<Message> notes;
    int64_t matched = 0;      // lines that agree
    int64_t explained = 0;    // lines that differ with a named cause
    int64_t unexplained = 0;  // lines that differ with no known cause (or nothing to compare with)
};

// Compares what `f` printed with the engines' prediction for `spec` (nullptr: none given;
// llama.cpp logs then use the hyper-parameters print_info printed).
CheckReport check_log(const LogFacts& f, const ModelSpec* spec, const std::string& config_name,
                      const std::string& config_source);

// The model llama.cpp's print_info describes (layers, KV heads, head sizes, sliding window,
// MLA): enough for its KV cache. Refused for recurrent models (their state shapes are not printed).
Result<ModelSpec> spec_from_print_info(const LogFacts& f);

// Which catalog id (Hub "org/name") the log's model reference names: an id, a local path
// or Hub cache path ending in the name, a GGUF file name with its quantization suffix.
// "" when none matches exactly (no guessing between similar names).
std::string match_catalog(const std::string& model_ref, const std::vector<std::string>& ids);

// vLLM's log format for a version string ("0.20.1", "v0.24.0rc1"); nullopt when not a version.
std::optional<VllmLogFormat> vllm_format_for_version(const std::string& version);
// Everything derived from a log's vLLM version (vllm_release); nullopt when it is none.
std::optional<VllmRelease> vllm_release_of(const std::string& version);

}  // namespace kvb
