/**
 * SQLite side of erasure (core/message/erasure.ts). A message's tombstone keeps its
 * ids, status, times, codes and counts; its body (and the data key it was sealed
 * under), addresses, subject, Message-ID and every diagnostic text that may quote
 * an address go, and with them what other tables hold of it: its timeline's texts
 * and personal fields, its bounce and PEC records, and for an address its
 * suppressions and the audit rows that name it.
 */
import { addressDigest, type BlindIndex } from '../core/index.js';
import { PERSONAL_EVENT_FIELDS } from '../core/contracts/index.js';
import type { ErasureCounts, ErasureStore, ErasureTarget } from '../core/message/index.js';
import { truncateWal, withSecureDelete, type SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';
import { SHRED_BODY } from './stored-body.js';

/** Event fields that name a person or quote what the relay or a bounce said about one (core/contracts/event.ts). */
const SCRUBBED_PAYLOAD = `CASE WHEN payload IS NULL THEN NULL
  ELSE json_remove(payload, ${PERSONAL_EVENT_FIELDS.map((key) => `'$.${key}'`).join(', ')}) END`;

/**
 * An address's messages: those whose search terms name it as sender or recipient, through the
 * index of search terms (whole terms: exact) and the terms it has not reached yet, and the rows
 * from before sealing (compared in clear below).
 */
const ADDRESS_CANDIDATES = `SELECT rowid FROM messages_terms WHERE messages_terms MATCH 'f' || @digest || ' OR t' || @digest
  UNION ALL SELECT pk FROM message_search_terms WHERE pk > (SELECT indexed_pk FROM search_state WHERE id = 1)
    AND (instr(search_terms, 'f' || @digest) > 0 OR instr(search_terms, 't' || @digest) > 0)
  UNION ALL SELECT pk FROM messages WHERE personal IS NULL AND erased_at IS NULL`;

const MATCHING = {
  messages: `tenant_id = @tenant AND id IN (SELECT value FROM json_each(@ids))`,
  // `+tenant_id`: the candidates drive the query (a few rows through their pks); with the tenant's index
  // SQLite walked every message of the tenant, a third of a second at 100,000.
  address: `+tenant_id IS @tenant AND pk IN (${ADDRESS_CANDIDATES})
    AND (personal IS NOT NULL OR lower(mail_from) = @address
      OR EXISTS (SELECT 1 FROM json_each(messages.rcpt_to) WHERE lower(value) = @address))`,
  tenant: `tenant_id = @tenant`,
} as const;

type Row = IdentityRow & { state: string };

function paramsOf(target: ErasureTarget, index: BlindIndex) {
  return {
    // What sealed records keep of an address to match on (core/blind-index.ts).
    digest: target.kind === 'address' ? addressDigest(index, target.address) : null,
    tenant: target.tenantId,
    ids: target.kind === 'messages' ? JSON.stringify(target.ids) : '[]',
    address: target.kind === 'address' ? target.address.toLowerCase() : null,
    // As a JSON string: a whole value, never part of another address (ann@ in joann@).
    quoted: target.kind === 'address' ? JSON.stringify(target.address.toLowerCase()) : null,
  };
}

/** The messages a target names (not erased already), each with its state before. */
function createMatches(db: SqliteDatabase, index: BlindIndex) {
  const statements = Object.fromEntries(
    Object.entries(MATCHING).map(([kind, where]) => [
      kind,
      db.prepare<Record<string, unknown>, Row>(
        `SELECT ${IDENTITY_COLUMNS}, state FROM messages WHERE ${where} AND erased_at IS NULL ORDER BY pk`,
      ),
    ]),
  ) as Record<ErasureTarget['kind'], ReturnType<SqliteDatabase['prepare']>>;
  const known = db
    .prepare<Record<string, unknown>, string>(`SELECT id FROM messages WHERE ${MATCHING.messages}`)
    .pluck();
  return {
    rows: (target: ErasureTarget) => statements[target.kind].all(paramsOf(target, index)) as Row[],
    unknownIds: (target: Extract<ErasureTarget, { kind: 'messages' }>) => {
      const found = new Set(known.all(paramsOf(target, index)));
      return [...new Set(target.ids)].filter((id) => !found.has(id));
    },
  };
}

/** The messages' rows and timelines: one statement each over the list of pks. */
function createTombstones(db: SqliteDatabase) {
  // The body is shredded (SHRED_BODY: its key destroyed, its sealed bytes removed later by
  // retention), and the personal fields' key with their sealed bytes. The search terms, beside the
  // row, stay until the scrub right after the commit takes them out of the index (a third of the
  // erasure's time in its transaction); nothing finds an erased message by them meanwhile
  // (message-filter-sql.ts).
  const messages = db.prepare(`UPDATE messages SET
      ${SHRED_BODY}, personal = NULL, personal_key = NULL,
      mail_from = '', rcpt_to = '[]', subject = NULL, message_id_header = NULL, rcpt_domains = NULL, held_for = NULL,
      error = CASE WHEN state IN ('queued', 'deferred') OR error IS NOT NULL THEN 'erased' END,
      error_at = CASE WHEN state IN ('queued', 'deferred') THEN @now ELSE error_at END,
      state = CASE WHEN state IN ('queued', 'deferred') THEN 'error' ELSE state END,
      deferred_reason = NULL, bounce_reason = NULL, refused_recipients = NULL,
      pec_error = CASE WHEN pec_error IS NULL THEN NULL ELSE 'erased' END, pec_awaiting_since = NULL,
      body_shredded_at = coalesce(body_shredded_at, @now), erased_at = @now, updated_at = @now
    WHERE pk IN (SELECT value FROM json_each(@pks))`);
  const events = db.prepare(`UPDATE outbox SET text = NULL, payload = ${SCRUBBED_PAYLOAD}
    WHERE message_pk IN (SELECT value FROM json_each(@pks))`);
  // Their search terms, for the scrub right after the commit to take out of the index (migration 24).
  const listTerms = db.prepare(`INSERT OR IGNORE INTO erased_search_terms (pk) SELECT value FROM json_each(@pks)`);
  // One tenant's records (an index range), of its erased messages, to or from the address, or all of
  // them; a null tenant is the records of none (a bounce no message matched). A record names the
  // address by its digest (record-fields.ts), or in clear when written before it was sealed.
  const bounces = db.prepare(`UPDATE bounce_messages SET header_message_id = NULL, from_header = NULL, subject = NULL,
      findings = '[]', original_message_id = NULL, mail_id = NULL, personal_sealed = NULL, address_digests = NULL
    WHERE tenant_id IS @tenant AND (@all = 1 OR message_pk IN (SELECT value FROM json_each(@pks))
      OR EXISTS (SELECT 1 FROM json_each(address_digests) WHERE value = @digest)
      OR instr(lower(findings), @quoted) > 0 OR lower(from_header) = @address
      OR instr(lower(from_header), '<' || @address || '>') > 0)`);
  const receiptWhere = `tenant_id IS @tenant AND (@all = 1 OR message_pk IN (SELECT value FROM json_each(@pks))
    OR recipient_digest = @digest OR lower(recipient) = @address)`;
  const receiptKeys = db.prepare(
    `DELETE FROM data_keys WHERE id IN (SELECT key_id FROM pec_receipts WHERE key_id IS NOT NULL AND (${receiptWhere}))`,
  );
  const receipts = db.prepare(`UPDATE pec_receipts SET raw = X'', key_id = NULL, recipient = NULL, subject = NULL,
      error_detail = NULL, header_message_id = NULL, referenced_message_id = NULL, personal_sealed = NULL, recipient_digest = NULL
    WHERE length(raw) > 0 AND (${receiptWhere})`);
  return (params: Record<string, unknown>) => {
    messages.run(params);
    listTerms.run(params);
    const timeline = events.run(params).changes;
    const mailboxRecords = bounces.run(params).changes;
    receiptKeys.run(params);
    return { events: timeline, mailboxRecords, pecReceipts: receipts.run(params).changes };
  };
}

/**
 * What an address leaves outside its messages: suppressions, their change events, audit rows.
 * Written since migration 20 they name the address by its digest (`@digest`): the entry's key,
 * the events' and audit rows' `tenant/<digest>` and `address_digest`. Rows from before name the
 * address itself, and are matched so too.
 */
function createAddressTraces(db: SqliteDatabase) {
  const suppressions = db.prepare(
    `DELETE FROM suppressions WHERE tenant_id IS @tenant AND (@all = 1 OR address_digest = @digest)`,
  );
  const named = `(aggregate_id = tenant_id || '/' || @digest OR lower(aggregate_id) = lower(tenant_id) || '/' || @address)`;
  const quotedDigest = `'"' || @digest || '"'`;
  const changeEvents = db.prepare(`UPDATE outbox SET payload = ${SCRUBBED_PAYLOAD}, text = NULL,
      aggregate_id = CASE WHEN ${named} THEN tenant_id || '/erased' ELSE aggregate_id END
    WHERE message_pk IS NULL AND tenant_id IS @tenant
      AND (instr(lower(payload), @quoted) > 0 OR instr(payload, ${quotedDigest}) > 0 OR ${named})`);
  const audit = db.prepare(`UPDATE command_log SET params = '{"erased":true}', target = NULL
    WHERE tenant_id IS @tenant AND (instr(lower(params), @quoted) > 0 OR instr(params, ${quotedDigest}) > 0
      OR lower(target) = @address OR substr(lower(target), -length(@address) - 1) = '/' || @address
      OR target = tenant_id || '/' || @digest)`);
  return (params: Record<string, unknown>, all: boolean) => {
    const removed = suppressions.run(params).changes;
    if (all || params.address === null) return { suppressions: removed, events: 0 };
    const events = changeEvents.run(params).changes;
    audit.run(params);
    return { suppressions: removed, events };
  };
}

export function createSqliteErasure(
  db: SqliteDatabase,
  writeEvent: MessageEventWriter,
  index: BlindIndex,
): ErasureStore {
  const matches = createMatches(db, index);
  const tombstones = createTombstones(db);
  const addressTraces = createAddressTraces(db);

  const erase = (target: ErasureTarget, now: number, correlationId: string | null): ErasureCounts => {
    const rows = matches.rows(target);
    const all = target.kind === 'tenant';
    const params = {
      ...paramsOf(target, index),
      pks: JSON.stringify(rows.map((row) => row.pk)),
      now,
      all: all ? 1 : 0,
    };
    const cleared = tombstones(params);
    const traces = target.kind === 'messages' ? { suppressions: 0, events: 0 } : addressTraces(params, all);
    let waiting = 0;
    let inFlight = 0;
    for (const row of rows) {
      const wasWaiting = row.state === 'queued' || row.state === 'deferred';
      if (wasWaiting) waiting += 1;
      if (row.state === 'sending') inFlight += 1;
      writeEvent(
        transitionOf(row, 'erased', now, {
          text: wasWaiting ? 'erased on request: it will not be sent' : 'erased on request',
          correlationId,
          data: { was_waiting: wasWaiting },
        }),
      );
    }
    return {
      messages: rows.length,
      waiting,
      inFlight,
      notFound: target.kind === 'messages' ? matches.unknownIds(target) : [],
      suppressions: traces.suppressions,
      mailboxRecords: cleared.mailboxRecords,
      pecReceipts: cleared.pecReceipts,
      events: cleared.events + traces.events,
    };
  };

  // What the scrub owes: 2, the index merged and the WAL truncated; 1, the WAL alone (no message erased).
  const owed = db.prepare<[number]>(`UPDATE search_state SET scrub_due = max(scrub_due, ?) WHERE id = 1`);
  const erasing = (target: ErasureTarget, now: number, correlationId: string | null): ErasureCounts => {
    const counts = erase(target, now, correlationId);
    owed.run(counts.messages > 0 ? 2 : 1);
    return counts;
  };
  const scrub = erasureScrub(db);
  const pending = db.prepare<[], { due: number; terms: number; bodies: number }>(`SELECT
      (SELECT scrub_due FROM search_state WHERE id = 1) AS due,
      (SELECT count(*) FROM erased_search_terms) AS terms,
      (SELECT count(*) FROM shredded_bodies) AS bodies`);

  return {
    erase: (target, now, correlationId) =>
      withSecureDelete(db, () =>
        db.inTransaction
          ? erasing(target, now, correlationId)
          : db.transaction(erasing).immediate(target, now, correlationId),
      ),
    scrub: (limit) => withSecureDelete(db, () => scrub(limit)),
    pending() {
      const row = pending.get();
      return { scrubOwed: (row?.due ?? 0) !== 0, searchTerms: row?.terms ?? 0, shreddedBodies: row?.bodies ?? 0 };
    },
  };
}

/**
 * One step of the scrub after erasures: up to `limit` erased messages' search terms deleted (the
 * full-text index follows: migration 24's triggers), in a transaction of their own; once none is
 * left, what is owed: the index merged (no segment keeps an erased term) and the WAL checkpointed
 * and truncated (no frame keeps an old page). Answers how many messages' terms it took out.
 */
function erasureScrub(db: SqliteDatabase): (limit: number) => number {
  const listed = `SELECT pk FROM erased_search_terms ORDER BY pk LIMIT @limit`;
  const remove = db.prepare<{ limit: number }>(`DELETE FROM message_search_terms WHERE pk IN (${listed})`);
  const unlist = db.prepare<{ limit: number }>(`DELETE FROM erased_search_terms WHERE pk IN (${listed})`);
  const due = db.prepare<[], number>(`SELECT scrub_due FROM search_state WHERE id = 1`).pluck();
  const merge = db.prepare(`INSERT INTO messages_terms (messages_terms) VALUES ('optimize')`);
  const done = db.prepare(`UPDATE search_state SET scrub_due = 0 WHERE id = 1`);
  const step = db.transaction((limit: number) => {
    remove.run({ limit });
    return unlist.run({ limit }).changes;
  });
  return (limit) => {
    // Nothing owed (every erasure owes at least the truncation): no write lock taken on an idle tick.
    if (due.get() === 0) return 0;
    const cleared = step.immediate(limit);
    const owed = cleared < limit ? due.get() : 0;
    if (owed === 2) merge.run();
    // Last, and only once the truncation went through: a stop before it, or a checkpoint that
    // another connection stood in the way of, leaves the scrub owed, and the next tick does it again.
    if (owed !== 0 && truncateWal(db)) done.run();
    return cleared;
  };
}
