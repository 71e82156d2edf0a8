/**
 * An account as the outside sees it: the `account` of the account.created and
 * account.updated events (and of the HTTP answers, which show the same object).
 * Field names and order are the contract; no secret ever leaves through it.
 */
import type { Account, LimitBehavior, TlsMode } from '../account/account.js';

export interface DestinationLimitView {
  name: string;
  domains: string[];
  limit_per_minute: number | null;
  limit_per_hour: number | null;
  limit_per_day: number | null;
  max_connections: number | null;
}

export interface AccountView {
  id: string;
  tenant_id: string;
  host: string;
  port: number;
  user: string | null;
  has_password: boolean;
  use_tls: boolean;
  tls_mode: TlsMode;
  tls_reject_unauthorized: boolean;
  limit_per_minute: number | null;
  limit_per_hour: number | null;
  limit_per_day: number | null;
  limit_behavior: LimitBehavior;
  /** The accounts that send this one's mail while it cannot, in order. */
  fallback_accounts: string[];
  failover_after_seconds: number;
  /** Daily caps rising from a start date (UTC), applied like limit_per_day; null: none. */
  warmup: { start_date: string; daily_caps: number[] } | null;
  /** Limits per recipient domain or group of domains, first match wins. */
  destination_limits: DestinationLimitView[];
  max_connections: number;
  max_messages_per_connection: number;
  is_default: boolean;
  is_pec: boolean;
  /** The mailbox fields are null when no mailbox is configured; its password never leaves the process. */
  imap_host: string | null;
  imap_port: number | null;
  imap_tls_mode: TlsMode | null;
  imap_user: string | null;
  has_imap_password: boolean;
  imap_folder: string | null;
  /** The relay's provider; its webhook secrets never leave the process. */
  provider: string | null;
  /** Where that provider's webhooks are to be sent: `/webhooks/{provider}/{tenant_id}`. */
  webhook_path: string | null;
  state: 'active' | 'paused';
  paused_at: string | null;
  paused_reason: string | null;
  created_at: string;
  updated_at: string;
}

export function viewAccount(account: Account): AccountView {
  return {
    id: account.id,
    tenant_id: account.tenantId,
    host: account.host,
    port: account.port,
    user: account.user,
    has_password: account.password !== null,
    // genro's reading: any TLS, implicit or STARTTLS, is use_tls.
    use_tls: account.tlsMode !== 'none',
    tls_mode: account.tlsMode,
    tls_reject_unauthorized: account.tlsRejectUnauthorized,
    limit_per_minute: account.limitPerMinute,
    limit_per_hour: account.limitPerHour,
    limit_per_day: account.limitPerDay,
    limit_behavior: account.limitBehavior,
    fallback_accounts: [...account.fallbackAccounts],
    failover_after_seconds: account.failoverAfterSeconds,
    warmup:
      account.warmUp === null
        ? null
        : { start_date: account.warmUp.startDate, daily_caps: [...account.warmUp.dailyCaps] },
    destination_limits: account.destinationLimits.map((limit) => ({
      name: limit.name,
      domains: [...limit.domains],
      limit_per_minute: limit.limitPerMinute,
      limit_per_hour: limit.limitPerHour,
      limit_per_day: limit.limitPerDay,
      max_connections: limit.maxConnections,
    })),
    max_connections: account.maxConnections,
    max_messages_per_connection: account.maxMessagesPerConnection,
    is_default: account.isDefault,
    is_pec: account.isPec,
    imap_host: account.imap?.host ?? null,
    imap_port: account.imap?.port ?? null,
    imap_tls_mode: account.imap?.tlsMode ?? null,
    imap_user: account.imap?.user ?? null,
    has_imap_password: (account.imap?.password ?? null) !== null,
    imap_folder: account.imap?.folder ?? null,
    provider: account.provider?.provider ?? null,
    webhook_path:
      account.provider === null
        ? null
        : `/webhooks/${account.provider.provider}/${encodeURIComponent(account.tenantId)}`,
    state: account.pausedAt === null ? 'active' : 'paused',
    paused_at: account.pausedAt === null ? null : new Date(account.pausedAt).toISOString(),
    paused_reason: account.pausedReason,
    created_at: new Date(account.createdAt).toISOString(),
    updated_at: new Date(account.updatedAt).toISOString(),
  };
}
