#!/usr/bin/env bash
# Builds the site (unless --no-build) and serves site/ on http://127.0.0.1:${PORT:-8080}/.
# The page works offline on the bundled catalog; loading other models needs the Hub.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--no-build" ]; then
  bash scripts/install-deps.sh site
  [ -d node_modules ] || npm ci
  npm run build
fi
exec node tests/web/static-server.mjs site "${PORT:-8080}"
