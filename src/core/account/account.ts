import type { WebhookSettings } from '../provider/events.js';
import type { DestinationLimit } from './destination-limit.js';
import type { WarmUp } from './warm-up.js';

/**
 * The account aggregate: one upstream SMTP relay a tenant sends through, with its pace limits,
 * and for a PEC account the IMAP mailbox where its provider's receipts arrive (core/pec/pec.ts).
 */

/** implicit: TLS from the first byte (465); starttls: upgrade required; none: plain text. */
export type TlsMode = 'implicit' | 'starttls' | 'none';

/** The port of submission over implicit TLS (RFC 8314 §3.3). */
export const IMPLICIT_TLS_PORT = 465;

/**
 * genro-mail-proxy's `use_tls`, which its clients send instead of a TLS mode, read as
 * genro reads it: true is implicit TLS on port 465 and STARTTLS (required) on any
 * other port, false is a plain connection. `port` null: none given nor stored, and
 * TLS then means the implicit kind (on 465).
 */
export function tlsModeOfUseTls(useTls: boolean, port: number | null): TlsMode {
  if (!useTls) return 'none';
  return port === null || port === IMPLICIT_TLS_PORT ? 'implicit' : 'starttls';
}
/**
 * Over its limit, an account's mail waits (`defer`), ends in error (`reject`), or goes through
 * its first fallback account that may send now (`failover`; with none, it waits).
 */
export type LimitBehavior = 'defer' | 'reject' | 'failover';

/** How long a relay answers no connection before its mail goes through a fallback account. */
export const DEFAULT_FAILOVER_AFTER_SECONDS = 60;
/** The most fallback accounts an account may name. */
export const MAX_FALLBACK_ACCOUNTS = 5;

/** The account's own IMAP mailbox (a PEC account's receipts arrive there). */
export interface AccountMailbox {
  host: string;
  port: number;
  tlsMode: TlsMode;
  /** Null: the relay's user (PEC providers use the same credentials for SMTP and IMAP). */
  user: string | null;
  /** Null: the relay's password. Decrypted only inside the process, like the relay's. */
  password: string | null;
  folder: string;
}

export interface Account {
  tenantId: string;
  id: string;
  host: string;
  port: number;
  user: string | null;
  /** Decrypted only inside the process; never leaves it through an API. */
  password: string | null;
  tlsMode: TlsMode;
  /** False only when the operator accepts self-signed upstream certificates. */
  tlsRejectUnauthorized: boolean;
  limitPerMinute: number | null;
  limitPerHour: number | null;
  limitPerDay: number | null;
  limitBehavior: LimitBehavior;
  /**
   * Accounts of the same tenant, in order, whose relays send this account's mail while it is
   * paused, unreachable for `failoverAfterSeconds`, or over its limits with `limitBehavior` failover.
   */
  fallbackAccounts: string[];
  failoverAfterSeconds: number;
  /** Daily caps rising from a start date (warm-up.ts); null: none. */
  warmUp: WarmUp | null;
  /** Limits and connection caps per recipient domain or group of domains, first match wins (destination-limit.ts). */
  destinationLimits: DestinationLimit[];
  maxConnections: number;
  maxMessagesPerConnection: number;
  isDefault: boolean;
  /** Relays through a PEC provider: its receipts are read from `imap`, which a PEC account always has. */
  isPec: boolean;
  /** Null: no mailbox configured. Kept when `isPec` is cleared (it is then not watched). */
  imap: AccountMailbox | null;
  /**
   * The provider the relay belongs to (SES, SendGrid, Mailgun, Postmark) and how its webhooks are
   * verified; null for a relay whose provider reports nothing by webhook. Secret: never shown.
   */
  provider: WebhookSettings | null;
  /** Set when the relay refused our AUTH or TLS; cleared when the account is saved again. */
  pausedAt: number | null;
  pausedReason: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * A PEC account's mailbox as its watcher connects to it: credentials resolved
 * (the mailbox's own, else the relay's), TLS checked as the account says.
 */
export interface PecMailboxAccount {
  tenantId: string;
  accountId: string;
  host: string;
  port: number;
  tlsMode: TlsMode;
  tlsRejectUnauthorized: boolean;
  user: string;
  password: string;
  folder: string;
}

/** The mailbox to watch for a PEC account, or null (not PEC, no mailbox, or no credentials to log in with). */
export function pecMailbox(account: Account): PecMailboxAccount | null {
  const imap = account.imap;
  if (!account.isPec || imap === null) return null;
  const user = imap.user ?? account.user;
  const password = imap.password ?? account.password;
  if (user === null || password === null) return null;
  return {
    tenantId: account.tenantId,
    accountId: account.id,
    host: imap.host,
    port: imap.port,
    tlsMode: imap.tlsMode,
    tlsRejectUnauthorized: account.tlsRejectUnauthorized,
    user,
    password,
    folder: imap.folder,
  };
}

/** An account as submission chooses it: by id, or the tenant's default (default-account.ts). */
export type AccountChoice = Pick<Account, 'id' | 'isDefault'>;
