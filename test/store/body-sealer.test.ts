/**
 * The background body sealer (store/body-sealer.ts) on a real SQLite file that a
 * mailproxy from before migration 17 left: bodies in clear in messages, a spool and a
 * PEC receipt. Sealed in batches, interrupted (the store closed after one batch and
 * opened again) and finished: every body opens to what it was, a message claimed
 * afterwards carries its sealed body, and neither the file nor its WAL holds a byte
 * of a body in clear.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/runtime/index.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { createBodySealerLoop } from '../../src/store/body-sealer.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite-store.js';
import { openStored } from '../../src/store/stored-body.js';
import { createLegacyDatabase } from '../helpers/legacy-database.js';

const BLIND_INDEX = createBlindIndex(Buffer.alloc(32, 7));
/** What the sealer counts once everything is sealed. */
const NOTHING_IN_CLEAR = {
  messages: 0,
  spools: 0,
  pecReceipts: 0,
  messageFields: 0,
  mailboxRecords: 0,
  pecReceiptFields: 0,
};
const PAYLOAD = JSON.stringify({
  from: 'sender@example.com',
  to: ['ann.rossi@example.net'],
  subject: 'Statement',
  body: 'Dear Ann, the balance of IT60X0542811101000000123456 is 1,234.56 EUR.',
});
const RAW = Buffer.from('Subject: smtp\r\n\r\nAn SMTP body in clear, with its own recognisable sentence.\r\n');
const PARTS = ['First part of a spooled body, in clear. ', 'Second part of it, in clear too. ', 'Third and last.'].map(
  (text) => Buffer.from(text),
);
const RECEIPT = Buffer.from('Subject: ACCETTAZIONE\r\n\r\nRicevuta di accettazione, a receipt body in clear.\r\n');
/** Larger than a page: its bytes live in overflow pages, which sealing frees whole. */
const LARGE = Buffer.from(`Subject: large\r\n\r\n${'.'.repeat(20_000)}an overflowing body's last words\r\n`);
const DELETED = 'a body the earlier version deleted without erasing it';
const FILLERS = 1100;
/** Each needle: a run of bytes that only a clear body holds. */
const NEEDLES = [
  'IT60X0542811101000000123456',
  'recognisable sentence',
  'spooled body, in clear',
  'Third and last',
  'Ricevuta di accettazione',
  "overflowing body's last words",
  'filler body number 0000',
];

describe('the body sealer on a database from before bodies were sealed', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  });

  const kek = keyEncryptionKey(randomBytes(32));
  const seal = createBodySeal([kek]);
  const secrets = createAesGcmSecretBox(randomBytes(32));
  const open = (path: string): SqliteStore => {
    let pk = 0;
    const store = createSqliteStore({
      path,
      secrets,
      bodies: seal,
      blindIndex: () => BLIND_INDEX,
      ids: { uuid: () => `id-${(pk += 1)}` },
      now: Date.now,
    });
    cleanups.push(() => store.close());
    return store;
  };

  function legacyFile(compacted = true) {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-sealer-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'mailproxy.db');
    const legacy = createLegacyDatabase(path);
    const pks = {
      payload: legacy.payload('http-1', PAYLOAD),
      raw: legacy.raw('smtp-1', RAW),
      large: legacy.raw('smtp-large', LARGE),
      spooled: legacy.spooled('smtp-big', PARTS),
    };
    for (let n = 0; n < FILLERS; n += 1)
      legacy.payload(`filler-${n}`, JSON.stringify({ body: `filler body number ${String(n).padStart(4, '0')}` }));
    legacy.receipt('r1', RECEIPT);
    legacy.receipt('r2', Buffer.alloc(0));
    // What retention did under the earlier version: the row deleted, its bytes left where they were.
    // A large one (2 MB): its overflow pages went whole to the free list, more than sealing reuses.
    const deleted = legacy.raw('deleted', Buffer.from(`${DELETED}\r\n`.repeat(40_000)));
    legacy.db.prepare(`DELETE FROM messages WHERE pk = ?`).run(deleted);
    // The earlier version ran without secure_delete: the free space of its pages holds copies of
    // bodies (of rows since deleted, and of cells moved when a page split), which only a VACUUM
    // removes (README, "Existing databases"). Compacted here, with the free space zeroed, so
    // that a clear byte found afterwards is one the sealer left.
    if (compacted) {
      legacy.db.pragma('secure_delete = ON');
      legacy.db.exec('VACUUM');
    }
    legacy.close();
    return { path, pks };
  }

  const cleartextIn = (path: string, needles = NEEDLES): string[] => {
    const files = [path, `${path}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file));
    return needles.filter((needle) => files.some((bytes) => bytes.includes(needle)));
  };

  it('seals every body in batches, resumes after a stop, and leaves no byte of one in clear', async () => {
    const { path } = legacyFile();
    let store = open(path);
    expect(store.bodySealer.remaining()).toEqual({
      messages: FILLERS + 3,
      spools: 1,
      pecReceipts: 1,
      messageFields: FILLERS + 4,
      mailboxRecords: 0,
      pecReceiptFields: 0,
    });

    // One batch, then a stop: what was sealed stays sealed, the rest is still listed.
    expect(store.bodySealer.sealBatch({ rows: 500, bytes: 64 * 1024 * 1024 }, Date.now())).toBe(500);
    store.close();
    store = open(path);
    expect(store.bodySealer.remaining()).toEqual({
      messages: FILLERS + 3 - 500,
      spools: 1,
      pecReceipts: 1,
      messageFields: FILLERS + 4,
      mailboxRecords: 0,
      pecReceiptFields: 0,
    });

    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    await createBodySealerLoop(store.bodySealer, { clock: { now: Date.now }, log }).tick();
    expect(store.bodySealer.remaining()).toEqual(NOTHING_IN_CLEAR);
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged.map((line) => line.msg)).toEqual([
      'sealing the bodies stored in clear by an earlier version, in the background',
      'every body stored in clear is sealed now',
    ]);
    expect(logged[0]).toMatchObject({ messages: FILLERS + 3 - 500, spools: 1, pecReceipts: 1 });
    expect(logged[1]).toMatchObject({ sealed: FILLERS + 3 - 500 + 2 + FILLERS + 4 });

    // The database's own reading: no payload or raw left, one key per body and one per message's
    // envelope, the erased receipt left empty.
    const rows = store.bodySealer.remaining();
    expect(rows.messages + rows.spools + rows.pecReceipts).toBe(0);
    store.close();
    const db = new Database(path);
    db.pragma('wal_checkpoint(TRUNCATE)');
    expect(db.prepare(`SELECT count(*) FROM messages WHERE payload IS NOT NULL OR raw IS NOT NULL`).pluck().get()).toBe(
      0,
    );
    const keys = db
      .prepare(
        `SELECT (SELECT count(*) FROM data_keys) AS spoolsAndReceipts, count(body_key) AS bodies,
           count(personal_key) AS envelopes, (SELECT count(*) FROM message_bodies) AS sealed FROM messages`,
      )
      .get();
    expect(keys).toEqual({
      spoolsAndReceipts: 1 + 1,
      bodies: FILLERS + 3,
      envelopes: FILLERS + 4,
      sealed: FILLERS + 3,
    });
    expect(db.prepare(`SELECT length(raw) FROM pec_receipts WHERE receipt_id = 'r2'`).pluck().get()).toBe(0);
    db.close();
    // The envelopes went the same way: no recipient in clear is left.
    expect(cleartextIn(path, [...NEEDLES, 'rcpt@example.net'])).toEqual([]);
  });

  it("leaves the earlier version's own traces in free space to an offline VACUUM, which removes them", async () => {
    const { path } = legacyFile(false);
    const store = open(path);
    while (store.bodySealer.sealBatch({ rows: 500, bytes: 64 * 1024 * 1024 }, Date.now()) > 0);
    store.bodySealer.scrub();
    store.close();
    // Every body of a row is sealed; what the earlier version deleted is still in its free space.
    expect(cleartextIn(path, [...NEEDLES, DELETED])).toContain(DELETED);
    const db = new Database(path);
    db.exec('VACUUM');
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    expect(cleartextIn(path, [...NEEDLES, DELETED])).toEqual([]);
  });

  it('opens every sealed body to what it was, and a message claimed afterwards carries it sealed', async () => {
    const { path, pks } = legacyFile();
    const store = open(path);
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    // A tick seals up to 2,000 rows: the bodies, and then the envelopes, take two.
    const loop = createBodySealerLoop(store.bodySealer, { clock: { now: Date.now }, log });
    await loop.tick();
    await loop.tick();
    expect(store.bodySealer.remaining()).toEqual(NOTHING_IN_CLEAR);

    const claimed = store.queue.claim({
      tenantId: 'acme',
      accountId: 'main',
      limit: FILLERS + 10,
      now: Date.now(),
      leaseOwner: 'test',
      leaseUntil: Date.now() + 60_000,
    });
    expect(claimed).toHaveLength(FILLERS + 4);
    const opened = new Map(
      claimed.map((message) => {
        const stored =
          message.spoolId === null
            ? { key: message.key, parts: message.body === null ? [] : [message.body] }
            : store.queue.spooledContent(message.spoolId);
        // Sealed: a key for every one (none reads as stored in clear any more).
        expect(stored.key?.length).toBeGreaterThan(0);
        return [message.pk, openStored(seal, message.tenantId, stored)?.toString()];
      }),
    );
    expect(opened.get(pks.payload)).toBe(PAYLOAD);
    expect(opened.get(pks.raw)).toBe(RAW.toString());
    expect(opened.get(pks.large)).toBe(LARGE.toString());
    expect(opened.get(pks.spooled)).toBe(Buffer.concat(PARTS).toString());
    expect([...opened.values()].filter((body) => body?.includes('filler body number'))).toHaveLength(FILLERS);
    expect(store.pecReceipts.raw('r1', 'acme')?.raw.toString()).toBe(RECEIPT.toString());
    // Under another key-encryption key nothing opens: the bodies are sealed, not merely moved.
    const stranger = createBodySeal([keyEncryptionKey(randomBytes(32))]);
    const first = claimed.find((message) => message.pk === pks.raw);
    expect(() =>
      openStored(stranger, 'acme', { key: first?.key ?? null, parts: first?.body ? [first.body] : [] }),
    ).toThrow();
  });
});
