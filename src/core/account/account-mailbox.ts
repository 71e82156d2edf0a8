/**
 * An account's own IMAP mailbox as the admin API edits it: merging an update
 * onto the stored settings, and what a PEC account must have to be watched.
 * Pure: the errors are VALIDATION_FAILED with the field at fault, as the edge's are.
 */
import type { Account, AccountMailbox, TlsMode } from './account.js';
import { AppError } from '../app-error.js';

/** Every field optional: `undefined` keeps the stored value; `host: null` removes the mailbox. */
export interface AccountMailboxInput {
  host?: string | null | undefined;
  port?: number | undefined;
  tlsMode?: TlsMode | undefined;
  /** `null`: the relay's user. */
  user?: string | null | undefined;
  /** `undefined` keeps the stored password; `null` clears it (the relay's is used). */
  password?: string | null | undefined;
  folder?: string | undefined;
}

/** IMAP's ports (RFC 8314 §7 for implicit TLS, RFC 3501 §2.1 otherwise). */
const IMAP_PORT: Record<TlsMode, number> = { implicit: 993, starttls: 143, none: 143 };
export const DEFAULT_IMAP_FOLDER = 'INBOX';

const invalid = (path: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', 'invalid request body', { details: [{ path, message }] });

/** The mailbox after an update, or null when none is configured (nor given). */
export function mergeMailbox(input: AccountMailboxInput, current: AccountMailbox | null): AccountMailbox | null {
  const host = input.host !== undefined ? input.host : (current?.host ?? null);
  if (host === null) {
    // Settings given for a mailbox that does not exist would be dropped in silence.
    const given = (['port', 'tlsMode', 'user', 'password', 'folder'] as const).filter(
      (key) => input[key] !== undefined && input[key] !== null,
    );
    if (given.length > 0)
      throw invalid('imap_host', `the mailbox settings given (${given.map(wireName).join(', ')}) need imap_host`);
    return null;
  }
  const tlsMode = input.tlsMode ?? current?.tlsMode ?? 'implicit';
  return {
    host,
    port: input.port ?? current?.port ?? IMAP_PORT[tlsMode],
    tlsMode,
    user: input.user !== undefined ? input.user : (current?.user ?? null),
    password: input.password !== undefined ? input.password : (current?.password ?? null),
    folder: input.folder ?? current?.folder ?? DEFAULT_IMAP_FOLDER,
  };
}

const WIRE_NAMES: Record<keyof AccountMailboxInput, string> = {
  host: 'imap_host',
  port: 'imap_port',
  tlsMode: 'imap_tls_mode',
  user: 'imap_user',
  password: 'imap_password',
  folder: 'imap_folder',
};
const wireName = (key: keyof AccountMailboxInput): string => WIRE_NAMES[key];

/**
 * A PEC account's receipts are its provider's proof of each message: without a
 * mailbox to read them from, and credentials to log in with, it cannot work.
 * Checked on the merged account, so stored values count and an update cannot
 * take away what a PEC account needs (the relay password it falls back to).
 */
export function checkPecAccount(account: Account): void {
  if (!account.isPec) return;
  const imap = account.imap;
  if (imap === null) throw invalid('imap_host', 'a PEC account needs imap_host: the mailbox where its receipts arrive');
  if ((imap.user ?? account.user) === null)
    throw invalid('imap_user', 'a PEC account needs a mailbox user: imap_user, or the relay user');
  if ((imap.password ?? account.password) === null)
    throw invalid('imap_password', 'a PEC account needs a mailbox password: imap_password, or the relay password');
}
