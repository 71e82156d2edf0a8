/**
 * The messages a reference found in mail that came back may name (a bounce,
 * a PEC receipt): by X-Genro-Mail-ID (the client's id), by Message-ID, or by
 * the message number a VERP address carries, within one tenant or any.
 */
import type { MessageCandidate } from '../core/bounce/index.js';
import type { BodySeal } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { personalColumns, personalOpener, type PersonalRow } from './personal-fields.js';

export interface CandidateRow {
  tenant_id: string;
  pk: number;
  id: string;
  rcpt_to: string;
}

/** Enough candidates to tell them apart by recipient; more means the reference says nothing. */
export const MAX_CANDIDATES = 20;

/**
 * A candidate row as the core's candidate, its recipients opened: a row sealed since
 * migration 19 keeps them only in its personal fields (read by pk: mail that came back
 * is rare, and its lookups stay one statement each).
 */
export function candidateReader(db: SqliteDatabase, seal: BodySeal): (row: CandidateRow) => MessageCandidate {
  const open = personalOpener(seal);
  const personal = db.prepare<[number], PersonalRow>(
    `SELECT tenant_id, ${personalColumns()} FROM messages WHERE pk = ?`,
  );
  return (row) => {
    const sealed = personal.get(row.pk);
    return {
      tenantId: row.tenant_id,
      pk: row.pk,
      id: row.id,
      rcptTo: sealed === undefined ? (JSON.parse(row.rcpt_to) as string[]) : open(sealed).rcptTo,
    };
  };
}

export type CandidateLookup = (
  by: 'mail_id' | 'message_id' | 'verp',
  value: string,
  tenantId: string | null,
) => MessageCandidate[];

export function createCandidateLookup(db: SqliteDatabase, seal: BodySeal): CandidateLookup {
  const toCandidate = candidateReader(db, seal);
  // The client id is unique per tenant: one seek of the (tenant_id, id) key per tenant.
  const byMailId = db.prepare<
    Record<string, unknown>,
    CandidateRow
  >(`SELECT m.tenant_id, m.pk, m.id, m.rcpt_to FROM tenants t
    JOIN messages m ON m.tenant_id = t.id AND m.id = @value AND m.erased_at IS NULL WHERE @tenant IS NULL OR t.id = @tenant
    LIMIT ${MAX_CANDIDATES}`);
  const byPk = db.prepare<Record<string, unknown>, CandidateRow>(`SELECT tenant_id, pk, id, rcpt_to FROM messages
    WHERE pk = @value AND erased_at IS NULL AND (@tenant IS NULL OR tenant_id = @tenant)`);
  const byMessageId = db.prepare<Record<string, unknown>, CandidateRow>(`SELECT tenant_id, pk, id, rcpt_to FROM messages
    WHERE message_id_header = @value AND (@tenant IS NULL OR tenant_id = @tenant) LIMIT ${MAX_CANDIDATES}`);
  return (by, value, tenantId) =>
    (by === 'mail_id' ? byMailId : by === 'verp' ? byPk : byMessageId)
      .all({ value: by === 'verp' ? Number(value) : value, tenant: tenantId })
      .map(toCandidate);
}
