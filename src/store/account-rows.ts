/** Account rows: the columns, and the mapping to and from Account that seals and opens its secrets. */
import {
  DEFAULT_FAILOVER_AFTER_SECONDS,
  type Account,
  type AccountMailbox,
  type LimitBehavior,
  type TlsMode,
  type WarmUp,
  type DestinationLimit,
} from '../core/account/index.js';
import type { SecretBox } from '../core/index.js';
import type { WebhookSettings } from '../core/provider/index.js';

export interface AccountRow {
  tenant_id: string;
  id: string;
  host: string;
  port: number;
  user: string | null;
  password_sealed: string | null;
  tls_mode: TlsMode;
  tls_reject_unauthorized: number;
  limit_per_minute: number | null;
  limit_per_hour: number | null;
  limit_per_day: number | null;
  /** `defer` or `reject`; `failover` is stored as `defer` with `limit_failover` (migration 25). */
  limit_behavior: Exclude<LimitBehavior, 'failover'>;
  limit_failover: number;
  /** A JSON array of account ids; null: none. */
  fallback_accounts: string | null;
  failover_after_seconds: number | null;
  /** A JSON WarmUp; null: none. */
  warmup: string | null;
  /** A JSON array of DestinationLimit; null: none. */
  destination_limits: string | null;
  max_connections: number;
  max_messages_per_connection: number;
  is_default: number;
  is_pec: number;
  imap_host: string | null;
  imap_port: number | null;
  imap_tls_mode: TlsMode | null;
  imap_user: string | null;
  imap_password_sealed: string | null;
  imap_folder: string | null;
  provider: WebhookSettings['provider'] | null;
  provider_webhook_sealed: string | null;
  paused_at: number | null;
  paused_reason: string | null;
  created_at: number;
  updated_at: number;
}

export const ACCOUNT_COLUMNS = `tenant_id, id, host, port, user, password_sealed, tls_mode, tls_reject_unauthorized,
  limit_per_minute, limit_per_hour, limit_per_day, limit_behavior, limit_failover, fallback_accounts,
  failover_after_seconds, warmup, destination_limits, max_connections,
  max_messages_per_connection, is_default, is_pec, imap_host, imap_port, imap_tls_mode, imap_user,
  imap_password_sealed, imap_folder, provider, provider_webhook_sealed, paused_at, paused_reason, created_at, updated_at`;

const passwordContext = (tenantId: string, id: string): string => `account:${tenantId}/${id}:password`;
// Its own context: a sealed relay password copied into the mailbox column does not open.
const imapPasswordContext = (tenantId: string, id: string): string => `account:${tenantId}/${id}:imap_password`;
const providerContext = (tenantId: string, id: string): string => `account:${tenantId}/${id}:provider_webhook`;

type Keyed = { tenant_id: string; id: string };
/** Each sealed column and the context its values are sealed under (a key rotation reseals them). */
export const ACCOUNT_SEALED_COLUMNS = [
  { column: 'password_sealed', context: (row: Keyed) => passwordContext(row.tenant_id, row.id) },
  { column: 'imap_password_sealed', context: (row: Keyed) => imapPasswordContext(row.tenant_id, row.id) },
  { column: 'provider_webhook_sealed', context: (row: Keyed) => providerContext(row.tenant_id, row.id) },
] as const;

/** The mailbox's columns (a PEC or bounce mailbox of the account), its password sealed under a context of its own. */
function createMailboxColumns(secrets: SecretBox) {
  /** The row's mailbox columns are all set (host, port, mode, folder) or all null (migration 11 leaves them null). */
  const toMailbox = (row: AccountRow): AccountMailbox | null =>
    row.imap_host === null
      ? null
      : {
          host: row.imap_host,
          port: row.imap_port ?? 993,
          tlsMode: row.imap_tls_mode ?? 'implicit',
          user: row.imap_user,
          password:
            row.imap_password_sealed === null
              ? null
              : secrets.open(row.imap_password_sealed, imapPasswordContext(row.tenant_id, row.id)),
          folder: row.imap_folder ?? 'INBOX',
        };

  const mailboxColumns = (
    account: Account,
  ): Pick<
    AccountRow,
    'imap_host' | 'imap_port' | 'imap_tls_mode' | 'imap_user' | 'imap_password_sealed' | 'imap_folder'
  > => {
    const imap = account.imap;
    return {
      imap_host: imap?.host ?? null,
      imap_port: imap?.port ?? null,
      imap_tls_mode: imap?.tlsMode ?? null,
      imap_user: imap?.user ?? null,
      imap_password_sealed:
        imap === null || imap.password === null
          ? null
          : secrets.seal(imap.password, imapPasswordContext(account.tenantId, account.id)),
      imap_folder: imap?.folder ?? null,
    };
  };

  return { toMailbox, mailboxColumns };
}

interface AccountRowMapper {
  toAccount(row: AccountRow): Account;
  toRow(account: Account): AccountRow;
}

export function createAccountRowMapper(secrets: SecretBox): AccountRowMapper {
  const { toMailbox, mailboxColumns } = createMailboxColumns(secrets);

  const toAccount = (row: AccountRow): Account => ({
    tenantId: row.tenant_id,
    id: row.id,
    host: row.host,
    port: row.port,
    user: row.user,
    password:
      row.password_sealed === null ? null : secrets.open(row.password_sealed, passwordContext(row.tenant_id, row.id)),
    tlsMode: row.tls_mode,
    tlsRejectUnauthorized: row.tls_reject_unauthorized === 1,
    limitPerMinute: row.limit_per_minute,
    limitPerHour: row.limit_per_hour,
    limitPerDay: row.limit_per_day,
    limitBehavior: row.limit_failover === 1 ? 'failover' : row.limit_behavior,
    fallbackAccounts: row.fallback_accounts === null ? [] : (JSON.parse(row.fallback_accounts) as string[]),
    failoverAfterSeconds: row.failover_after_seconds ?? DEFAULT_FAILOVER_AFTER_SECONDS,
    warmUp: row.warmup === null ? null : (JSON.parse(row.warmup) as WarmUp),
    destinationLimits:
      row.destination_limits === null ? [] : (JSON.parse(row.destination_limits) as DestinationLimit[]),
    maxConnections: row.max_connections,
    maxMessagesPerConnection: row.max_messages_per_connection,
    isDefault: row.is_default === 1,
    isPec: row.is_pec === 1,
    imap: toMailbox(row),
    provider:
      row.provider_webhook_sealed === null
        ? null
        : (JSON.parse(
            secrets.open(row.provider_webhook_sealed, providerContext(row.tenant_id, row.id)),
          ) as WebhookSettings),
    pausedAt: row.paused_at,
    pausedReason: row.paused_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });

  const toRow = (account: Account): AccountRow => ({
    tenant_id: account.tenantId,
    id: account.id,
    host: account.host,
    port: account.port,
    user: account.user,
    password_sealed:
      account.password === null ? null : secrets.seal(account.password, passwordContext(account.tenantId, account.id)),
    tls_mode: account.tlsMode,
    tls_reject_unauthorized: account.tlsRejectUnauthorized ? 1 : 0,
    limit_per_minute: account.limitPerMinute,
    limit_per_hour: account.limitPerHour,
    limit_per_day: account.limitPerDay,
    // Over its limit with no fallback that may send, a failover account waits: `defer` is what it falls back to.
    limit_behavior: account.limitBehavior === 'failover' ? 'defer' : account.limitBehavior,
    limit_failover: account.limitBehavior === 'failover' ? 1 : 0,
    fallback_accounts: account.fallbackAccounts.length === 0 ? null : JSON.stringify(account.fallbackAccounts),
    failover_after_seconds: account.failoverAfterSeconds,
    warmup: account.warmUp === null ? null : JSON.stringify(account.warmUp),
    destination_limits: account.destinationLimits.length === 0 ? null : JSON.stringify(account.destinationLimits),
    max_connections: account.maxConnections,
    max_messages_per_connection: account.maxMessagesPerConnection,
    is_default: account.isDefault ? 1 : 0,
    is_pec: account.isPec ? 1 : 0,
    ...mailboxColumns(account),
    provider: account.provider?.provider ?? null,
    provider_webhook_sealed:
      account.provider === null
        ? null
        : secrets.seal(JSON.stringify(account.provider), providerContext(account.tenantId, account.id)),
    paused_at: account.pausedAt,
    paused_reason: account.pausedReason,
    created_at: account.createdAt,
    updated_at: account.updatedAt,
  });

  return { toAccount, toRow };
}
