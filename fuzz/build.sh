#!/usr/bin/env bash
# Builds the libFuzzer target for the config parser with ASan + UBSan (clang++-14).
# Usage: fuzz/build.sh [OUT_DIR]   then: OUT_DIR/fuzz_config fuzz/corpus-work fuzz/corpus -max_total_time=600
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-fuzz}
mkdir -p "$out/include"
[ -e "$out/include/nlohmann" ] || ln -s /usr/include/nlohmann "$out/include/nlohmann"
srcs=("$root"/src/model.cpp "$root"/src/config_reader.cpp "$root"/src/kv.cpp "$root"/src/dtype.cpp "$root"/src/units.cpp)
clang++-14 -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$root/src" -isystem "$out/include" "${srcs[@]}" "$root/fuzz/fuzz_config.cpp" -o "$out/fuzz_config"
echo "$out/fuzz_config"
