#!/usr/bin/env bash
# Installs what the test suite needs and a fresh machine may lack: the real
# peers the tests talk to (REAL-PEERS.md). Idempotent; quiet when all is there.
set -euo pipefail

declare -A NEEDS=(
  [nats-server]=nats-server   # JetStream peer (event mirror tests)
  [dovecot]=dovecot-imapd     # IMAP peer (bounce mailbox tests)
  [swaks]=swaks               # an SMTP client nobody on the team wrote
  [systemd-analyze]=systemd   # verifies the unit in systemd/ (packaging test)
  [promtool]=prometheus       # checks the alert rules in monitoring/ (monitoring test)
  [chromium]=chromium         # the web console's end-to-end tests (playwright-core drives it)
)

missing=()
for command in "${!NEEDS[@]}"; do
  command -v "$command" >/dev/null 2>&1 || [ -x "/usr/sbin/$command" ] || missing+=("${NEEDS[$command]}")
done
# swaks speaks TLS (--tls) only with Net::SSLeay, which it merely recommends.
perl -MNet::SSLeay -e1 >/dev/null 2>&1 || missing+=(libnet-ssleay-perl)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "test-setup: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "test-setup: need root to run: apt-get install -y ${missing[*]}" >&2
  exit 1
fi

# Tests start their own peers on random ports; keep the packages' system services
# from starting on install (Debian's policy-rc.d convention), unless one is set already.
policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  placed_policy=1
fi
cleanup() { if [ "$placed_policy" -eq 1 ]; then "${as_root[@]}" rm -f "$policy"; fi; }
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
