/**
 * An account as a command finds it: a tenant or an account that is not there is a not-found
 * error, the same answer whichever part of the account service asks.
 */
import type { Account } from './account.js';
import { notFound } from '../app-error.js';
import type { AdminStore } from '../ports.js';

export function accountLookup(store: Pick<AdminStore, 'tenants' | 'accounts'>) {
  return {
    requireTenant(tenantId: string): void {
      if (store.tenants.get(tenantId) === null) throw notFound('tenant', tenantId);
    },
    load(tenantId: string, id: string): Account {
      const account = store.accounts.get(tenantId, id);
      if (account === null) throw notFound('account', id);
      return account;
    },
  };
}
