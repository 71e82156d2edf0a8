/**
 * Account administration use-cases. A tenant key manages its own tenant's
 * accounts; the admin token manages anyone's. Writes are audited and mirrored
 * (account-writes.ts); reads carry what the account is doing (account-activity.ts).
 */
import { accountLookup } from './account-lookup.js';
import { accountActivityReader, type AccountActivitySource, type AccountState } from './account-activity.js';
import { accountRelayActions, type RelayTester } from './account-relay-actions.js';
import { accountWrites } from './account-writes.js';
import type { Clock, IdSource } from '../clock.js';
import type { ConfigWrites } from '../fleet/config-replica.js';
import type { AdminStore } from '../ports.js';
import { scopeTenant, scopeTenantOrAll } from '../tenant/principal.js';
import type { CommandContext } from '../tenant/tenant-service.js';

export type { AccountActivity, AccountState } from './account-activity.js';
export type { AccountInput } from './account-input.js';

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
  activity?: AccountActivitySource;
}

export function createAccountService(deps: AccountServiceDeps) {
  const { store, clock } = deps;
  const withActivity = accountActivityReader(deps.activity, clock);

  const { requireTenant, load } = accountLookup(store);

  return {
    ...accountRelayActions(deps),
    ...accountWrites(deps),

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
  };
}

/** The writes shared across a fleet (config-replica.ts): they may wait for it. */
export const SHARED_ACCOUNT_WRITES = ['upsert', 'delete'] as const;
export type AccountService = ConfigWrites<
  ReturnType<typeof createAccountService>,
  (typeof SHARED_ACCOUNT_WRITES)[number]
>;
