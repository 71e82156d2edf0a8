/**
 * Commits a request's valid messages in one transaction: new client ids are
 * inserted, waiting ones replaced (idempotent resubmission), the others left
 * alone and reported (their message was handed off already). Whether a message
 * enters suspended was decided by the submission (NewMessage.suspended).
 */
import { recipientDomains } from '../core/account/index.js';
import type { BlindIndex } from '../core/index.js';
import type {
  BodySeal,
  MessageContent,
  NewMessage,
  EnqueueResult,
  PersonalFields,
  SealedEnvelope,
} from '../core/message/index.js';
import { durableTransaction, type SqliteDatabase } from './database.js';
import { asBuffer, messageBodyWriter } from './stored-body.js';
import type { MessageEventWriter } from './message-event-writer.js';
import {
  CLEARED,
  personalResealer,
  personalSealer,
  searchTermsWriter,
  type SealedPersonal,
} from './personal-fields.js';
import type { SpoolKeys } from './spool.js';

/**
 * A new id (the common case) costs one statement: no lookup first, and no
 * RETURNING (a large share of the insert's cost); lastInsertRowid is free.
 * The insert binds positionally (cheaper than named), the rare
 * replacement by name from the same values: see `messageRow` for the order.
 */
function enqueueStatements(db: SqliteDatabase) {
  const insert = db.prepare(`INSERT INTO messages (tenant_id, id, account_id, priority, batch_code, source,
      body_key, spool_id, personal, personal_key, mail_from, rcpt_to, subject, message_id_header, size_bytes, state, suspended, next_attempt_at, deferred_at, created_at, updated_at, rcpt_domains, body_object)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, id) DO NOTHING`);
  const replace = db.prepare<
    Record<string, unknown>,
    { pk: number }
  >(`UPDATE messages SET account_id = @v3, priority = @v4, batch_code = @v5,
      source = @v6, body_key = @v7, payload = NULL, raw = NULL, spool_id = @v8, personal = @v9, personal_key = @v10,
      mail_from = @v11, rcpt_to = @v12, subject = @v13, message_id_header = @v14,
      size_bytes = @v15, state = @v16, suspended = @v17, next_attempt_at = @v18, deferred_at = @v19, deferred_reason = NULL, updated_at = @v20,
      rcpt_domains = @v22, body_object = @v23, held_for = NULL
    WHERE tenant_id = @v1 AND id = @v2 AND state IN ('queued', 'deferred') RETURNING pk`);
  return { insert, replace };
}

export function createEnqueue(db: SqliteDatabase, writeEvent: MessageEventWriter, bodies: BodySealing) {
  const { insert, replace } = enqueueStatements(db);
  const writeBody = messageBodyWriter(db);
  const clearBodyRow = db.prepare<[number]>(`DELETE FROM message_bodies WHERE pk = ?`);
  const clearBody = (pk: number) => void clearBodyRow.run(pk);
  const writeTerms = searchTermsWriter(db);
  const byName = (row: readonly unknown[]): Record<string, unknown> =>
    Object.fromEntries(row.map((value, index) => [`v${index + 1}`, value]));

  const enqueue = <M extends NewMessage>(
    messages: readonly M[],
    now: number,
    correlationId: string | null,
  ): EnqueueResult<M> => {
    const result: EnqueueResult<M> = { inserted: 0, updated: 0, notWaiting: [] };

    for (const message of messages) {
      const deferred = message.deferredUntil !== null && message.deferredUntil > now;
      const { suspended } = message;
      const { body, columns, object } = bodies.store(message.tenantId, message.content);
      const personal = bodies.personal(message.tenantId, message);
      const row = messageRow(message, columns, personal, deferred, now, object);
      const inserted = insert.run(row);
      const isNew = inserted.changes === 1;
      let pk: number;
      if (isNew) {
        pk = Number(inserted.lastInsertRowid);
        result.inserted += 1;
      } else {
        // Only a waiting message may be replaced; one handed off or finished stays as it is. The
        // new envelope is sealed under the key of the one it replaces: its earlier events' sealed
        // fields (a resent message's bounce) stay readable, and go with the same erasure.
        const kept = bodies.resealPersonal(message.tenantId, message.id, message);
        const replaced = replace.get(byName(kept === null ? row : withPersonal(row, kept)));
        if (replaced === undefined) {
          result.notWaiting.push(message);
          continue;
        }
        pk = replaced.pk;
        result.updated += 1;
      }
      if (body !== null) writeBody(pk, body);
      // A replaced message's body, sealed under the key it no longer has, goes with it.
      else if (!isNew) clearBody(pk);
      writeTerms(pk, personal.terms);
      writeEvent({
        pk,
        tenantId: message.tenantId,
        id: message.id,
        accountId: message.accountId,
        batchCode: message.batchCode,
        type: isNew ? 'queued' : 'updated',
        at: now,
        attempt: 0,
        correlationId,
        data: {
          priority: message.priority,
          ...(deferred ? { deferred_ts: Math.floor((message.deferredUntil ?? now) / 1000) } : {}),
          ...(suspended ? { suspended: true } : {}),
        },
      });
    }
    return result;
  };

  // Inside a transaction: part of it, without a savepoint (which made SQLite journal every
  // page this touches, a quarter of the time per message); see MessageQueue.enqueue.
  return <M extends NewMessage>(messages: readonly M[], now: number, correlationId: string | null): EnqueueResult<M> =>
    db.inTransaction
      ? enqueue(messages, now, correlationId)
      : durableTransaction(db, () => enqueue(messages, now, correlationId));
}

/** `row` with its personal fields (values 9 and 10) sealed otherwise. */
const withPersonal = (row: readonly unknown[], personal: SealedPersonal): unknown[] =>
  row.map((value, index) => (index === 8 ? personal.personal : index === 9 ? personal.key : value));

/** The insert's positional values, in its column order (the replacement names them v1…v23). */
function messageRow(
  message: NewMessage,
  content: StoredContent,
  personal: SealedPersonal,
  deferred: boolean,
  now: number,
  object: string | null,
): unknown[] {
  return [
    message.tenantId,
    message.id,
    message.accountId,
    message.priority,
    message.batchCode,
    ...content,
    personal.personal,
    personal.key,
    CLEARED.mail_from,
    CLEARED.rcpt_to,
    CLEARED.subject,
    message.messageId,
    message.sizeBytes,
    deferred ? 'deferred' : 'queued',
    message.suspended ? 1 : 0,
    deferred ? (message.deferredUntil ?? now) : now,
    deferred ? message.deferredUntil : null,
    now,
    now,
    // What per-destination limits read of a waiting message's recipients: their domains only.
    recipientDomains(message.rcptTo).join(','),
    object,
  ];
}

/** source, body_key, spool_id */
type StoredContent = [string, Uint8Array | null, number | null];

interface StoredBody {
  body: Uint8Array | null;
  columns: StoredContent;
  object: string | null;
}

/**
 * A body sealed as it is stored: under a new data key, wrapped in the message's row, the sealed
 * bytes beside it (message_bodies). A spooled body was sealed part by part under its spool's key
 * as it arrived (spool.ts), and the message row names the spool.
 */
export interface BodySealing {
  /** What seals and opens (bodies, and personal fields under their own keys). */
  seal: BodySeal;
  /**
   * The row's body columns, the sealed bytes to write beside it (none for a spooled body, nor for
   * one in the body store), and the name of its object in the body store (null: none).
   */
  store(tenantId: string, content: MessageContent): StoredBody;
  /** Seals a message's envelope and subject under a key of their own (personal-fields.ts). */
  personal(tenantId: string, fields: PersonalFields & { envelope?: SealedEnvelope | null }): SealedPersonal;
  /** Seals them under the key of the stored message `id` (to replace it); null when it has none. */
  resealPersonal(tenantId: string, id: string, fields: PersonalFields): SealedPersonal | null;
}

export function createBodySealing(
  db: SqliteDatabase,
  seal: BodySeal,
  index: BlindIndex,
  spoolKeys: SpoolKeys,
): BodySealing {
  const sealed = (source: string, tenantId: string, bytes: Uint8Array) => {
    const key = seal.newKey();
    return {
      body: seal.seal(key, tenantId, 0, bytes),
      columns: [source, key.wrapped, null] as StoredContent,
      object: null,
    };
  };
  return {
    seal,
    personal: personalSealer(seal, index),
    resealPersonal: personalResealer(db, seal, index),
    store(tenantId, content) {
      switch (content.kind) {
        case 'payload':
          return sealed('http', tenantId, Buffer.from(content.json, 'utf8'));
        case 'raw':
          return sealed('smtp', tenantId, content.bytes);
        case 'sealed': {
          const source = content.source ?? 'http';
          if (content.tenantId === tenantId)
            return { body: asBuffer(content.body), columns: [source, asBuffer(content.key), null], object: null };
          // Sealed for another tenant than the one it was admitted to (not a path the API takes): sealed anew.
          const bytes = seal.open({ tenantId: content.tenantId, key: content.key, parts: [content.body] });
          return sealed(source, tenantId, bytes);
        }
        case 'spooled':
          // Its key belongs to the spool now: the spool's parts are read under it, and go with it.
          spoolKeys.taken(content.spoolId);
          return { body: null, columns: ['smtp', null, content.spoolId], object: null };
        case 'stored':
          // The body store took it sealed for the tenant that admits it (body-offload.ts seals it
          // for the submission's tenant); sealed for another, it could not be read back here.
          if (content.tenantId !== tenantId) throw new Error('a stored body was sealed for another tenant');
          return {
            body: null,
            columns: [content.source ?? 'http', asBuffer(content.key), null],
            object: content.object,
          };
      }
    },
  };
}
