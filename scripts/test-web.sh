#!/usr/bin/env bash
# Web tests: builds the WASM module (CMake, wasm preset) and site/, then runs the node tests (the WASM
# core gives the CLI's numbers) and the browser end-to-end tests (Debian's Chromium
# through playwright-core, against a fake hub). Expects the native CLI in build/
# (scripts/test.sh builds it first); builds it when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v em++ >/dev/null 2>&1 || ! command -v cmake >/dev/null 2>&1 || [ ! -x /usr/bin/chromium ]; then
  if [ -f scripts/install-deps.sh ]; then
    bash scripts/install-deps.sh web
  else
    apt-get install -y emscripten cmake make nlohmann-json3-dev chromium
  fi
fi
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run build

export KVB_CLI="${KVB_CLI:-$PWD/build/kvbudget}"
if [ ! -x "$KVB_CLI" ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j2 --target kvbudget
fi

node --test tests/node/ tests/web/
