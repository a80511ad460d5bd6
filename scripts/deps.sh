#!/usr/bin/env bash
# Installs, on a fresh Debian machine, what `make test` needs beyond Go:
# the git CLI (the tests' oracle, git-http-backend and git daemon) and the
# PostgreSQL server binaries (the tests start a throw-away cluster).
set -euo pipefail
need=()
command -v git >/dev/null 2>&1 || need+=(git)
[ -x /usr/lib/git-core/git-http-backend ] || need+=(git)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "deps: missing ${need[*]}; run as root or install them" >&2
    exit 1
  fi
  echo "deps: installing ${need[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
