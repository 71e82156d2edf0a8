/**
 * The mirror's event bodies, encoded by SQLite (store/mirror-store.ts), must be exactly the bytes
 * that core/contracts/event.ts `eventBody` writes for the same row: the stream's consumers read
 * one contract, whoever encodes it.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { eventBody } from '../../src/core/contracts/event.js';
import type { OutboxRow } from '../../src/core/events/mirror.js';
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
const anyRow: fc.Arbitrary<Insert> = fc.record({
  event_type: fc.constantFrom(
    'message.queued',
    'message.sending',
    'message.sent',
    'message.deferred',
    'message.bounced',
    'tenant.created',
  ),
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
/** A bounce's payload says its type, as the bounce writers' do (store/message-bounces.ts), or (an older row) not. */
const row: fc.Arbitrary<Insert> = fc
  .tuple(anyRow, fc.constantFrom('hard', 'soft', undefined))
  .map(([r, bounceType]) =>
    r.event_type === 'message.bounced' && bounceType !== undefined
      ? { ...r, payload: JSON.stringify({ ...JSON.parse(r.payload ?? '{}'), bounce_type: bounceType }) }
      : r,
  );
/** What the mirror reads of a row for its latest state besides the contract's fields: a bounce's type. */
const bounceTypeOf = (r: Insert): string | null => {
  if (r.event_type !== 'message.bounced' || r.payload === null) return null;
  const value: unknown = (JSON.parse(r.payload) as Record<string, unknown>)['bounce_type'];
  return value === 'hard' || value === 'soft' ? value : null;
};

/** The row as the outbox holds it, in the contract's names. */
const outboxRow = (seq: number, id: string, r: Insert): OutboxRow => ({
  seq,
  id,
  eventType: r.event_type,
  eventVersion: r.event_version,
  tenantId: 'acme',
  messagePk: r.message_pk,
  messageId: r.message_id,
  accountId: r.account_id,
  batchCode: r.batch_code,
  attempt: r.attempt,
  replyCode: r.reply_code,
  enhancedStatus: r.enhanced_status,
  text: r.text,
  payload: r.payload,
  occurredAt: r.occurred_at,
  correlationId: r.correlation_id,
});
const pick = ({ seq, id, eventType, tenantId, messagePk, messageId, occurredAt }: OutboxRow) => ({
  seq,
  id,
  eventType,
  tenantId,
  messagePk,
  messageId,
  occurredAt,
});

function storeWith() {
  const opened = openTestStore(cleanups);
  opened.store.mirror.turnOn();
  let next = 0;
  /** Written through a connection of its own, as the store's writers' rows would be read back. */
  const insert = (rows: Insert[]): string[] => {
    const db = new Database(opened.path);
    const statement =
      db.prepare(`INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, event_version, tenant_id, message_pk, message_id,
      account_id, batch_code, attempt, reply_code, enhanced_status, text, payload, occurred_at, correlation_id)
      VALUES (@id, 'message', 'a', @event_type, @event_version, 'acme', @message_pk, @message_id, @account_id, @batch_code, @attempt,
      @reply_code, @enhanced_status, @text, @payload, @occurred_at, @correlation_id)`);
    try {
      return rows.map((r) => {
        const id = `ev-${(next += 1)}`;
        statement.run({ ...r, id });
        return id;
      });
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
        const ids = insert(rows);
        const pending = store.mirror.pending(1000);
        // Past them before asserting, so that a failed run leaves nothing for the next (a clean counterexample).
        const last = pending.at(-1);
        if (last !== undefined) store.mirror.advance(last.seq, 0);
        expect(pending.map((event) => event.id)).toEqual(ids);
        pending.forEach((event, index) => {
          const written = outboxRow(event.seq, event.id, rows[index] as Insert);
          expect({ ...event, body: undefined }).toEqual({
            ...pick(written),
            bounceType: bounceTypeOf(rows[index] as Insert),
            body: undefined,
          });
          expect(Buffer.from(event.body).toString('utf8')).toBe(eventBody(written));
        });
      }),
      { numRuns: 60 },
    );
  });
});
