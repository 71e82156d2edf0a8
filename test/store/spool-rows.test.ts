// The fleet spool's entries as SQLite encodes them (store/spool-rows.ts) against a real database: each
// must read back, on the adopting node, exactly as the drain's transfer record of the same row.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StoredTransfer } from '../../src/core/fleet/drain.js';
import {
  createSqliteMessageTransfer,
  TRANSFER_COLUMNS,
  transferReader,
  type TransferRow,
} from '../../src/store/message-transfer.js';
import { loadMigrations, migrate } from '../../src/store/migrations.js';
import { createSqliteBodyObjectRows } from '../../src/store/body-object-rows.js';
import { createSqliteSpoolRows } from '../../src/store/spool-rows.js';

function database() {
  const db = new Database(':memory:');
  migrate(db, loadMigrations());
  db.prepare(
    `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 1, 1, 1)`,
  ).run();
  const insert =
    db.prepare(`INSERT INTO messages (tenant_id, id, account_id, priority, batch_code, source, payload, raw, spool_id, body_key, body_object,
      mail_from, rcpt_to, subject, message_id_header, size_bytes, state, attempts, next_attempt_at, created_at, updated_at, deferred_at, deferred_reason)
    VALUES (@tenant_id, @id, 'main', @priority, @batch_code, @source, @payload, @raw, @spool_id, @body_key, @body_object, @mail_from, @rcpt_to,
      @subject, @message_id_header, @size_bytes, @state, @attempts, @next_attempt_at, @created_at, @created_at, @deferred_at, @deferred_reason) RETURNING pk`);
  const spool = (parts: Buffer[]): number => {
    const id = Number(db.prepare(`INSERT INTO spools (created_at) VALUES (1)`).run().lastInsertRowid);
    parts.forEach((bytes, seq) =>
      db.prepare(`INSERT INTO spool_parts (spool_id, seq, bytes) VALUES (?, ?, ?)`).run(id, seq, bytes),
    );
    return id;
  };
  const add = (row: Record<string, unknown>): number =>
    (insert.get({ tenant_id: 'acme', body_key: null, body_object: null, ...row }) as { pk: number }).pk;
  const rows = createSqliteSpoolRows(db, () => {});
  // What the adopter reads back, against what the drain's transfer (JavaScript) makes of the same row.
  const asTransfer = transferReader(db);
  const read = db.prepare<[number], TransferRow>(`SELECT ${TRANSFER_COLUMNS} FROM messages WHERE pk = ?`);
  const expected = (pk: number): StoredTransfer => {
    const transfer = asTransfer(read.get(pk) as TransferRow);
    // The transfer's type does not know 'sending', but the row holds it: the spool reads it as queued.
    return (transfer.state as string) === 'sending' ? { ...transfer, state: 'queued' } : transfer;
  };
  const entryOf = (pk: number): unknown => {
    const bytes = rows.entriesOf([pk]).get(pk);
    return bytes === null || bytes === undefined ? bytes : JSON.parse(Buffer.from(bytes).toString('utf8'));
  };
  return { db, add, spool, rows, expected, entryOf };
}

const base = {
  priority: 2,
  batch_code: null,
  payload: null,
  raw: null,
  spool_id: null,
  subject: null,
  message_id_header: null,
  size_bytes: 10,
  state: 'queued',
  attempts: 0,
  next_attempt_at: 1_700_000_000_123,
  created_at: 1_700_000_000_000,
  deferred_at: null,
  deferred_reason: null,
  mail_from: 'a@example.com',
  rcpt_to: '["b@example.org"]',
};

describe('spool entries encoded by SQLite', () => {
  it('reads back as the transfer of the same row: HTTP, SMTP, a spooled SMTP submission, a send in progress', () => {
    const { add, spool, expected, entryOf } = database();
    const http = add({
      ...base,
      id: 'h1',
      source: 'http',
      payload: JSON.stringify({ subject: 'Café "quoted"\n', body: 'ü\u2028\u0000 é' }),
      batch_code: 'b',
      subject: 'Café',
    });
    const smtp = add({
      ...base,
      id: 's1',
      source: 'smtp',
      raw: Buffer.from('Subject: x\r\n\r\n\u00ff body\r\n', 'latin1'),
      state: 'deferred',
      deferred_at: 5,
      deferred_reason: 'later',
    });
    const spooled = add({
      ...base,
      id: 's2',
      source: 'smtp',
      spool_id: spool([Buffer.from('first part '), Buffer.from([0, 255, 10, 13])]),
    });
    const sending = add({ ...base, id: 's3', source: 'http', payload: '{}', state: 'sending', attempts: 2 });
    for (const pk of [http, smtp, spooled, sending]) expect(entryOf(pk)).toEqual(expected(pk));
    expect((entryOf(sending) as StoredTransfer).state).toBe('queued');
  });

  it('answers null for a message that no longer waits, and for one that is not there', () => {
    const { add, rows } = database();
    const sent = add({ ...base, id: 'x', source: 'http', payload: '{}', state: 'sent' });
    const entries = rows.entriesOf([sent, 999]);
    expect(entries.get(sent)).toBeNull();
    expect(entries.get(999)).toBeNull();
  });

  it('encodes any text the columns can hold as JSON.stringify would (property)', () => {
    const { add, expected, entryOf } = database();
    let n = 0;
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.option(fc.string({ unit: 'grapheme' })),
        fc.uint8Array({ maxLength: 64 }),
        (payload, subject, raw) => {
          n += 1;
          const http = add({ ...base, id: `p${n}`, source: 'http', payload, subject });
          const smtp = add({ ...base, id: `r${n}`, source: 'smtp', raw: Buffer.from(raw), subject });
          expect(entryOf(http)).toEqual(expected(http));
          expect(entryOf(smtp)).toEqual(expected(smtp));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('a body in the S3 store the fleet shares (issue 46)', () => {
  const object = `n1/${'ab'.repeat(16)}`;
  const key = Buffer.from('wrapped data key');
  const listed = (db: Database.Database): unknown[] => db.prepare(`SELECT object FROM object_removals`).pluck().all();

  it('travels as its object and key, not its bytes, and the adopter names the same object', () => {
    const origin = database();
    const pk = origin.add({ ...base, id: 'o1', source: 'http', body_key: key, body_object: object });
    const entry = origin.entryOf(pk) as StoredTransfer;
    expect(entry).toEqual(origin.expected(pk));
    expect(entry.sealed).toEqual({ key: key.toString('base64'), object });

    const peer = database();
    peer.db
      .prepare(
        `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, created_at, updated_at) VALUES ('acme', 'main', 'h', 25, 'none', 1, 1)`,
      )
      .run();
    const adopted = createSqliteMessageTransfer(peer.db, () => {}).adopt({ origin_node: 'n1', ...entry }, 5, 5);
    const row = peer.db
      .prepare(
        `SELECT body_object, body_key, (SELECT count(*) FROM message_bodies) AS bodies FROM messages WHERE pk = ?`,
      )
      .get(adopted.pk);
    expect(row).toEqual({ body_object: object, body_key: key, bodies: 0 });
  });

  it('handed over, its row goes without listing the object for removal; the sweep keeps it while the store holds it', () => {
    const { db, add, rows } = database();
    const objects = createSqliteBodyObjectRows(db);
    const handed = add({ ...base, id: 'o1', source: 'http', body_key: key, body_object: object });
    const own = add({ ...base, id: 'o2', source: 'http', body_key: key, body_object: `n1/${'cd'.repeat(16)}` });
    expect(rows.surrender([{ pk: handed, toNode: 'n2' }], 10)).toBe(1);
    expect(listed(db)).toEqual([]);
    expect(objects.unnamed([object])).toEqual([]);
    // Still in the store, or handed too recently to have been listed: remembered.
    objects.forgetHandedGone([object], 11);
    objects.forgetHandedGone([], 10);
    expect(objects.unnamed([object])).toEqual([]);
    // The peer removed it: forgotten, and an object of that name would be swept.
    objects.forgetHandedGone([], 11);
    expect(objects.unnamed([object])).toEqual([object]);
    // A row deleted that was not handed over lists its object as before.
    db.prepare(`DELETE FROM messages WHERE pk = ?`).run(own);
    expect(listed(db)).toEqual([`n1/${'cd'.repeat(16)}`]);
  });

  it('tells mail whose body a daemon wrote alone from mail whose body a fleet node wrote, its own or adopted', () => {
    const { db, add } = database();
    const objects = createSqliteBodyObjectRows(db);
    add({ ...base, id: 'own', source: 'http', body_key: key, body_object: `n1/${'ab'.repeat(16)}` });
    add({ ...base, id: 'adopted', source: 'http', body_key: key, body_object: `n3/${'cd'.repeat(16)}` });
    add({ ...base, id: 'alone', source: 'http', body_key: key, body_object: 'ef'.repeat(16) });
    add({ ...base, id: 'sent', source: 'http', state: 'sent', body_key: key, body_object: '01'.repeat(16) });
    expect(objects.waiting('all')).toBe(3);
    expect(objects.waiting('alone')).toBe(1);
  });
});
