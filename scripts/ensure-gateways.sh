#!/usr/bin/env bash
# Installs the gateways whose limiters the harness tests as target files (Debian packages):
# haproxy (2.6 on Debian 12) and nginx (1.22). Give the ones a make target needs; each is
# installed once, and the package's own service is left as the machine's owner set it: the
# harness starts its own processes with its own configuration (targets/peers/).
set -euo pipefail
if [ "$#" -eq 0 ]; then set -- haproxy nginx; fi
missing=()
for name in "$@"; do
  case "$name" in
    haproxy|nginx) command -v "$name" >/dev/null 2>&1 || [ -x "/usr/sbin/$name" ] || missing+=("$name") ;;
    *) echo "ensure-gateways: unknown gateway $name (use haproxy or nginx)" >&2; exit 2 ;;
  esac
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "ensure-gateways: installing ${missing[*]} (apt-get)" >&2
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
