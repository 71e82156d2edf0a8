#!/usr/bin/env bash
# Installs Debian packages for the test and bench setups: usage `apt-install.sh LABEL PACKAGE...`.
# As root, or through sudo. The packages' system services are kept from starting on install
# (Debian's policy-rc.d convention, unless one is set already): tests and benches start their own
# peers. DEBCONF_SELECTIONS, when set, is preseeded first (lines for debconf-set-selections).
set -euo pipefail

label=$1
shift
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "$label: need root to run: apt-get install -y $*" >&2
  exit 1
fi

policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  placed_policy=1
fi
cleanup() { if [ "$placed_policy" -eq 1 ]; then "${as_root[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

if [ -n "${DEBCONF_SELECTIONS:-}" ]; then
  printf '%s\n' "$DEBCONF_SELECTIONS" | "${as_root[@]}" debconf-set-selections
fi
export DEBIAN_FRONTEND=noninteractive
# Another apt (unattended upgrades at boot, a bench setup beside the tests) holds dpkg's lock for a
# while: wait for it rather than fail.
apt_get=("${as_root[@]}" apt-get -o DPkg::Lock::Timeout=600)
if ! "${apt_get[@]}" install -y -qq --no-install-recommends "$@" >/dev/null; then
  "${apt_get[@]}" update -qq
  "${apt_get[@]}" install -y -qq --no-install-recommends "$@" >/dev/null
fi
