#!/usr/bin/env bash
# Installs, on a fresh Debian machine, what `make test` needs beyond Go:
# the git CLI (the tests' oracle, git-http-backend and git daemon), the
# PostgreSQL server binaries (the tests start a throw-away cluster), and
# Node.js with the official MCP TypeScript SDK client the integration
# tests drive `tgp serve` with (pinned by test/integration/mcpjs's lock
# file; installed once, then found in place).
set -euo pipefail
need=()
command -v git >/dev/null 2>&1 || need+=(git)
[ -x /usr/lib/git-core/git-http-backend ] || need+=(git)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v npm >/dev/null 2>&1 || need+=(npm)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing ${need[*]}; run as root or install them" >&2
    exit 1
  fi
  echo "deps: installing ${need[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
mcpjs="$(dirname "$0")/../test/integration/mcpjs"
if [ ! -f "$mcpjs/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  echo "deps: installing the MCP TypeScript SDK client (npm ci in test/integration/mcpjs)"
  (cd "$mcpjs" && npm ci --no-audit --no-fund --loglevel=error)
fi
