// The one JSON form of a paging simulation (src/sim/session.h): `kvbudget simulate
// --json` prints to_json_text(SimReport), and the page's simResult() returns the same
// text as its "summary" (tests/node/sim.test.mjs compares them byte for byte). Field
// names are the C++ member names; the summary keeps the flat *_fraction names of the
// memory split.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "sim/session.h"

namespace kvb {

std::string to_json_text(const SimRunInfo& r);   // what simCreate() echoes: the resolved run
std::string to_json_text(const SimReport& r);    // kvbudget simulate --json
std::string to_json_text(const SimProgress& p);  // simRun()

// simResult(): {"summary": <SimReport>, "series": [per policy], "snapshots": [[per policy]]};
// series and snapshots only when asked (block maps are large).
std::string sim_result_json_text(const SimSession& s, bool series, bool snapshots);

// The block maps in a packed form, for the page: the same numbers as
// sim_result_json_text()'s "snapshots" (owners as a table and an index per block
// instead of runs), in three flat arrays a Web Worker hands to the page without
// copying or parsing them (60 maps of a busy 28K-block pool are millions of numbers:
// as JSON, most of the time from Run to the drawn result). Layout, all counts and
// offsets in elements:
//   f64: [P, S_1 .. S_P,  then per policy, per snapshot, kSnapshotHeader values:
//         step, time_s, block_size, capacity_tokens, num_blocks,
//         owners offset, owners length (into i32: the map's owners, each once, in order
//         of first block), index offset (into u16: num_blocks entries, each block's
//         position in owners; -1 when the map has more than kMaxOwnerIndex + 1 owners,
//         and owners then lists every block's owner, num_blocks of them),
//         shared offset, shared length (into i32), partial offset, partial length (into i32),
//         regions offset, regions length (into f64),
//         then every snapshot's regions, 7 values each as in the JSON]
//   i32: the owner tables, shared and partial lists, [a, b, a, b, ...] as in the JSON.
//   u16: the blocks' owner indices.
// Every value is a whole number below 2^53 or the double the JSON writes, so the
// doubles hold them exactly; wasm/kvbudget-api.js unpackSnapshots() reads it back.
inline constexpr size_t kSnapshotHeader = 14;
inline constexpr int32_t kMaxOwnerIndex = 65535;
struct SimPackedSnapshots {
    std::vector<double> f64;
    std::vector<int32_t> i32;
    std::vector<uint16_t> u16;
};
SimPackedSnapshots sim_snapshots_packed(const SimSession& s);

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
