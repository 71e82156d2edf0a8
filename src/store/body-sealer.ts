/**
 * Seals, in the background, the bodies a mailproxy from before migration 17 stored
 * in clear: a message's `payload` (an HTTP submission's JSON) or `raw` (SMTP bytes),
 * the parts of a spool without a key, a PEC receipt's `raw`. Each body gets a data
 * key of its own, as if it had arrived today. A batch is one transaction, run with
 * secure_delete ON so that the pages the clear bytes leave are zeroed, not left
 * free with the bytes in them. Resumable by construction: what remains is what the
 * partial indexes list (messages_unsealed, spools_unsealed, pec_receipts_unsealed),
 * so a stop between batches loses nothing and repeats nothing. Copies the earlier
 * version left in free space (it zeroed nothing it deleted) are beyond a row's reach:
 * an offline VACUUM removes them (README, "Existing databases"). The personal values
 * migration 21 found in clear in mailbox records and PEC receipts are sealed in the same
 * batches, after the bodies (record-sealer.ts).
 */
import type { BlindIndex, Clock, Logger } from '../core/index.js';
import type { BodySeal } from '../core/message/index.js';
import { createPeriodicLoop, type PeriodicLoop } from '../runtime/index.js';
import { transactionRunner, truncateWal, withSecureDelete, type SqliteDatabase } from './database.js';
import { personalFieldSealing, UNSEALED_PERSONAL } from './personal-fields.js';
import type { ClearRecords, RecordSealing } from './record-sealer.js';
import { rowSealing, type SealingBudget } from './row-sealing.js';
import { asBuffer, messageBodyWriter, newDataKeys } from './stored-body.js';

/**
 * A batch is small and a tick a few batches, the event loop given back between them: the
 * writer is intake's too, and a batch holds it (and the event loop) while it runs. 100 bodies
 * of 2 KB take about 10 ms on a small machine; a tick seals up to 2,000, twice a second.
 */
const BATCH = { rows: 100, bytes: 1024 * 1024 };
const BATCHES_PER_TICK = 20;
const INTERVAL_MS = 500;

/** Bodies still in clear, by where they are kept, and the personal values of records (record-sealer.ts). */
export interface UnsealedBodies extends ClearRecords {
  messages: number;
  spools: number;
  pecReceipts: number;
  /** Messages whose envelope and subject are in clear (migration 19). */
  messageFields: number;
}

export interface BodySealer {
  /** What remains in clear, counted from the partial indexes alone. */
  remaining(): UnsealedBodies;
  /** Seals up to `rows` bodies, stopping early past about `bytes`, in one transaction; answers how many. */
  sealBatch(limits: { rows: number; bytes: number }, now: number): number;
  /** Once all are sealed: the WAL truncated, so that no frame of it keeps a page from before. False when it could not be. */
  scrub(): boolean;
}

// INDEXED BY: the walk and the counts read the partial indexes, or fail loudly if they cannot.
const UNSEALED_MESSAGE = `FROM messages INDEXED BY messages_unsealed WHERE payload IS NOT NULL OR raw IS NOT NULL`;
/** A spool no message names is an abandoned transfer, removed by the sweep: it is not sealed. */
const UNSEALED_SPOOL = `FROM spools INDEXED BY spools_unsealed WHERE key_id IS NULL
  AND EXISTS (SELECT 1 FROM messages WHERE messages.spool_id = spools.id)`;
const UNSEALED_RECEIPT = `FROM pec_receipts INDEXED BY pec_receipts_unsealed WHERE key_id IS NULL AND length(raw) > 0`;

type KeyWriter = ReturnType<typeof newDataKeys>;

function createMessageSealing(db: SqliteDatabase, seal: BodySeal) {
  const next = db.prepare<[number], number>(`SELECT pk ${UNSEALED_MESSAGE} ORDER BY pk LIMIT ?`).pluck();
  const read = db.prepare<[number], { tenant_id: string; payload: string | null; raw: Buffer | null }>(
    `SELECT tenant_id, payload, raw FROM messages WHERE pk = ?`,
  );
  const update = db.prepare<[Buffer, number]>(
    `UPDATE messages SET body_key = ?, payload = NULL, raw = NULL WHERE pk = ?`,
  );
  const writeBody = messageBodyWriter(db);
  return rowSealing({
    next: (limit) => next.all(limit),
    read: (pk) => read.get(pk),
    seal(pk, row) {
      // The same bytes a new message's body would be sealed from (message-enqueue.ts).
      const bytes = row.raw ?? Buffer.from(row.payload ?? '', 'utf8');
      const key = seal.newKey();
      writeBody(pk, seal.seal(key, row.tenant_id, 0, bytes));
      update.run(asBuffer(key.wrapped), pk);
      return bytes.length;
    },
  });
}

/** A spool's parts, each sealed under the spool's new key with its place in the body as associated data. */
function createSpoolSealing(db: SqliteDatabase, newKey: KeyWriter) {
  const next = db.prepare<[number], { id: number; tenant_id: string }>(
    `SELECT id, (SELECT tenant_id FROM messages WHERE messages.spool_id = spools.id) AS tenant_id
     ${UNSEALED_SPOOL} ORDER BY id LIMIT ?`,
  );
  const partIds = db.prepare<[number], number>(`SELECT id FROM spool_parts WHERE spool_id = ? ORDER BY seq`).pluck();
  const part = db.prepare<[number], Buffer>(`SELECT bytes FROM spool_parts WHERE id = ?`).pluck();
  const updatePart = db.prepare<[Buffer, number]>(`UPDATE spool_parts SET bytes = ? WHERE id = ?`);
  const updateSpool = db.prepare<[number, number]>(`UPDATE spools SET key_id = ? WHERE id = ?`);
  return (budget: SealingBudget, now: number): number => {
    let sealed = 0;
    for (const spool of next.all(budget.rows)) {
      const key = newKey(spool.tenant_id, now);
      // Parts are read one at a time: a spooled body is a large one.
      partIds.all(spool.id).forEach((id, index) => {
        const bytes = part.get(id) ?? Buffer.alloc(0);
        updatePart.run(key.seal(index, bytes), id);
        budget.bytes -= bytes.length;
      });
      updateSpool.run(key.keyId, spool.id);
      sealed += 1;
      budget.rows -= 1;
      if (budget.bytes <= 0) break;
    }
    return sealed;
  };
}

function createReceiptSealing(db: SqliteDatabase, newKey: KeyWriter) {
  const next = db.prepare<[number], number>(`SELECT seq ${UNSEALED_RECEIPT} ORDER BY seq LIMIT ?`).pluck();
  const read = db.prepare<[number], { tenant_id: string; raw: Buffer }>(
    `SELECT tenant_id, raw FROM pec_receipts WHERE seq = ?`,
  );
  const update = db.prepare<[Buffer, number, number]>(`UPDATE pec_receipts SET raw = ?, key_id = ? WHERE seq = ?`);
  return rowSealing({
    next: (limit) => next.all(limit),
    read: (seq) => read.get(seq),
    seal(seq, row, now) {
      const key = newKey(row.tenant_id, now);
      update.run(key.seal(0, row.raw), key.keyId, seq);
      return row.raw.length;
    },
  });
}

export function createSqliteBodySealer(
  db: SqliteDatabase,
  seal: BodySeal,
  index: BlindIndex,
  records: RecordSealing,
): BodySealer {
  const count = (from: string) => db.prepare<[], number>(`SELECT count(*) ${from}`).pluck();
  const counts = {
    messages: count(UNSEALED_MESSAGE),
    spools: count(UNSEALED_SPOOL),
    pecReceipts: count(UNSEALED_RECEIPT),
    messageFields: count(UNSEALED_PERSONAL),
  };
  const newKey = newDataKeys(db, seal);
  const kinds = [
    createMessageSealing(db, seal),
    createSpoolSealing(db, newKey),
    createReceiptSealing(db, newKey),
    personalFieldSealing(db, seal, index),
    ...records.kinds,
  ];
  const run = transactionRunner(db);
  const batch = (limits: SealingBudget, now: number): number => {
    const budget = { ...limits };
    let sealed = 0;
    for (const kind of kinds) {
      if (budget.rows <= 0 || budget.bytes <= 0) break;
      sealed += kind(budget, now);
    }
    return sealed;
  };
  return {
    remaining: () => ({
      messages: counts.messages.get() ?? 0,
      spools: counts.spools.get() ?? 0,
      pecReceipts: counts.pecReceipts.get() ?? 0,
      messageFields: counts.messageFields.get() ?? 0,
      ...records.remaining(),
    }),
    sealBatch(limits, now) {
      return withSecureDelete(db, () => run(() => batch(limits, now), 'immediate'));
    },
    scrub: () => truncateWal(db),
  };
}

const total = (counts: UnsealedBodies): number =>
  counts.messages +
  counts.spools +
  counts.pecReceipts +
  counts.messageFields +
  counts.mailboxRecords +
  counts.pecReceiptFields;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The sealer's loop (store-service.ts runs it with the store's other loops). It says once
 * when it starts, with what there is, and once when all is sealed; a store with nothing in
 * clear costs a tick three counts on empty indexes.
 */
export function createBodySealerLoop(sealer: BodySealer, deps: { clock: Clock; log: Logger }): PeriodicLoop {
  const { clock, log } = deps;
  let sealing = false;
  let sealed = 0;
  return createPeriodicLoop({
    name: 'body-sealer',
    intervalMs: INTERVAL_MS,
    clock,
    log,
    run: async () => {
      if (!sealing) {
        const remaining = sealer.remaining();
        if (total(remaining) === 0) return;
        log.info({ ...remaining }, 'sealing the bodies stored in clear by an earlier version, in the background');
        sealing = true;
        sealed = 0;
      }
      for (let batch = 0; batch < BATCHES_PER_TICK; batch += 1) {
        const done = sealer.sealBatch(BATCH, clock.now());
        sealed += done;
        if (done === 0) {
          // The WAL still holding clear pages (a checkpoint in the way): the next tick truncates it.
          if (!sealer.scrub()) return;
          log.info({ sealed }, 'every body stored in clear is sealed now');
          sealing = false;
          return;
        }
        await nextTurn();
      }
    },
  });
}
