#!/usr/bin/env bash
# The page's WebAssembly module, build-wasm/kvbudget.mjs + kvbudget.wasm, by CMake (wasm/CMakeLists.txt).
cd "$(dirname "$0")/.." && cmake --preset wasm && cmake --build --preset wasm -j2
