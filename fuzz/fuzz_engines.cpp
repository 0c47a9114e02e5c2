// libFuzzer target: configs that parse go through every engine model and the budget,
// with options drawn from the input.
#include <cstdlib>

#include "exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!kvb::fuzz::exercise_engines(std::string(reinterpret_cast<const char*>(data), size))) std::abort();
    return 0;
}
