#!/usr/bin/env bash
# Installs what `npm run bench` needs beyond the test peers: Debian's postfix (the vs-postfix
# scenario runs it as a private instance, and uses its smtp-source and smtp-sink). The system's
# own Postfix is left unconfigured ("No configuration") and is not started (apt-install.sh).
set -euo pipefail

[ -x /usr/sbin/postfix ] && [ -x /usr/sbin/smtp-source ] && [ -x /usr/sbin/smtp-sink ] && exit 0

echo "bench-setup: installing postfix (binaries only; the system instance stays off)" >&2
DEBCONF_SELECTIONS="postfix postfix/main_mailer_type select No configuration" exec bash "$(dirname "$0")/apt-install.sh" bench-setup postfix
