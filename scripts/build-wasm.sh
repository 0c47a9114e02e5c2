#!/usr/bin/env bash
# Compiles the C++ core + wasm/bindings.cpp into an ES6 WebAssembly module:
#   build-wasm-web/kvbudget.mjs + build-wasm-web/kvbudget.wasm
# One build serves the page (fetches the .wasm next to the bundle) and node tests
# (they pass wasmBinary), so ENVIRONMENT=web,worker and no node-only glue.
# Works with Debian's emscripten 3.1.6 and with a newer emsdk on CI.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's emcc needs its node modules on NODE_PATH; harmless elsewhere.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
EMCXX="${EMCXX:-em++}"
if ! command -v "$EMCXX" >/dev/null 2>&1; then
  echo "build-wasm: $EMCXX not found: install emscripten (Debian: apt-get install -y emscripten) or activate emsdk" >&2
  exit 1
fi

OUT=build-wasm-web
mkdir -p "$OUT/obj" "$OUT/include"

# nlohmann/json: copy the header folder into the build tree; never put /usr/include
# on a wasm include path (host libc headers would shadow the wasm sysroot's).
if [ ! -f "$OUT/include/nlohmann/json.hpp" ]; then
  src=""
  for d in build-wasm/third_party/include /usr/include /usr/local/include; do
    if [ -f "$d/nlohmann/json.hpp" ]; then src="$d"; break; fi
  done
  if [ -z "$src" ]; then
    echo "build-wasm: nlohmann/json.hpp not found (Debian: apt-get install -y nlohmann-json3-dev)" >&2
    exit 1
  fi
  cp -r "$src/nlohmann" "$OUT/include/"
fi

# Exceptions are enabled so nlohmann's internal throws can be caught inside the
# core and the bindings; nothing may escape to JS as a bare pointer number.
CXXFLAGS=(-std=c++17 -Os -fwasm-exceptions -DNDEBUG -Isrc -isystem "$OUT/include")
# The simulator's hot loop needs inlining: at -Os the Azure trace ran ~6x slower
# than native, at -O3 (its sources and the link) within ~1.3x (bench/web/sim-bench.mjs),
# for ~11 KB more gzip.
LDFLAGS=(-O3 -fwasm-exceptions -lembind
  -sMODULARIZE=1 -sEXPORT_ES6=1 -sEXPORT_NAME=createKvbudgetModule
  -sALLOW_MEMORY_GROWTH=1 -sENVIRONMENT=web,worker
  -sFILESYSTEM=0 -sDYNAMIC_EXECUTION=0 -sINCOMING_MODULE_JS_API=wasmBinary,locateFile,print,printErr)

sources=(src/base/*.cpp src/model/*.cpp src/kv/*.cpp src/engines/*.cpp src/budget/*.cpp src/sim/*.cpp)
compgen -G "src/report/*.cpp" >/dev/null && sources+=(src/report/*.cpp)
HAVE=(-DKVB_HAVE_GPUS=1 -DKVB_HAVE_WEIGHTS=1 -DKVB_HAVE_BUDGET=1 -DKVB_HAVE_TRANSFORMERS_CACHE=1)
sources+=(wasm/bindings.cpp)

# Rebuild an object when its source or any header is newer (headers are few and
# shared, so "any header" keeps this simple and correct).
newest_header=$(ls -t src/*/*.h 2>/dev/null | head -1 || true)
objects=()
pids=()
jobs_max="${JOBS:-2}"
for s in "${sources[@]}"; do
  o="$OUT/obj/$(echo "$s" | tr '/' '_').o"
  objects+=("$o")
  flags=("${CXXFLAGS[@]}")
  if [ "$s" = wasm/bindings.cpp ]; then flags+=("${HAVE[@]}"); fi
  # sim_json.cpp writes the series and block maps, tens of thousands of numbers per run.
  case "$s" in src/sim/*|src/report/sim_json.cpp) flags=("${flags[@]/#-Os/-O3}") ;; esac
  if [ "$s" = wasm/bindings.cpp ] || [ ! -f "$o" ] || [ "$s" -nt "$o" ] || { [ -n "$newest_header" ] && [ "$newest_header" -nt "$o" ]; } || [ "$0" -nt "$o" ]; then
    echo "em++ $s"
    "$EMCXX" "${flags[@]}" -c "$s" -o "$o" &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$jobs_max" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
  fi
done
for p in "${pids[@]}"; do wait "$p"; done

# Drop objects of sources that no longer exist.
for o in "$OUT"/obj/*.o; do
  keep=0
  for k in "${objects[@]}"; do [ "$o" = "$k" ] && keep=1; done
  [ $keep = 1 ] || rm -f "$o"
done

echo "link $OUT/kvbudget.mjs"
"$EMCXX" "${LDFLAGS[@]}" "${objects[@]}" -o "$OUT/kvbudget.mjs"
ls -l "$OUT/kvbudget.mjs" "$OUT/kvbudget.wasm"
