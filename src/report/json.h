// The one JSON form of every answer the core gives: the CLI's --json prints it, the
// WASM module returns it, and wasm/kvbudget.d.ts types it. Field names are the C++
// member names (snake_case); the headline metrics use the page's data-metric names.
// Compact output (no spaces), so the two faces can be compared byte for byte.
#pragma once
#include <string>

#include "base/result.h"
#include "budget/budget.h"
#include "model/model.h"
#include "report/answer.h"
#include "report/kv_report.h"

namespace kvb {

std::string to_json_text(const ModelSpec& m);  // kvbudget inspect --json; the page's model spec
std::string to_json_text(const KvReport& r);   // kvbudget kv --json
std::string to_json_text(const Answer& a);     // kvbudget budget --json; the page's compute()
std::string to_json_text(const Error& e);      // {"code", "message", "detail"}
std::string to_json_text(const Message& m);    // {"code", "params", "text"}

// What the page builds its controls from: input limits, engine KV types, GPUs, weight
// formats, and every message code with its English template.
std::string catalog_json_text();

// The page's request: a JSON object whose keys are BudgetInputs' member names. Unknown
// keys and wrong types are refused by name; ranges are checked by validate().
Result<BudgetInputs> budget_inputs_from_json(const std::string& text);

}  // namespace kvb
