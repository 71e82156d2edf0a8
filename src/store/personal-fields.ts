/**
 * A message's personal fields as stored (migration 19): its envelope and subject
 * sealed under a data key of their own, with the blind-index search terms the
 * product matches on; rows written before keep them in clear until the sealer
 * reaches them. A key that is gone (erasure) reads as no fields at all.
 */
import type { BlindIndex } from '../core/index.js';
import {
  newSealedEnvelope,
  openEnvelope,
  sealEnvelope,
  searchTerms,
  type BodySeal,
  type PersonalFields,
  type SealedEnvelope,
  type SealedFields,
} from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { rowSealing, type SealingBudget } from './row-sealing.js';
import { asBuffer } from './stored-body.js';

/** What a query selects to read a message's personal fields (`alias`: the table's, with its dot). */
export const personalColumns = (alias = ''): string =>
  `${alias}personal, ${alias}personal_key, ${alias}mail_from, ${alias}rcpt_to, ${alias}subject`;

export interface PersonalRow {
  tenant_id: string;
  personal: Buffer | null;
  personal_key: Buffer | null;
  mail_from: string;
  rcpt_to: string;
  subject: string | null;
}

/** What a sealed row keeps in the clear columns: nothing. */
export const CLEARED = { mail_from: '', rcpt_to: '[]', subject: null } as const;

const NONE: PersonalFields = { mailFrom: '', rcptTo: [], subject: null };

/** A row's personal fields as sealed, to be opened by whoever holds the body keys; null when in clear or erased (no key). */
export function sealedFieldsOf(row: PersonalRow): SealedFields | null {
  if (row.personal === null || row.personal_key === null || row.personal_key.length === 0) return null;
  return { tenantId: row.tenant_id, key: row.personal_key, sealed: row.personal };
}

/** Opens a row's personal fields: sealed, in clear from before sealing, or none once erased. */
export function personalOpener(seal: BodySeal): (row: PersonalRow) => PersonalFields {
  return (row) => {
    if (row.personal === null)
      return { mailFrom: row.mail_from, rcptTo: JSON.parse(row.rcpt_to) as string[], subject: row.subject };
    const fields = sealedFieldsOf(row);
    return fields === null ? NONE : openEnvelope(seal, fields.key, fields.tenantId, fields.sealed);
  };
}

/** A message's personal fields as written: sealed, their key wrapped (kept in the row), and their search terms. */
export interface SealedPersonal {
  personal: Buffer;
  key: Buffer;
  terms: string;
}

/** Seals personal fields under a new data key of `tenantId`, or keeps what a parser thread sealed for that tenant already. */
export function personalSealer(
  seal: BodySeal,
  index: BlindIndex,
): (tenantId: string, fields: PersonalFields & { envelope?: SealedEnvelope | null }) => SealedPersonal {
  return (tenantId, fields) => {
    const envelope =
      fields.envelope?.tenantId === tenantId ? fields.envelope : newSealedEnvelope(seal, index, tenantId, fields);
    return { personal: asBuffer(envelope.sealed), key: asBuffer(envelope.key), terms: envelope.terms };
  };
}

/** Seals personal fields under the key stored message `id` already has (its replacement keeps it). */
export function personalResealer(
  db: SqliteDatabase,
  seal: BodySeal,
  index: BlindIndex,
): (tenantId: string, id: string, fields: PersonalFields) => SealedPersonal | null {
  const keyOf = db
    .prepare<[string, string], Buffer | null>(`SELECT personal_key FROM messages WHERE tenant_id = ? AND id = ?`)
    .pluck();
  return (tenantId, id, fields) => {
    const wrapped = keyOf.get(tenantId, id);
    if (wrapped === undefined || wrapped === null) return null;
    return {
      personal: sealEnvelope(seal, seal.reopen(wrapped), tenantId, fields),
      key: wrapped,
      terms: searchTerms(index, fields),
    };
  };
}

/** A message's search terms, written beside its row (migration 24); the full-text index follows them. */
export const SEARCH_TERMS = '(SELECT t.search_terms FROM message_search_terms t WHERE t.pk = messages.pk)';

/** Writes (or replaces) a message's search terms. An upsert, so that the index's update trigger sees a replacement. */
export function searchTermsWriter(db: SqliteDatabase): (pk: number, terms: string) => void {
  const put = db.prepare<[number, string]>(`INSERT INTO message_search_terms (pk, search_terms) VALUES (?, ?)
    ON CONFLICT (pk) DO UPDATE SET search_terms = excluded.search_terms`);
  return (pk, terms) => void put.run(pk, terms);
}

/** Rows whose personal fields an earlier version stored in clear (migration 24's partial index). */
export const UNSEALED_PERSONAL = `FROM messages INDEXED BY messages_personal_unsealed WHERE personal IS NULL AND erased_at IS NULL`;

/**
 * The background sealer's part for personal fields (body-sealer.ts): each clear row gets
 * its fields sealed and its search terms, as if it had arrived today, within the batch's budget.
 */
export function personalFieldSealing(
  db: SqliteDatabase,
  seal: BodySeal,
  index: BlindIndex,
): (budget: SealingBudget, now: number) => number {
  const next = db.prepare<[number], number>(`SELECT pk ${UNSEALED_PERSONAL} ORDER BY pk LIMIT ?`).pluck();
  const read = db.prepare<[number], PersonalRow>(`SELECT tenant_id, ${personalColumns()} FROM messages WHERE pk = ?`);
  const update = db.prepare(`UPDATE messages SET personal = @personal, personal_key = @key,
      mail_from = '${CLEARED.mail_from}', rcpt_to = '${CLEARED.rcpt_to}', subject = NULL WHERE pk = @pk`);
  const writeTerms = searchTermsWriter(db);
  const sealFields = personalSealer(seal, index);
  const open = personalOpener(seal);
  return rowSealing<PersonalRow>({
    next: (limit) => next.all(limit),
    read: (pk) => read.get(pk),
    seal(pk, row) {
      const sealed = sealFields(row.tenant_id, open(row));
      update.run({ personal: sealed.personal, key: sealed.key, pk });
      writeTerms(pk, sealed.terms);
      return row.rcpt_to.length + (row.subject?.length ?? 0);
    },
  });
}
