// What a finished simulation found, in plain words with numbers: which policy served
// the most, how much of the memory in use each wasted, why, and whether the arrivals
// outran what the GPU can serve. Post-processing of the per-policy summaries only.
#pragma once
#include <vector>

#include "base/message.h"
#include "sim/simulator.h"

namespace kvb {

// Overload, measurably: requests arrive over `arrival_span_s` seconds (0 = all at once,
// offline: never overload), so the offered rate is requests / span; when even the policy
// that finished fastest completes fewer than 80 % of that rate, the queue never drains
// and every later request waits longer (TTFT grows with the run, not with the model).
std::vector<Message> sim_conclusions(const std::vector<sim::Summary>& policies, double arrival_span_s);

}  // namespace kvb
