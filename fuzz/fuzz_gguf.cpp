// libFuzzer target: any bytes through the GGUF header reader, and headers that parse
// through GGUF metadata -> ModelSpec and llama.cpp's KV layout.
#include <cstdlib>

#include "exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (!kvb::fuzz::exercise_gguf(data, size)) std::abort();
    return 0;
}
