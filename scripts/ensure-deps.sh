#!/usr/bin/env bash
# Installs what the tests and the load test need on a fresh machine: redis-server (Debian
# package) and the Go modules. Idempotent; safe to run every time.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null 2>&1; then
  echo "ensure-deps: installing redis-server (apt-get)" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq redis-server >/dev/null
fi
# The Debian package starts a system redis on 6379; the project never uses it (tests and the
# local fleet start their own on free ports), so leave it as the machine's owner set it.

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH=/usr/local/go/bin:$PATH
fi
go mod download
