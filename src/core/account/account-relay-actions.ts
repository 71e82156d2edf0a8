/**
 * What an operator does about an account's relay: test the connection (EHLO, STARTTLS,
 * AUTH, QUIT; nothing sent) and resume an account that a relay failure paused. Part of
 * the account service (account-service.ts), which hands its store and scoping in.
 */
import { accountLookup } from './account-lookup.js';
import type { Account } from './account.js';
import { notFound } from '../app-error.js';
import { changeRecorder } from '../events/change-record.js';
import type { Clock, IdSource } from '../clock.js';
import type { ConnectionTestResult } from './connection-test.js';
import { viewAccount } from '../contracts/account.js';
import type { AdminStore } from '../ports.js';
import { scopeTenant } from '../tenant/principal.js';
import type { CommandContext } from '../tenant/tenant-service.js';

/** Holds the test conversation with the account's relay (delivery/relay-probe.ts); never throws. */
export type RelayTester = (account: Account, options: { timeoutMs?: number }) => Promise<ConnectionTestResult>;

export interface AccountRelayDeps {
  store: AdminStore;
  clock: Clock;
  ids: IdSource;
  wake?: () => void;
  tester?: RelayTester;
}

export function accountRelayActions(deps: AccountRelayDeps) {
  const { store, clock, ids } = deps;

  const { load } = accountLookup(store);

  return {
    /** The connection test with the stored settings and credentials; a failure is in the result, not thrown. */
    async test(
      ctx: CommandContext,
      tenantId: string | undefined,
      id: string,
      options: { timeoutMs?: number } = {},
    ): Promise<ConnectionTestResult> {
      const account = load(scopeTenant(ctx.principal, tenantId), id);
      if (deps.tester === undefined) throw notFound('connection test', id);
      return deps.tester(account, options);
    },

    /**
     * Clears the pause and wakes the dispatcher: its waiting mail is tried again now. Answers
     * the account and whether it was paused (resuming an account that runs changes nothing).
     */
    resume(ctx: CommandContext, tenantId: string | undefined, id: string): { account: Account; resumed: boolean } {
      const scoped = scopeTenant(ctx.principal, tenantId);
      const result = store.transaction(() => {
        const current = load(scoped, id);
        if (current.pausedAt === null) return { account: current, resumed: false };
        const account: Account = { ...current, pausedAt: null, pausedReason: null, updatedAt: clock.now() };
        store.accounts.save(account);
        store.changes.record(
          changeRecorder(ctx, { now: () => clock.now(), uuid: () => ids.uuid() })({
            command: 'account.resume',
            eventType: 'account.resumed',
            tenantId: scoped,
            aggregateType: 'account',
            aggregateId: `${scoped}/${id}`,
            data: { account: viewAccount(account), paused_reason: current.pausedReason },
          }),
        );
        return { account, resumed: true };
      });
      if (result.resumed) deps.wake?.();
      return result;
    },
  };
}
