// ShareGPT lengths as the PagedAttention paper drew them (see sharegpt_lengths.cpp).
#pragma once
#include <cstdint>

#include "sim/rng.h"

namespace kvb::sim {

// One (prompt, output) pair with prompt + output < 2048, the paper's filter.
void draw_sharegpt_lengths(Rng& r, int32_t* prompt, int32_t* output);

}  // namespace kvb::sim
