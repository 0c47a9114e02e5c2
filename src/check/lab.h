// kvbudget lab: the second half of the article's experiment. The user measured peak
// memory at several contexts (llama-completion -c 4096 / 8192 / ...); the lab fits the
// memory that each extra token costs (least squares), sets it beside the formula's KV
// bytes per token for the same model and engine settings, and shows the fixed part
// (weights and runtime) as the intercept. Decreasing memory is flagged with the mmap
// explanation, and one table takes one measure: RSS, nvidia-smi and PyTorch's counters
// count different things.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "engines/llamacpp.h"
#include "model/model.h"

namespace kvb {

// Measure ids: rss, footprint, nvidia_smi, torch_allocated, torch_max_allocated,
// torch_reserved, torch_max_reserved. "" when `name` names none of them.
std::string lab_measure_id(const std::string& name);
// "maximum resident set size (RSS)", "nvidia-smi memory.used", ...
std::string lab_measure_name(const std::string& id);

struct LabPoint {
    int64_t line = 0;  // 1-based line of the paste
    int64_t context = 0;
    int64_t measured = 0;  // bytes
};

struct LabInput {
    std::string measure;  // a measure id
    std::vector<LabPoint> points;
    std::optional<int64_t> baseline;  // the same run with -n 0, bytes
    std::optional<int64_t> weights;   // the weight file, bytes
};

// The most a paste may hold (a table of runs is a few kilobytes).
constexpr int64_t kMaxLabBytes = int64_t(1) << 20;

// Reads a paste in either form (docs/lab.md):
//   pairs, one run a line:   "4096 5.31 GiB", "8192, 5300 MB", "| 16384 | 6.2G |", "4096 5.31 GiB rss"
//   keyword lines:           "measure: rss", "baseline 4.61 GiB" (the -n 0 run), "weights 4.58 GiB"
//   /usr/bin/time output:    -l (macOS, bytes) or -v (GNU, kbytes), each "maximum resident set size"
//                            taking its context from the command line before it (-c N, --ctx-size N,
//                            or llama.cpp's "n_ctx = N"); a run with -n 0 is the baseline.
// `measure` ("" = as the paste names it, else rss) is the table's measure; rows naming
// another are refused (lab_mixed_measures), never mixed.
Result<LabInput> read_lab_paste(const std::string& text, const std::string& measure);

struct LabSettings {
    std::string engine = "llamacpp";  // llamacpp | transformers (vLLM reserves its pool up front: refused)
    LlamaOptions llama;               // n_ctx is set per row
    std::string dtype;                // transformers: the cache dtype ("" = the config's)
};

struct LabRow {
    int64_t line = 0;
    int64_t context = 0;
    int64_t measured = 0;
    int64_t formula_kv = 0;  // the engine's KV cache (and recurrent state) at this context
    // From the previous row (none on the first): what the measure grew by, what the formula grew by.
    std::optional<int64_t> increment;
    std::optional<int64_t> formula_increment;
    std::optional<double> deviation_percent;  // (increment - formula_increment) / formula_increment
};

struct LabReport {
    std::string engine;
    std::string model;
    std::string measure;
    std::vector<std::pair<std::string, std::string>> settings;
    std::vector<LabRow> rows;                 // by context
    double slope = 0;                         // fitted bytes per token (least squares over the rows)
    double intercept = 0;                     // fitted bytes at context 0: weights + runtime
    double formula_slope = 0;                 // the same fit of the formula's KV bytes over the same contexts
    std::optional<double> deviation_percent;  // (slope - formula_slope) / formula_slope; none when slope <= 0
    std::optional<int64_t> baseline, weights;
    std::optional<int64_t> runtime;  // intercept - weights
    std::vector<Message> notes;
};

Result<LabReport> lab_table(const LabInput& in, const ModelSpec& m, const LabSettings& s);

}  // namespace kvb
