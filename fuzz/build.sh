#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz_config, fuzz_engines, fuzz_sim) with clang, ASan and
# UBSan (no recovery) into build-fuzz/fuzz/ through CMake (-DKVB_FUZZ=ON, the fuzz preset).
cd "$(dirname "$0")/.." && cmake --preset fuzz && cmake --build --preset fuzz -j2
