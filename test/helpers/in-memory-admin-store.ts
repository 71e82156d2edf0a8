/**
 * An in-memory AdminStore for core's unit tests: tenants, accounts and the change
 * log in maps, a transaction that puts everything back when its function throws.
 * Only the port's behaviour that core relies on; the real one is tested in test/store.
 */
import { AppError } from '../../src/core/app-error.js';
import type { Account, AccountChoice } from '../../src/core/account/account.js';
import type { ChangeRecord } from '../../src/core/events/change-record.js';
import type { AdminStore } from '../../src/core/ports.js';
import type { Tenant } from '../../src/core/tenant/tenant.js';

export interface InMemoryAdminStore extends AdminStore {
  /** Every change recorded by a committed transaction, in order. */
  readonly recorded: ChangeRecord[];
  /** The stored API key digest of each tenant. */
  readonly keyHashes: Map<string, string>;
  /** Messages not yet handed off, by tenant id or `tenant/account`. */
  readonly pending: Map<string, number>;
}

export function inMemoryAdminStore(): InMemoryAdminStore {
  let tenants = new Map<string, Tenant>();
  let accounts = new Map<string, Account>();
  let recorded: ChangeRecord[] = [];
  let keyHashes = new Map<string, string>();
  let version = 0;
  const key = (tenantId: string, id: string): string => `${tenantId}/${id}`;
  const pending = new Map<string, number>();

  const store: InMemoryAdminStore = {
    get recorded() {
      return recorded;
    },
    get keyHashes() {
      return keyHashes;
    },
    pending,
    transaction<T>(fn: () => T): T {
      const saved = {
        tenants: new Map(tenants),
        accounts: new Map(accounts),
        recorded: [...recorded],
        keyHashes: new Map(keyHashes),
      };
      try {
        return fn();
      } catch (error) {
        ({ tenants, accounts, recorded, keyHashes } = saved);
        throw error;
      }
    },
    commitGroup: <T>(fn: () => T): Promise<T> => Promise.resolve(store.transaction(fn)),
    tenants: {
      get: (id) => tenants.get(id) ?? null,
      isActive: (id) => tenants.get(id)?.active ?? null,
      routes: (id) => tenants.get(id)?.routes ?? [],
      list: () => [...tenants.values()],
      insert(tenant, hash) {
        tenants.set(tenant.id, tenant);
        keyHashes.set(tenant.id, hash);
      },
      update(tenant) {
        tenants.set(tenant.id, tenant);
      },
      replaceApiKey(id, hash, createdAt, expiresAt) {
        keyHashes.set(id, hash);
        const tenant = tenants.get(id);
        if (tenant !== undefined)
          tenants.set(id, { ...tenant, apiKeyCreatedAt: createdAt, apiKeyExpiresAt: expiresAt });
      },
      delete(id) {
        tenants.delete(id);
        keyHashes.delete(id);
        for (const [accountKey, account] of accounts) if (account.tenantId === id) accounts.delete(accountKey);
      },
      findKeyHolder(hash) {
        const holder = [...keyHashes].find(([, stored]) => stored === hash)?.[0];
        return holder === undefined
          ? null
          : { tenantId: holder, apiKeyExpiresAt: tenants.get(holder)?.apiKeyExpiresAt ?? null };
      },
      countPendingMessages: (id) => pending.get(id) ?? 0,
    },
    accounts: {
      get: (tenantId, id) => accounts.get(key(tenantId, id)) ?? null,
      list: (tenantId) =>
        [...accounts.values()].filter((account) => tenantId === null || account.tenantId === tenantId),
      choices: (tenantId): AccountChoice[] =>
        store.accounts.list(tenantId).map(({ id, isDefault }) => ({ id, isDefault })),
      version: () => String(version),
      pecMailboxes: () => [],
      save(account) {
        if (account.isDefault) {
          for (const [other, stored] of accounts)
            if (stored.tenantId === account.tenantId) accounts.set(other, { ...stored, isDefault: false });
        }
        accounts.set(key(account.tenantId, account.id), account);
        version += 1;
      },
      delete(tenantId, id) {
        accounts.delete(key(tenantId, id));
        version += 1;
      },
      countPendingMessages: (tenantId, id) => pending.get(key(tenantId, id)) ?? 0,
    },
    changes: {
      record(change) {
        recorded.push(change);
      },
    },
  };
  return store;
}

/** The AppError `fn` throws; anything else it throws, or nothing thrown, fails the test. */
export const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
};
