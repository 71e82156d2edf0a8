/**
 * The mirror's event bodies, encoded by SQLite (store/mirror-store.ts), must be exactly the bytes
 * that core/contracts/event.ts `eventBody` writes for the same row: the stream's consumers read
 * one contract, whoever encodes it.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { eventBody } from '../../src/core/contracts/event.js';
import { openTestStore } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface Insert {
  event_type: string;
  event_version: number;
  message_pk: number | null;
  message_id: string | null;
  account_id: string | null;
  batch_code: string | null;
  attempt: number | null;
  reply_code: number | null;
  enhanced_status: string | null;
  text: string | null;
  payload: string | null;
  occurred_at: number;
  correlation_id: string | null;
}

const text = fc.string({ unit: 'binary', maxLength: 40 });
const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });
/** What the writers store as `data`: a JSON object, written by JSON.stringify. */
const payload = fc
  .dictionary(
    fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('text', 'reply_code', 'enhanced_status')),
    fc.oneof(
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.integer()),
    ),
    { maxKeys: 5 },
  )
  .map((data) => JSON.stringify(data));
const row: fc.Arbitrary<Insert> = fc.record({
  event_type: fc.constantFrom('message.queued', 'message.sending', 'message.sent', 'message.deferred', 'tenant.created'),
  event_version: fc.integer({ min: 1, max: 3 }),
  message_pk: nullable(fc.integer({ min: 1, max: 2 ** 40 })),
  message_id: nullable(text),
  account_id: nullable(text),
  batch_code: nullable(text),
  attempt: nullable(fc.integer({ min: 0, max: 100 })),
  reply_code: nullable(fc.integer({ min: 200, max: 599 })),
  enhanced_status: nullable(fc.constantFrom('5.1.1', '4.7.1', '2.0.0')),
  text: nullable(text),
  payload: nullable(payload),
  occurred_at: fc.integer({ min: 0, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) }),
  correlation_id: nullable(text),
});

function storeWith() {
  const opened = openTestStore(cleanups);
  opened.store.mirror.turnOn();
  let next = 0;
  /** Written through a connection of its own, as the store's writers' rows would be read back. */
  const insert = (rows: Insert[]) => {
    const db = new Database(opened.path);
    const statement = db.prepare(`INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, event_version, tenant_id, message_pk, message_id,
      account_id, batch_code, attempt, reply_code, enhanced_status, text, payload, occurred_at, correlation_id)
      VALUES (@id, 'message', 'a', @event_type, @event_version, 'acme', @message_pk, @message_id, @account_id, @batch_code, @attempt,
      @reply_code, @enhanced_status, @text, @payload, @occurred_at, @correlation_id)`);
    try {
      for (const r of rows) statement.run({ ...r, id: `ev-${(next += 1)}` });
    } finally {
      db.close();
    }
  };
  return { ...opened, insert };
}

describe('mirror event bodies encoded by SQLite', () => {
  it('are the bytes eventBody writes, for rows of every shape', () => {
    const { store, insert } = storeWith();
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 20 }), (rows) => {
        insert(rows);
        const pending = store.mirror.pending(1000);
        // Past them before asserting, so that a failed run leaves nothing for the next (a clean counterexample).
        const last = pending.at(-1);
        if (last !== undefined) store.mirror.advance(last.seq, 0);
        expect(pending).toHaveLength(rows.length);
        for (const event of pending) expect(Buffer.from(event.body).toString('utf8')).toBe(eventBody(event));
      }),
      { numRuns: 60 },
    );
  });
});
