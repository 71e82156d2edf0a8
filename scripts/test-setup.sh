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
  [dnsmasq]=dnsmasq-base      # a DNS server on a loopback port (DKIM records; the binary, no system service)
)

missing=()
for command in "${!NEEDS[@]}"; do
  command -v "$command" >/dev/null 2>&1 || [ -x "/usr/sbin/$command" ] || missing+=("${NEEDS[$command]}")
done
# swaks speaks TLS (--tls) only with Net::SSLeay, which it merely recommends.
perl -MNet::SSLeay -e1 >/dev/null 2>&1 || missing+=(libnet-ssleay-perl)
[ ${#missing[@]} -eq 0 ] && exit 0

echo "test-setup: installing ${missing[*]}" >&2
exec bash "$(dirname "$0")/apt-install.sh" test-setup "${missing[@]}"
