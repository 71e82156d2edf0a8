#!/usr/bin/env bash
# Installs what `npm run bench` needs beyond the test peers: Debian's postfix (the vs-postfix
# scenario runs it as a private instance, and uses its smtp-source and smtp-sink). The system's
# own Postfix is left unconfigured ("No configuration") and is not started (policy-rc.d).
set -euo pipefail

[ -x /usr/sbin/postfix ] && [ -x /usr/sbin/smtp-source ] && [ -x /usr/sbin/smtp-sink ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "bench-setup: need root to run: apt-get install -y postfix" >&2
  exit 1
fi

echo "bench-setup: installing postfix (binaries only; the system instance stays off)" >&2
policy=/usr/sbin/policy-rc.d
placed_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
  "${as_root[@]}" chmod 755 "$policy"
  placed_policy=1
fi
echo "postfix postfix/main_mailer_type select No configuration" | "${as_root[@]}" debconf-set-selections
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q postfix >/dev/null
[ "$placed_policy" -eq 1 ] && "${as_root[@]}" rm -f "$policy"
exit 0
