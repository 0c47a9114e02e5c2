#!/usr/bin/env bash
# Installs what building and testing kvbudget needs on Debian/Ubuntu, only when missing.
# Usage: scripts/install-deps.sh [native|fuzz|site|web|all]   (default: all)
#   native: CLI + doctest + clang-format (the format check); fuzz: clang with libFuzzer;
#   site: Emscripten to build the page; web: site + Chromium for browser tests
set -euo pipefail
what=${1:-all}
native=(cmake g++ make nlohmann-json3-dev doctest-dev clang-format)
# libclang-rt-dev holds libFuzzer and the sanitizer runtimes (only recommended by clang).
fuzz=(clang libclang-rt-dev)
# The page's WASM module is a CMake build (cmake --preset wasm) of the core.
site=(emscripten cmake make nlohmann-json3-dev)
web=("${site[@]}" chromium)
pkgs=()
case "$what" in
  native) pkgs=("${native[@]}") ;;
  fuzz) pkgs=("${fuzz[@]}") ;;
  site) pkgs=("${site[@]}") ;;
  web) pkgs=("${web[@]}") ;;
  all) pkgs=("${native[@]}" "${fuzz[@]}" "${web[@]}") ;;
  *) echo "usage: $0 [native|fuzz|site|web|all]" >&2; exit 2 ;;
esac
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "Installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
