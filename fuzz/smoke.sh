#!/usr/bin/env bash
# The fuzz smoke run of scripts/test.sh: builds the fuzz targets, then runs each for
# FUZZ_SECONDS (default 20) seconds, starting from its corpus (every corpus input runs
# once under ASan + UBSan first). A crash, a sanitizer report, a broken invariant or an
# input slower than FUZZ_TIMEOUT (default 10) seconds fails it; the failing input is
# left in build-fuzz/smoke/artifacts/. New inputs go to build-fuzz/smoke/, never to
# fuzz/corpus*. Skipped (exit 0) when clang cannot link -fsanitize=fuzzer.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-20}
timeout=${FUZZ_TIMEOUT:-10}

probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" >/dev/null 2>&1; then
  echo "fuzz smoke: skipped: clang++ cannot link -fsanitize=fuzzer (Debian: apt-get install -y clang libclang-rt-dev)"
  exit 0
fi

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2

out=build-fuzz/smoke
rm -rf "$out"
mkdir -p "$out/artifacts"
stat() { awk -v k="stat::$2:" '$1 == k { print $2 }' "$out/$1.log"; }
run() {
  local target=$1
  shift
  mkdir -p "$out/$target"
  local start=$SECONDS
  if ! "build-fuzz/fuzz/$target" -max_total_time="$secs" -timeout="$timeout" -print_final_stats=1 \
      -artifact_prefix="$out/artifacts/$target-" "$@" "$out/$target" "${corpus[@]}" 2>"$out/$target.log"; then
    tail -n 40 "$out/$target.log" >&2
    echo "fuzz smoke: $target FAILED (log: $out/$target.log; input: $out/artifacts/)" >&2
    exit 1
  fi
  echo "fuzz smoke: $target ok: $(stat "$target" number_of_executed_units) runs in $((SECONDS - start)) s," \
    "slowest input $(stat "$target" slowest_unit_time_sec) s, peak RSS $(stat "$target" peak_rss_mb) MB"
}
corpus=(fuzz/corpus)
run fuzz_config -dict=fuzz/config.dict -max_len=65536
run fuzz_engines -dict=fuzz/config.dict -max_len=65536
corpus=(fuzz/corpus-sim)
run fuzz_sim -max_len=1024
corpus=(fuzz/corpus_gguf)
run fuzz_gguf -dict=fuzz/gguf.dict -max_len=8192
