/** The account aggregate: one upstream SMTP relay a tenant sends through, with its pace limits. */

/** implicit: TLS from the first byte (465); starttls: upgrade required; none: plain text. */
export type TlsMode = 'implicit' | 'starttls' | 'none';
export type LimitBehavior = 'defer' | 'reject';

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
  maxConnections: number;
  maxMessagesPerConnection: number;
  isDefault: boolean;
  /** Set when the relay refused our AUTH or TLS; cleared when the account is saved again. */
  pausedAt: number | null;
  pausedReason: string | null;
  createdAt: number;
  updatedAt: number;
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
  max_connections: number;
  max_messages_per_connection: number;
  is_default: boolean;
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
    use_tls: account.tlsMode === 'implicit',
    tls_mode: account.tlsMode,
    tls_reject_unauthorized: account.tlsRejectUnauthorized,
    limit_per_minute: account.limitPerMinute,
    limit_per_hour: account.limitPerHour,
    limit_per_day: account.limitPerDay,
    limit_behavior: account.limitBehavior,
    max_connections: account.maxConnections,
    max_messages_per_connection: account.maxMessagesPerConnection,
    is_default: account.isDefault,
    state: account.pausedAt === null ? 'active' : 'paused',
    paused_at: account.pausedAt === null ? null : new Date(account.pausedAt).toISOString(),
    paused_reason: account.pausedReason,
    created_at: new Date(account.createdAt).toISOString(),
    updated_at: new Date(account.updatedAt).toISOString(),
  };
}

/** An account as submission chooses it: by id, or the tenant's default. */
export type AccountChoice = Pick<Account, 'id' | 'isDefault'>;

/** The tenant's default account: the one marked so, or the only one. */
export function defaultAccount<T extends AccountChoice>(accounts: readonly T[]): T | undefined {
  return accounts.find((account) => account.isDefault) ?? (accounts.length === 1 ? accounts[0] : undefined);
}
