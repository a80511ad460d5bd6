#!/usr/bin/env bash
# Regenerates sandbox/vendorjs: the npm packages built into the sandbox, at
# their pinned versions, bundled to CommonJS by scripts/vendorjs (esbuild,
# the version go.mod pins), with licenses and a manifest of SHA-256 sums.
# Needs npm and the npm registry; the binary never does.
set -euo pipefail
cd "$(dirname "$0")/.."
PINS=(zod@3.23.8 date-fns@3.6.0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npm install --prefix "$tmp" --no-audit --no-fund --ignore-scripts --no-save --loglevel=error "${PINS[@]}" >/dev/null
go run ./scripts/vendorjs -node-modules "$tmp/node_modules" -out sandbox/vendorjs "${PINS[@]}"
echo "sandbox/vendorjs: ${PINS[*]}"
