/**
 * Account writes: upsert and delete, in one transaction each with their audit records,
 * and the dispatcher woken after. Part of the account service (account-service.ts).
 */
import { accountLookup } from './account-lookup.js';
import type { Account, AccountChoice } from './account.js';
import { mergeAccount, type AccountInput } from './account-input.js';
import { checkDestinations, checkFallbacks } from './account-fallbacks.js';
import { checkPecAccount } from './account-mailbox.js';
import { AppError } from '../app-error.js';
import { changeRecorder, type ChangeRecord } from '../events/change-record.js';
import type { Clock, IdSource } from '../clock.js';
import { viewAccount } from '../contracts/account.js';
import { defaultWarnings, type AccountWarning } from './default-account.js';
import type { AdminStore } from '../ports.js';
import { scopeTenant } from '../tenant/principal.js';
import type { CommandContext } from '../tenant/tenant-service.js';

interface AccountWriteDeps {
  store: AdminStore;
  clock: Clock;
  ids: IdSource;
  wake?: () => void;
}

export function accountWrites(deps: AccountWriteDeps) {
  const { store, clock } = deps;

  const { requireTenant, load } = accountLookup(store);

  const change = accountChange(deps);

  return {
    /**
     * Insert or update; answers the account saved, whether it was created, and what the
     * save did to the tenant's default account (defaultWarnings). Marking an account the
     * default clears the mark on the tenant's others in the same transaction.
     */
    upsert(
      ctx: CommandContext,
      input: AccountInput,
    ): { account: Account; created: boolean; warnings: AccountWarning[] } {
      const tenantId = scopeTenant(ctx.principal, input.tenantId);
      const saved = store.transaction(() => {
        requireTenant(tenantId);
        const current = store.accounts.get(tenantId, input.id);
        const before = store.accounts.choices(tenantId);
        const others = before.filter((choice) => choice.id !== input.id);
        const account = mergeAccount(input, tenantId, current, others, clock.now());
        checkPecAccount(account);
        checkFallbacks(account, (id) => store.accounts.get(tenantId, id));
        checkDestinations(account);
        if (account.isDefault) unmarkOtherDefaults(store, change, ctx, tenantId, others, account.updatedAt);
        store.accounts.save(account);
        const eventType = current === null ? 'account.created' : 'account.updated';
        store.changes.record(change(ctx, 'account.upsert', eventType, account, { account: viewAccount(account) }));
        return {
          account,
          created: current === null,
          warnings: defaultWarnings(tenantId, before, store.accounts.choices(tenantId)),
        };
      });
      deps.wake?.();
      return saved;
    },

    /** Deletes; answers what that did to the tenant's default account (deleting the default leaves none). */
    delete(
      ctx: CommandContext,
      tenantId: string | undefined,
      id: string,
      options: { force: boolean },
    ): { warnings: AccountWarning[] } {
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
        store.changes.record(
          change(ctx, 'account.delete', 'account.deleted', account, {
            account_id: id,
            forced: options.force,
            pending_messages: pending,
          }),
        );
        return { warnings: defaultWarnings(scoped, before, store.accounts.choices(scoped)) };
      });
      // What watched or served the account lets go of it now, not at its next check.
      deps.wake?.();
      return outcome;
    },
  };
}

type AccountChange = (
  ctx: CommandContext,
  command: string,
  eventType: string,
  account: { tenantId: string; id: string },
  data: Record<string, unknown>,
) => ChangeRecord;

/** The audit record of a change to an account. */
function accountChange({ clock, ids }: Pick<AccountWriteDeps, 'clock' | 'ids'>): AccountChange {
  return (ctx, command, eventType, account, data) =>
    changeRecorder(ctx, { now: () => clock.now(), uuid: () => ids.uuid() })({
      command,
      eventType,
      tenantId: account.tenantId,
      aggregateType: 'account',
      aggregateId: `${account.tenantId}/${account.id}`,
      data,
    });
}

/**
 * The tenant's former default loses its mark as a change of its own, recorded and
 * mirrored like any (the store would clear it anyway, but silently).
 */
function unmarkOtherDefaults(
  store: AdminStore,
  change: AccountChange,
  ctx: CommandContext,
  tenantId: string,
  others: readonly AccountChoice[],
  now: number,
): void {
  for (const other of others) {
    if (!other.isDefault) continue;
    const former = store.accounts.get(tenantId, other.id);
    if (former === null) continue;
    const unmarked = { ...former, isDefault: false, updatedAt: now };
    store.accounts.save(unmarked);
    store.changes.record(
      change(ctx, 'account.upsert', 'account.updated', unmarked, { account: viewAccount(unmarked) }),
    );
  }
}
