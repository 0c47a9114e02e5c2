// The one JSON form of a paging simulation (src/sim/session.h): `kvbudget simulate
// --json` prints to_json_text(SimReport), and the page's simResult() returns the same
// text as its "summary" (tests/node/sim.test.mjs compares them byte for byte). Field
// names are the C++ member names; the summary keeps the flat *_fraction names of the
// memory split.
#pragma once
#include <string>

#include "base/result.h"
#include "sim/session.h"

namespace kvb {

std::string to_json_text(const SimRunInfo& r);   // what simCreate() echoes: the resolved run
std::string to_json_text(const SimReport& r);    // kvbudget simulate --json
std::string to_json_text(const SimProgress& p);  // simRun()

// simResult(): {"summary": <SimReport>, "series": [per policy], "snapshots": [[per policy]]};
// series and snapshots only when asked (block maps are large).
std::string sim_result_json_text(const SimSession& s, bool series, bool snapshots);

// The page's request: a JSON object whose keys are SimInputs' member names. Unknown
// keys and wrong types are refused by name; values are checked by validate().
// "policies" takes a name, "all", or a list of names.
// trace_source: the trace read in pieces instead of a "trace" text (the page's worker
// reading a File); it is not part of the JSON form.
Result<SimInputs> sim_inputs_from_json(const std::string& text, sim::TraceSource trace_source = {});

// simResult()'s options: {"series": bool, "snapshots": bool}, both default true.
struct SimResultOptions {
    bool series = true;
    bool snapshots = true;
};
Result<SimResultOptions> sim_result_options_from_json(const std::string& text);

}  // namespace kvb
