// The JSON of `kvbudget check --json` (and the page's "Compare with your log"):
// {"engine", "version", "model", "config", "config_source", "settings", "lines":
// [{"number", "kind", "printed", "predicted", "match", "cause", "deviation_percent"}],
// "notes", "matched", "explained", "unexplained"}. cause is a Message or null.
#pragma once
#include <string>

#include "base/result.h"
#include "check/check.h"

namespace kvb {

std::string to_json_text(const CheckReport& r);
// A log kvbudget could not read: {"error": {code, message, detail}}.
std::string check_error_json(const Error& e);

}  // namespace kvb
