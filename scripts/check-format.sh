#!/usr/bin/env bash
# Fails when a C++ source differs from .clang-format (clang-format 14, Debian bookworm's;
# newer versions may format a few constructs differently). To apply the formatting:
#   bash scripts/check-format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
# The version the check is pinned to when installed side by side with others.
CLANG_FORMAT=${CLANG_FORMAT:-$(command -v clang-format-14 || echo clang-format)}
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "check-format: $CLANG_FORMAT not found (Debian: apt-get install -y clang-format)" >&2
  exit 1
fi
mapfile -t files < <({ find src -name '*.cpp' -o -name '*.h'
  find tests/unit bench fuzz wasm -maxdepth 1 \( -name '*.cpp' -o -name '*.h' \); } | sort)
if [ "${1:-}" = "--fix" ]; then
  "$CLANG_FORMAT" -i "${files[@]}"
  exit 0
fi
report=$(mktemp)
trap 'rm -f "$report"' EXIT
if ! "$CLANG_FORMAT" --dry-run --Werror "${files[@]}" 2>"$report"; then
  # One line per file: how many places differ.
  grep -oE '^(src|tests|bench|fuzz|wasm)/[^:]+\.(cpp|h):[0-9]+:[0-9]+: ' "$report" | cut -d: -f1 | uniq -c >&2
  echo "check-format: the files above differ from .clang-format; apply with: bash scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files match .clang-format"
