/**
 * The queue's suppression check, as intake asks it: one recipient (an SMTP RCPT TO) and
 * several (an HTTP message) must give the same answers, expiry and case included.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const NOW = 1_800_000_000_000;

describe('queue.suppressed', () => {
  it('answers one address and a list alike: active and permanent entries, not expired ones nor other tenants', () => {
    const { store } = openTestStore(cleanups, (admin) => {
      admin
        .prepare(
          `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('other', 'h2', 0, 0, 0)`,
        )
        .run();
    });
    const add = (tenantId: string, address: string, expiresAt: number | null) =>
      store.suppressions.upsert({ tenantId, address, reason: 'r', source: 'bounce', createdAt: 0, expiresAt });
    add('acme', 'gone@example.net', null);
    add('acme', 'later@example.net', NOW + 1);
    add('acme', 'past@example.net', NOW);
    add('other', 'theirs@example.net', null);
    const asked = [
      'Gone@Example.NET',
      'later@example.net',
      'past@example.net',
      'theirs@example.net',
      'fresh@example.net',
    ];
    const each = asked.flatMap((address) => [...store.queue.suppressed('acme', [address], NOW)]);
    expect(each.sort()).toEqual(['gone@example.net', 'later@example.net']);
    expect([...store.queue.suppressed('acme', asked, NOW)].sort()).toEqual(each);
    expect([...store.queue.suppressed('acme', [], NOW)]).toEqual([]);
  });
});
