/**
 * The private Dovecot 2.3 setup of a test peer: one temp dir holding the config,
 * the passwd-file users and the maildirs (REAL-PEERS.md, "IMAP bounce mailbox").
 * Plain JavaScript (typed by dovecot-config.d.mts): the benchmarks (bench/) start
 * their Dovecot from it too.
 */
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** dovecot.conf for a peer: everything under `dir`, IMAP only, plaintext LOGIN/PLAIN on loopback. */
export function configText(dir, host, port, greeting) {
  // The login process must not run as root and the mail belongs to an unprivileged
  // user (mail, uid 8): that is what lets Dovecot run from a private config as root.
  // The unique greeting tells our server from another one that took the port.
  return `protocols = imap
listen = ${host}
base_dir = ${dir}/run
state_dir = ${dir}/run/state
log_path = ${dir}/dovecot.log
login_greeting = ${greeting}
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = dovecot
default_internal_group = dovecot
default_login_user = dovenull
first_valid_uid = 8
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=mail gid=mail home=${dir}/mail/%u
}
mail_location = maildir:~/Maildir
service imap-login {
  inet_listener imap {
    address = ${host}
    port = ${port}
  }
  chroot =
}
service anvil {
  chroot =
}
`;
}

/** A fresh world-readable temp dir with the passwd-file and a `mail`-owned mail root. */
export function prepareDir(users) {
  for (const { user, password } of users) {
    // passwd-file fields are colon-separated lines.
    if (/[:\s]/.test(user) || /[:\r\n]/.test(password) || user === '')
      throw new Error(`unusable Dovecot user ${JSON.stringify(user)}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-dovecot-'));
  chmodSync(dir, 0o755); // Dovecot's unprivileged processes walk into it
  writeFileSync(join(dir, 'users'), users.map(({ user, password }) => `${user}:{PLAIN}${password}\n`).join(''));
  const mail = join(dir, 'mail');
  mkdirSync(mail);
  const { uid, gid } = mailOwner();
  chownSync(mail, uid, gid);
  return dir;
}

/** The Debian `mail` user (8:8), read from /etc/passwd rather than assumed. */
function mailOwner() {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('mail:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('no "mail" user in /etc/passwd');
  return { uid: Number(uid), gid: Number(gid) };
}
