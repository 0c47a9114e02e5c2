#!/usr/bin/env bash
# The whole test suite from a fresh Debian/Ubuntu checkout: installs what is missing,
# builds natively, runs the doctest suite through CTest (including the fuzz corpus
# replay), then builds the web site and runs the WASM-under-node and browser tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh all
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure)
if [ -f scripts/test-web.sh ]; then
  bash scripts/test-web.sh
fi
