// libFuzzer target: small random workloads and simulator settings, run step by step
// with every invariant checked (fuzz/exercise_sim.h).
#include <cstdio>
#include <cstdlib>

#include "exercise_sim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string why = kvb::fuzz::sim_check(std::string(reinterpret_cast<const char*>(data), size));
    if (!why.empty()) {
        std::fprintf(stderr, "fuzz_sim: %s\n", why.c_str());
        std::abort();
    }
    return 0;
}
