/**
 * The SQLite side of a fleet node's replicated spool: each waiting
 * message read as the entry the cluster keeps for it (the drain's transfer
 * record), and a returning node's surrender of what a survivor adopted.
 */
import type { SpoolRows } from '../core/fleet/index.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import { IDENTITY_COLUMNS, transitionOf, type IdentityRow, type MessageEventWriter } from './message-event-writer.js';
import { handOverRow, travellingBody, type BodyColumns } from './message-transfer.js';
import { SEARCH_TERMS } from './personal-fields.js';
import { SEALED_BODY } from './stored-body.js';

const WAITING = `state IN ('queued', 'deferred', 'sending')`;

/**
 * A waiting message's entry (a StoredTransfer) encoded by SQLite itself as UTF-8 JSON bytes, its
 * body last and null: an entry then costs no JavaScript object, no JSON.stringify and no
 * UTF-8 encoding (they were the spool's largest cost per message on the main thread). A send in
 * progress reads as waiting: if its node is lost, the adopter sends it again (at least once).
 * The body travels sealed as stored (issue 45): the cluster never holds it in clear.
 */
const ENTRY_JSON = `CAST(json_object('tenant_id', tenant_id, 'id', id, 'account_id', account_id, 'priority', priority,
    'batch_code', batch_code, 'source', source, 'payload', payload,
    'personal', CASE WHEN personal IS NULL THEN NULL ELSE json_object('key', hex(personal_key),
      'sealed', hex(personal), 'terms', coalesce(${SEARCH_TERMS}, '')) END, 'mail_from', mail_from, 'rcpt_to', rcpt_to,
    'subject', subject, 'message_id_header', message_id_header, 'size_bytes', size_bytes,
    'state', CASE state WHEN 'sending' THEN 'queued' ELSE state END, 'attempts', attempts, 'next_attempt_at', next_attempt_at,
    'created_at', created_at, 'deferred_at', deferred_at, 'deferred_reason', deferred_reason, 'rcpt_domains', rcpt_domains,
    'origin_pk', pk, 'raw_base64', NULL, 'sealed', NULL) AS BLOB)`;
/** How ENTRY_JSON ends: the body (base64, which JSON need not escape) goes in place of its nulls. */
const NO_BODY = Buffer.from('"raw_base64":null,"sealed":null}');

export function createSqliteSpoolRows(db: SqliteDatabase, writeEvent: MessageEventWriter): SpoolRows {
  const bodyOf = travellingBody(db);
  const byIds = db
    .prepare<[string, string], number>(
      `SELECT pk FROM messages WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?)) AND ${WAITING}`,
    )
    .pluck();
  const entries = db.prepare<[string], { pk: number; json: Buffer } & BodyColumns>(
    `SELECT pk, ${ENTRY_JSON} AS json, raw, ${SEALED_BODY} AS body,
      body_key AS key, spool_id, body_object AS object FROM messages WHERE pk IN (SELECT value FROM json_each(?)) AND ${WAITING}`,
  );
  const waitingOf = db
    .prepare<[string], number>(`SELECT pk FROM messages WHERE pk IN (SELECT value FROM json_each(?)) AND ${WAITING}`)
    .pluck();
  const waitingPks = db
    .prepare<[number, number], number>(`SELECT pk FROM messages WHERE pk > ? AND ${WAITING} ORDER BY pk LIMIT ?`)
    .pluck();
  const allWaiting = db.prepare<[], { pk: number; tenant_id: string; id: string }>(
    `SELECT pk, tenant_id, id FROM messages WHERE ${WAITING} ORDER BY pk`,
  );
  const waitingOne = db.prepare<[number], IdentityRow>(
    `SELECT ${IDENTITY_COLUMNS} FROM messages WHERE pk = ? AND ${WAITING}`,
  );
  const handOver = handOverRow(db);

  const withBody = (row: { json: Buffer } & BodyColumns): Buffer => {
    const body = bodyOf(row);
    if (body === null) return row.json;
    const head = row.json.subarray(0, row.json.length - NO_BODY.length);
    if ('raw' in body)
      return Buffer.concat([
        head,
        Buffer.from(`"raw_base64":"${body.raw.toString('base64')}","sealed":null}`, 'latin1'),
      ]);
    const { sealed } = body;
    // Base64 and object names (hex, a node id and a slash) need no escaping in JSON.
    const where =
      'object' in sealed
        ? `"object":"${sealed.object}"`
        : `"parts":[${sealed.parts.map((part) => `"${part}"`).join(',')}]`;
    return Buffer.concat([head, Buffer.from(`"raw_base64":null,"sealed":{"key":"${sealed.key}",${where}}}`, 'latin1')]);
  };

  return {
    waitingPksOf: (tenantId, ids) => (ids.length === 0 ? [] : byIds.all(tenantId, JSON.stringify(ids))),
    waitingOf: (pks) => new Set(pks.length === 0 ? [] : waitingOf.all(JSON.stringify(pks))),
    entriesOf(pks) {
      const found = new Map<number, Uint8Array | null>(pks.map((pk) => [pk, null]));
      if (pks.length > 0) for (const row of entries.all(JSON.stringify(pks))) found.set(row.pk, withBody(row));
      return found;
    },
    waitingPks: (afterPk, limit) => waitingPks.all(afterPk, limit),
    waitingIds: () => allWaiting.all().map((row) => ({ pk: row.pk, tenantId: row.tenant_id, id: row.id })),
    surrender: (moves, now) =>
      durableTransaction(db, () => {
        let moved = 0;
        for (const { pk, toNode } of moves) {
          const row = waitingOne.get(pk);
          if (row === undefined) continue;
          // The message goes first, so that a full store gets its pages back before the event needs one.
          handOver(pk, now);
          writeEvent(
            transitionOf(row, 'moved', now, {
              text: `adopted by node ${toNode} while this node was away`,
              data: { to_node: toNode },
            }),
          );
          moved += 1;
        }
        return moved;
      }),
  };
}
