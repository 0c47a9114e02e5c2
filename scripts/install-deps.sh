#!/usr/bin/env bash
# Installs what building and testing kvbudget needs on Debian/Ubuntu, only when missing.
# Usage: scripts/install-deps.sh [native|site|web|all]   (default: all)
#   native: CLI + doctest; site: + Emscripten to build the page; web: site + Chromium for browser tests
set -euo pipefail
what=${1:-all}
native=(cmake g++ make nlohmann-json3-dev doctest-dev)
web=(emscripten chromium)
pkgs=()
case "$what" in
  native) pkgs=("${native[@]}") ;;
  site) pkgs=(emscripten) ;;
  web) pkgs=("${web[@]}") ;;
  all) pkgs=("${native[@]}" "${web[@]}") ;;
  *) echo "usage: $0 [native|site|web|all]" >&2; exit 2 ;;
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
