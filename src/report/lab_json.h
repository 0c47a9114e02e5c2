// The JSON of `kvbudget lab --json` (and the page's lab panel): {"engine", "model",
// "measure", "settings", "rows": [{"line", "context", "measured_bytes", "formula_kv_bytes",
// "increment_bytes", "formula_increment_bytes", "deviation_percent"}], "fit":
// {"slope_bytes_per_token", "intercept_bytes", "formula_bytes_per_token", "deviation_percent"},
// "baseline_bytes", "weights_bytes", "runtime_bytes", "notes"}. A refusal is check_error_json's
// {"error": ...}.
#pragma once
#include <string>

#include "base/result.h"
#include "check/lab.h"

namespace kvb {

std::string to_json_text(const LabReport& r);

// The page's lab settings, the CLI's flags as JSON: {"engine", "measure", "type_k", "type_v",
// "n_seq_max", "kv_unified", "swa_full", "dtype"}; unknown keys and wrong types are refused.
struct LabRequest {
    LabSettings settings;
    std::string measure;
};
Result<LabRequest> lab_request_from_json(const std::string& text);

}  // namespace kvb
