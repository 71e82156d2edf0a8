/** Types of dovecot-config.mjs (plain JavaScript, shared with bench/). */
export interface DovecotUser {
  user: string;
  password: string;
}

/** dovecot.conf for a peer: everything under `dir`, IMAP only, plaintext LOGIN/PLAIN on loopback. */
export function configText(dir: string, host: string, port: number, greeting: string): string;

/** A fresh world-readable temp dir with the passwd-file and a `mail`-owned mail root. */
export function prepareDir(users: DovecotUser[]): string;
