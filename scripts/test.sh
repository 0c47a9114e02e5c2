#!/usr/bin/env bash
# The whole test suite from a fresh Debian/Ubuntu checkout: installs what is missing,
# checks the C++ formatting, builds natively (warnings are errors), runs the doctest
# suite through CTest (including the fuzz corpus replay), builds the fuzz targets and
# runs each briefly (ASan + UBSan, FUZZ_SECONDS each), then builds the web site and
# runs the WASM-under-node and browser tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh all
bash scripts/check-format.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
(cd build && ctest --output-on-failure)
bash fuzz/smoke.sh
if [ -f scripts/test-web.sh ]; then
  bash scripts/test-web.sh
fi
