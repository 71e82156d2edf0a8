/**
 * Ports: what the core needs from the outside world, by role. Adapters
 * (SQLite, node:crypto, ...) implement them and are wired in main.ts.
 */
import type { Account, AccountChoice, PecMailboxAccount } from './account/account.js';
import type { Tenant } from './tenant/tenant.js';
import type { ChangeRecord } from './events/change-record.js';
import type { RoutingRule } from './account/routing.js';

export interface TenantRepository {
  get(id: string): Tenant | null;
  /** Whether the tenant takes mail for sending now; null when there is no such tenant. Opens no secret. */
  isActive(id: string): boolean | null;
  /** The tenant's routing rules, in order ([] when none, or no such tenant). Opens no secret. */
  routes(id: string): RoutingRule[];
  list(): Tenant[];
  insert(tenant: Tenant, apiKeyHash: string): void;
  update(tenant: Tenant): void;
  replaceApiKey(id: string, apiKeyHash: string, createdAt: number, expiresAt: number | null): void;
  delete(id: string): void;
  /**
   * The holder of an API key (by its digest): only what authentication needs, so
   * that no request opens the tenant's client credentials.
   */
  findKeyHolder(hash: string): { tenantId: string; apiKeyExpiresAt: number | null } | null;
  /** Messages of the tenant that are not yet in a final handoff state. */
  countPendingMessages(id: string): number;
}

export interface AccountRepository {
  get(tenantId: string, id: string): Account | null;
  list(tenantId: string | null): Account[];
  /** The tenant's account ids and which is the default: what choosing an account needs, without opening secrets. */
  choices(tenantId: string): AccountChoice[];
  /** Changes whenever any account is saved, paused or deleted: lets readers cache `list` and `pecMailboxes`. */
  version(): string;
  /**
   * The mailbox of every PEC account that has one, credentials resolved (the
   * mailbox's own, else the relay's), ordered by tenant and account.
   */
  pecMailboxes(): PecMailboxAccount[];
  /** Insert or replace; when `account.isDefault`, clears the flag on the tenant's other accounts. */
  save(account: Account): void;
  delete(tenantId: string, id: string): void;
  countPendingMessages(tenantId: string, id: string): number;
}

/** Appends the audit entry and the outbox event of one admin change. */
export interface ChangeLog {
  record(change: ChangeRecord): void;
}

/** The store's unit of work: everything inside `fn` commits together or not at all. */
export interface Transactor {
  /** Commits durably (it survives a power loss) before it returns. */
  transaction<T>(fn: () => T): T;
  /**
   * Commits `fn` at once and resolves once the commit is durable. The wait for
   * the disk happens off this thread, so the next group can be prepared and
   * committed meanwhile; groups that commit during one wait share the next.
   */
  commitGroup<T>(fn: () => T): Promise<T>;
}

export interface AdminStore extends Transactor {
  tenants: TenantRepository;
  accounts: AccountRepository;
  changes: ChangeLog;
}

/** Authenticated encryption of secrets at rest; `context` binds a ciphertext to its row and field. */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export interface IssuedApiKey {
  /** Shown to the caller once, never stored. */
  key: string;
  /** Keyed hash, the only form that is stored. */
  hash: string;
}

export interface ApiKeyIssuer {
  issue(): IssuedApiKey;
  hash(key: string): string;
}

/**
 * Checks a presented token against the admin token in constant time, by its
 * ApiKeyIssuer hash: the one keyed hash per request serves both checks.
 */
export interface AdminTokenVerifier {
  matches(tokenHash: string): boolean;
}
