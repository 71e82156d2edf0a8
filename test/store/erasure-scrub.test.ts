/**
 * The scrub after an erasure (migrations 23 and 24): the erasure answers once its transaction is
 * durable, the erased messages' search terms leave the full-text index right after, a bounded
 * batch at a time, and the index merge and the WAL truncation it owes survive a restart.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { addressDigest } from '../../src/core/index.js';
import { openTestStore, rawMessage, withMainAccount } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

describe('the scrub after an erasure', () => {
  it('takes the erased terms out of the index in batches, then merges it once, and nothing finds them meanwhile', () => {
    const { store, read } = openTestStore(cleanups, withMainAccount);
    store.queue.enqueue(
      [rawMessage('a1', 'ann@example.net'), rawMessage('a2', 'ann@example.net'), rawMessage('b', 'bob@example.net')],
      1,
      null,
    );
    expect(store.search.index(100)).toBe(3);
    const annTerm = `t${addressDigest(store.blindIndex, 'ann@example.net')}`;
    const indexed = () =>
      read<{ pk: number }>(`SELECT rowid AS pk FROM messages_terms WHERE messages_terms MATCH '${annTerm}'`).length;
    const owed = () => read<{ due: number }>(`SELECT scrub_due AS due FROM search_state`)[0]?.due;
    const byRecipient = (recipient: string) =>
      store.search
        .find({
          tenantId: 'acme',
          status: null,
          accountId: null,
          batchCode: null,
          recipient,
          sender: null,
          createdFrom: null,
          createdTo: null,
          priority: null,
          text: null,
          order: 'newest',
          limit: 10,
          after: null,
        })
        .messages.map((found) => found.clientId);

    const erased = store.erasure.erase({ kind: 'address', tenantId: 'acme', address: 'ann@example.net' }, 2, null);
    expect(erased.messages).toBe(2);
    // Answered: the terms are still in the index, owed to the scrub, and no search finds them.
    expect([indexed(), owed()]).toEqual([2, 2]);
    expect(byRecipient('ann@example.net')).toEqual([]);
    expect(byRecipient('bob@example.net')).toEqual(['b']);
    // GET /status tells what is left: the scrub, the two messages' terms, their shredded bodies.
    expect(store.erasure.pending()).toEqual({ scrubOwed: true, searchTerms: 2, shreddedBodies: 2 });

    // A batch of one: the merge waits for the last.
    expect(store.erasure.scrub(1)).toBe(1);
    expect([indexed(), owed()]).toEqual([1, 2]);
    expect(store.erasure.scrub(1)).toBe(1);
    expect(store.erasure.scrub(1)).toBe(0);
    expect([indexed(), owed()]).toEqual([0, 0]);
    // The scrub done; the bodies' bytes (unreadable) wait for retention.
    expect(store.erasure.pending()).toEqual({ scrubOwed: false, searchTerms: 0, shreddedBodies: 2 });
    expect(
      read(`SELECT t.pk FROM message_search_terms t JOIN messages m ON m.pk = t.pk WHERE m.erased_at IS NOT NULL`),
    ).toEqual([]);
    expect(read(`SELECT pk FROM erased_search_terms`)).toEqual([]);
    // Bob's terms stay.
    expect(byRecipient('bob@example.net')).toEqual(['b']);
  });

  it('owes only the WAL for an erasure that took no message, and nothing at all when none came', () => {
    const { store, read } = openTestStore(cleanups, withMainAccount);
    const owed = () => read<{ due: number }>(`SELECT scrub_due AS due FROM search_state`)[0]?.due;
    expect(store.erasure.scrub(10)).toBe(0);
    expect(owed()).toBe(0);
    store.erasure.erase({ kind: 'address', tenantId: 'acme', address: 'nobody@example.net' }, 2, null);
    expect(owed()).toBe(1);
    expect(store.erasure.scrub(10)).toBe(0);
    expect(owed()).toBe(0);
  });

  it('takes no write lock when nothing is owed (it runs every half second on an idle daemon)', () => {
    const { store, path } = openTestStore(cleanups, withMainAccount);
    const writer = new Database(path);
    writer.pragma('busy_timeout = 0');
    writer.exec('BEGIN IMMEDIATE');
    try {
      // With the write lock held elsewhere, a write transaction would fail (the store cannot write right now).
      expect(store.erasure.scrub(10)).toBe(0);
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });

  it('stays owed while another connection holds the WAL on an older snapshot, and finishes once it lets go', () => {
    const { store, read, path } = openTestStore(cleanups, withMainAccount);
    store.queue.enqueue([rawMessage('a1', 'ann@example.net')], 1, null);
    const owed = () => read<{ due: number }>(`SELECT scrub_due AS due FROM search_state`)[0]?.due;
    // A reader whose snapshot is from before the erasure: the WAL frames it reads cannot be truncated.
    const reader = new Database(path, { readonly: true });
    try {
      reader.exec('BEGIN');
      reader.prepare('SELECT count(*) FROM messages').get();
      store.erasure.erase({ kind: 'address', tenantId: 'acme', address: 'ann@example.net' }, 2, null);
      const started = Date.now();
      store.erasure.scrub(10);
      // Not done, and not waited for: the next tick tries again.
      expect(owed()).toBe(2);
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(store.erasure.pending().scrubOwed).toBe(true);
      reader.exec('COMMIT');
    } finally {
      reader.close();
    }
    store.erasure.scrub(10);
    expect(owed()).toBe(0);
  });
});
