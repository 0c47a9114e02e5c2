// libFuzzer target: any bytes through the config parser and the KV arithmetic.
#include <cstdlib>

#include "exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!kvb::fuzz::exercise_config(std::string(reinterpret_cast<const char*>(data), size))) std::abort();
    return 0;
}
