#!/usr/bin/env bash
# Builds the libFuzzer target for the config parser with ASan + UBSan (clang++-14).
# Usage: fuzz/build.sh [OUT_DIR]   then: OUT_DIR/fuzz_config fuzz/corpus-work fuzz/corpus -max_total_time=600
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-fuzz}
mkdir -p "$out/include"
[ -e "$out/include/nlohmann" ] || ln -s /usr/include/nlohmann "$out/include/nlohmann"
flags=(-std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$root/src" -isystem "$out/include")
# The core once, as objects without the fuzzer's main, then one binary per target.
objs=()
for f in "$root"/src/{base,model,kv,engines,budget,report,sim}/*.cpp; do
  [ -f "$f" ] || continue
  o="$out/$(echo "${f#$root/src/}" | tr / _ | sed 's/\.cpp$//').o"
  clang++-14 "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$f" -o "$o"
  objs+=("$o")
done
for target in fuzz_config fuzz_engines fuzz_gguf; do
  clang++-14 "${flags[@]}" "${objs[@]}" "$root/fuzz/$target.cpp" -o "$out/$target"
  echo "$out/$target"
done
