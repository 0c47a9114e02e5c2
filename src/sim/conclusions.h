// What a finished simulation found, in plain words with numbers: which policy served
// the most, how much of the memory in use each wasted, why, and whether the arrivals
// outran what the GPU can serve. Post-processing of the per-policy summaries only.
#pragma once
#include <vector>

#include "base/message.h"
#include "sim/simulator.h"

namespace kvb {

// Which policy served the most (sim_most_served), or which served alike when their
// throughputs are within 1% (sim_served_alike); each one's waste; why the first beat
// another, when it did; and an overload (sim_overload) when, even for the policy that
// kept up best, the last quarter of the requests waited longer for their first token
// than the first quarter by 0.05 s or more per second between their arrivals (a queue
// fed 5% faster than it is served grows so) and requests were waiting when the last one
// arrived.
// `arrival_span_s`: the last arrival (0 = all at once, offline: never an overload).
std::vector<Message> sim_conclusions(const std::vector<sim::Summary>& policies, double arrival_span_s);

}  // namespace kvb
