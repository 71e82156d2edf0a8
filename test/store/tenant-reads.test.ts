/**
 * The tenant repository keeps the tenants it read (store/tenant-repository.ts): what it answers
 * must still be what is committed, whoever wrote it, and never what a rolled-back write left.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

describe('tenant reads', () => {
  it('answer what is committed: after a write of ours, after another connection’s, never a rolled-back one', () => {
    const { store, path } = openTestStore(cleanups);
    const first = store.tenants.get('acme');
    expect(first?.name).toBeNull();
    expect(store.tenants.get('acme')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);

    store.tenants.update({ ...(first as NonNullable<typeof first>), name: 'Acme', updatedAt: 1 });
    expect(store.tenants.get('acme')?.name).toBe('Acme');

    const other = new Database(path);
    try {
      other.prepare(`UPDATE tenants SET name = 'Acme by another hand' WHERE id = 'acme'`).run();
    } finally {
      other.close();
    }
    expect(store.tenants.get('acme')?.name).toBe('Acme by another hand');

    const before = store.tenants.get('acme') as NonNullable<ReturnType<typeof store.tenants.get>>;
    expect(() =>
      store.transaction(() => {
        store.tenants.update({ ...before, name: 'never committed', updatedAt: 2 });
        expect(store.tenants.get('acme')?.name).toBe('never committed');
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    expect(store.tenants.get('acme')?.name).toBe('Acme by another hand');

    store.tenants.delete('acme');
    expect(store.tenants.get('acme')).toBeNull();
  });
});
