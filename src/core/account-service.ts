/**
 * Account administration use-cases. A tenant key manages its own tenant's
 * accounts; the admin token manages anyone's. Writes are audited and mirrored.
 */
import type { WebhookSettings } from './provider-events.js';
import { IMPLICIT_TLS_PORT, tlsModeOfUseTls, type Account, type AccountChoice, type LimitBehavior, type TlsMode } from './account.js';
import { checkPecAccount, mergeMailbox, type AccountMailboxInput } from './account-mailbox.js';
import { accountRelayActions, type RelayTester } from './account-relay-actions.js';
import type { AccountAttempts } from './attempt-log.js';
import { viewAccount } from './contracts/account.js';
import { defaultWarnings, isDefaultOnSave, type AccountWarning } from './default-account.js';
import type { QueueCount } from './queue-status.js';
import type { RelayConnections } from './relay.js';
import { WINDOW_KINDS, WINDOW_MS, windowStart, type Usage, type WindowKind } from './rate-limit.js';
import { AppError, notFound } from './app-error.js';
import { changeRecorder, type ChangeRecord } from './change-record.js';
import type { Clock, IdSource } from './clock.js';
import type { ConfigWrites } from './config-replica.js';
import type { AdminStore } from './ports.js';
import { scopeTenant, scopeTenantOrAll } from './principal.js';
import type { CommandContext } from './tenant-service.js';

export interface AccountInput {
  id: string;
  tenantId?: string;
  host: string;
  port?: number;
  user?: string | null;
  /** `undefined` keeps the stored password on update; `null` clears it. */
  password?: string | null;
  /** Wins over `useTls` when both are given. */
  tlsMode?: TlsMode;
  /** genro's spelling (tlsModeOfUseTls); null is as good as not given. */
  useTls?: boolean | null;
  tlsRejectUnauthorized?: boolean;
  limitPerMinute?: number | null;
  limitPerHour?: number | null;
  limitPerDay?: number | null;
  limitBehavior?: LimitBehavior;
  maxConnections?: number;
  maxMessagesPerConnection?: number;
  isDefault?: boolean;
  isPec?: boolean;
  /** The account's own IMAP mailbox; omitted fields keep their stored values. */
  imap?: AccountMailboxInput;
  /** The relay's provider and its webhook verification; `undefined` keeps the stored one, `null` clears it. */
  provider?: WebhookSettings | null;
}

/** Submission port for each TLS mode when none is given. */
const DEFAULT_PORT: Record<TlsMode, number> = { implicit: 465, starttls: 587, none: 25 };

export interface AccountServiceDeps {
  store: AdminStore;
  clock: Clock;
  ids: IdSource;
  /**
   * Tells the dispatcher that accounts changed: a saved account (a limit lifted, a paused one
   * fixed, a new relay) is served at once, not at its next wake-up (which may be a day away).
   */
  wake?: () => void;
  /** The connection test of an account's relay; without it the test answers NOT_FOUND. */
  tester?: RelayTester;
  /** What an account is doing: its use of each limit window, and the messages waiting for it. */
  activity?: {
    usage(tenantId: string, accountId: string, now: number): Usage;
    waiting(tenantId: string | null): Array<Pick<QueueCount, 'tenantId' | 'accountId' | 'count'>>;
    /** The relay pools' connections (relay threads are asked). */
    connections?(): Promise<RelayConnections[]>;
    /** Each account's last attempts, kept in memory by the delivery side since the start. */
    attempts?(tenantId: string, accountId: string): AccountAttempts;
  };
}

/** Per limit window: messages sent in it, the limit (null: none) and when the next window starts. */
export type WindowUsage = Record<WindowKind, { used: number; limit: number | null; resetsAt: number }>;

/** What an account is doing now, as far as the daemon tells (AccountServiceDeps.activity). */
export interface AccountActivity {
  usage: WindowUsage;
  waiting: number;
  /** The account's relay connections now; `max` is its max_connections. */
  connections: { open: number; inUse: number; max: number };
  /** Absent when the delivery side keeps no attempt log. */
  attempts?: AccountAttempts;
}

/**
 * An account read for people: the account itself (its secrets still in it: an edge
 * shows it through a view that redacts them) and its activity, null when not told.
 */
export interface AccountState {
  account: Account;
  activity: AccountActivity | null;
}

export function createAccountService(deps: AccountServiceDeps) {
  const { store, clock, ids } = deps;

  /** Each account with its window usage, waiting messages, connections and last attempts when the daemon tells them. */
  const withActivity = async (accounts: Account[], tenantId: string | null): Promise<AccountState[]> => {
    const activity = deps.activity;
    if (activity === undefined) return accounts.map((account) => ({ account, activity: null }));
    const pools = new Map(((await activity.connections?.()) ?? []).map((pool) => [`${pool.tenantId}/${pool.accountId}`, pool]));
    const now = clock.now();
    const waiting = new Map<string, number>();
    for (const row of activity.waiting(tenantId)) {
      const key = `${row.tenantId}/${row.accountId}`;
      waiting.set(key, (waiting.get(key) ?? 0) + row.count);
    }
    return accounts.map((account) => {
      const used = activity.usage(account.tenantId, account.id, now);
      const limits: Record<WindowKind, number | null> = { minute: account.limitPerMinute, hour: account.limitPerHour, day: account.limitPerDay };
      const usage = Object.fromEntries(
        WINDOW_KINDS.map((kind) => [
          kind,
          {
            used: used[kind],
            limit: limits[kind],
            resetsAt: windowStart(kind, now) + WINDOW_MS[kind],
          },
        ]),
      ) as WindowUsage;
      const key = `${account.tenantId}/${account.id}`;
      const pool = pools.get(key);
      const attempts = activity.attempts?.(account.tenantId, account.id);
      return {
        account,
        activity: {
          usage,
          waiting: waiting.get(key) ?? 0,
          connections: { open: pool?.open ?? 0, inUse: pool?.inUse ?? 0, max: account.maxConnections },
          ...(attempts === undefined ? {} : { attempts }),
        },
      };
    });
  };

  const requireTenant = (tenantId: string): void => {
    if (store.tenants.get(tenantId) === null) throw notFound('tenant', tenantId);
  };

  const load = (tenantId: string, id: string): Account => {
    const account = store.accounts.get(tenantId, id);
    if (account === null) throw notFound('account', id);
    return account;
  };

  const change = (
    ctx: CommandContext,
    command: string,
    eventType: string,
    account: { tenantId: string; id: string },
    data: Record<string, unknown>,
  ): ChangeRecord =>
    changeRecorder(ctx, { now: () => clock.now(), uuid: () => ids.uuid() })({
      command,
      eventType,
      tenantId: account.tenantId,
      aggregateType: 'account',
      aggregateId: `${account.tenantId}/${account.id}`,
      data,
    });

  /**
   * The TLS mode the input asks for: `tls_mode` when given, else genro's `use_tls`. With
   * neither, port 465 means implicit TLS (as in genro); otherwise the stored mode stays,
   * and a new account requires STARTTLS (genro would connect in plain text: we send the
   * relay's credentials in the clear only when told so).
   */
  const tlsModeOf = (input: AccountInput, current: Account | null): TlsMode => {
    const port = input.port ?? current?.port ?? null;
    if (input.tlsMode !== undefined) return input.tlsMode;
    if (input.useTls !== undefined && input.useTls !== null) return tlsModeOfUseTls(input.useTls, port);
    if (input.port === IMPLICIT_TLS_PORT) return 'implicit';
    return current?.tlsMode ?? (port === IMPLICIT_TLS_PORT ? 'implicit' : 'starttls');
  };

  /** `others`: the tenant's accounts before the save (the first one becomes the default). */
  const merge = (input: AccountInput, tenantId: string, current: Account | null, others: readonly AccountChoice[], now: number): Account => {
    const tlsMode = tlsModeOf(input, current);
    return {
      tenantId,
      id: input.id,
      host: input.host,
      port: input.port ?? current?.port ?? DEFAULT_PORT[tlsMode],
      user: input.user !== undefined ? input.user : (current?.user ?? null),
      password: input.password !== undefined ? input.password : (current?.password ?? null),
      tlsMode,
      tlsRejectUnauthorized: input.tlsRejectUnauthorized ?? current?.tlsRejectUnauthorized ?? true,
      limitPerMinute: input.limitPerMinute !== undefined ? input.limitPerMinute : (current?.limitPerMinute ?? null),
      limitPerHour: input.limitPerHour !== undefined ? input.limitPerHour : (current?.limitPerHour ?? null),
      limitPerDay: input.limitPerDay !== undefined ? input.limitPerDay : (current?.limitPerDay ?? null),
      limitBehavior: input.limitBehavior ?? current?.limitBehavior ?? 'defer',
      maxConnections: input.maxConnections ?? current?.maxConnections ?? 5,
      maxMessagesPerConnection: input.maxMessagesPerConnection ?? current?.maxMessagesPerConnection ?? 100,
      isDefault: isDefaultOnSave(input.isDefault, current?.isDefault, others),
      // Clearing isPec keeps the mailbox: harmless (it is not watched) and ready if it is set again.
      isPec: input.isPec ?? current?.isPec ?? false,
      imap: mergeMailbox(input.imap ?? {}, current?.imap ?? null),
      provider: input.provider !== undefined ? input.provider : (current?.provider ?? null),
      // Saving the account is the operator's fix for whatever paused it: try again.
      pausedAt: null,
      pausedReason: null,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
    };
  };

  /**
   * The tenant's former default loses its mark as a change of its own, recorded and
   * mirrored like any (the store would clear it anyway, but silently).
   */
  const unmarkOtherDefaults = (ctx: CommandContext, tenantId: string, others: readonly AccountChoice[], now: number): void => {
    for (const other of others) {
      if (!other.isDefault) continue;
      const former = store.accounts.get(tenantId, other.id);
      if (former === null) continue;
      const unmarked = { ...former, isDefault: false, updatedAt: now };
      store.accounts.save(unmarked);
      store.changes.record(change(ctx, 'account.upsert', 'account.updated', unmarked, { account: viewAccount(unmarked) }));
    }
  };

  return {
    ...accountRelayActions(deps),

    /**
     * Insert or update; answers the account saved, whether it was created, and what the
     * save did to the tenant's default account (defaultWarnings). Marking an account the
     * default clears the mark on the tenant's others in the same transaction.
     */
    upsert(ctx: CommandContext, input: AccountInput): { account: Account; created: boolean; warnings: AccountWarning[] } {
      const tenantId = scopeTenant(ctx.principal, input.tenantId);
      const saved = store.transaction(() => {
        requireTenant(tenantId);
        const current = store.accounts.get(tenantId, input.id);
        const before = store.accounts.choices(tenantId);
        const others = before.filter((choice) => choice.id !== input.id);
        const account = merge(input, tenantId, current, others, clock.now());
        checkPecAccount(account);
        if (account.isDefault) unmarkOtherDefaults(ctx, tenantId, others, account.updatedAt);
        store.accounts.save(account);
        const eventType = current === null ? 'account.created' : 'account.updated';
        store.changes.record(change(ctx, 'account.upsert', eventType, account, { account: viewAccount(account) }));
        return { account, created: current === null, warnings: defaultWarnings(tenantId, before, store.accounts.choices(tenantId)) };
      });
      deps.wake?.();
      return saved;
    },

    async list(ctx: CommandContext, tenantId: string | undefined): Promise<AccountState[]> {
      // The admin token may list every account; a tenant key only its own.
      const scoped = scopeTenantOrAll(ctx.principal, tenantId);
      if (scoped !== null) requireTenant(scoped);
      return withActivity(store.accounts.list(scoped), scoped);
    },

    async get(ctx: CommandContext, tenantId: string | undefined, id: string): Promise<AccountState> {
      const scoped = scopeTenant(ctx.principal, tenantId);
      return (await withActivity([load(scoped, id)], scoped))[0] as AccountState;
    },

    /** Deletes; answers what that did to the tenant's default account (deleting the default leaves none). */
    delete(ctx: CommandContext, tenantId: string | undefined, id: string, options: { force: boolean }): { warnings: AccountWarning[] } {
      const scoped = scopeTenant(ctx.principal, tenantId);
      const outcome = store.transaction(() => {
        const account = load(scoped, id);
        const pending = store.accounts.countPendingMessages(scoped, id);
        if (pending > 0 && !options.force) {
          throw new AppError('CONFLICT', 'account has messages not yet delivered; pass force=true to delete them too', {
            details: { account_id: id, pending_messages: pending },
          });
        }
        const before = store.accounts.choices(scoped);
        store.accounts.delete(scoped, id);
        store.changes.record(change(ctx, 'account.delete', 'account.deleted', account, { account_id: id, forced: options.force, pending_messages: pending }));
        return { warnings: defaultWarnings(scoped, before, store.accounts.choices(scoped)) };
      });
      // What watched or served the account lets go of it now, not at its next check.
      deps.wake?.();
      return outcome;
    },
  };
}

/** The writes shared across a fleet (config-replica.ts): they may wait for it. */
export const SHARED_ACCOUNT_WRITES = ['upsert', 'delete'] as const;
export type AccountService = ConfigWrites<ReturnType<typeof createAccountService>, (typeof SHARED_ACCOUNT_WRITES)[number]>;
