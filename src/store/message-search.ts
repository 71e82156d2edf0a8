/**
 * SQLite side of message search: one statement built from the filters that
 * are set, every value bound, ordered by a key that never ties (pk, or next
 * attempt then pk) so that a cursor resumes exactly where a page ended.
 */
import {
  type HandoffState,
  type Priority,
  messageStatus,
  type MessageQuery,
  type MessageSearch,
  type MessageSummary,
  type BodySeal,
  type PersonalFields,
} from '../core/message/index.js';
import type { BlindIndex } from '../core/index.js';
import { transactionRunner, type SqliteDatabase } from './database.js';
import { personalColumns, personalOpener, type PersonalRow } from './personal-fields.js';
import { filterSql } from './message-filter-sql.js';
import { statementCache } from './statement-cache.js';

interface SummaryRow extends PersonalRow {
  pk: number;
  id: string;
  tenant_id: string;
  account_id: string;
  state: HandoffState;
  suspended: number;
  priority: Priority;
  batch_code: string | null;
  attempts: number;
  created_at: number;
  next_attempt_at: number;
  sent_at: number | null;
  error_at: number | null;
  error: string | null;
  bounce_type: string | null;
  bounce_at: number | null;
}

const COLUMNS = `m.pk, m.id, m.tenant_id, m.account_id, m.state, m.suspended, m.priority, m.batch_code, ${personalColumns('m.')},
  m.attempts, m.created_at, m.next_attempt_at, m.sent_at, m.error_at, m.error, m.bounce_type, m.bounce_at`;

const toSummary = (row: SummaryRow, personal: PersonalFields): MessageSummary => ({
  pk: row.pk,
  clientId: row.id,
  tenantId: row.tenant_id,
  accountId: row.account_id,
  status: messageStatus(row.state, row.suspended === 1, row.bounce_at !== null),
  state: row.state,
  priority: row.priority,
  batchCode: row.batch_code,
  subject: personal.subject,
  mailFrom: personal.mailFrom,
  rcptTo: personal.rcptTo,
  attempts: row.attempts,
  createdAt: row.created_at,
  nextAttemptAt: row.state === 'queued' || row.state === 'deferred' ? row.next_attempt_at : null,
  sentAt: row.sent_at,
  errorAt: row.error_at,
  error: row.error,
  bounceType: row.bounce_type,
});

export function createSqliteMessageSearch(db: SqliteDatabase, seal: BodySeal, index: BlindIndex): MessageSearch {
  const open = personalOpener(seal);
  const inTransaction = transactionRunner(db);
  const indexed = db.prepare<[], number>(`SELECT indexed_pk FROM search_state WHERE id = 1`).pluck();
  const batchEnd = db
    .prepare<[number, number], number | null>(
      `SELECT max(pk) FROM (SELECT pk FROM messages WHERE pk > ? ORDER BY pk LIMIT ?)`,
    )
    .pluck();
  const addToIndex = db.prepare(`INSERT INTO messages_terms (rowid, search_terms)
    SELECT pk, search_terms FROM message_search_terms WHERE pk > ? AND pk <= ?`);
  const advance = db.prepare(`UPDATE search_state SET indexed_pk = ? WHERE id = 1`);

  const statement = statementCache(db);

  return {
    // Messages are indexed in pk order, a batch and the mark of how far in one transaction: a crash
    // repeats nothing and skips nothing. A single writer commits pks in order, so none is passed over.
    index(limit) {
      return inTransaction(() => {
        const from = indexed.get() ?? 0;
        const to = batchEnd.get(from, limit);
        if (to === null || to === undefined) return 0;
        const added = addToIndex.run(from, to).changes;
        advance.run(to);
        return added;
      }, 'immediate');
    },

    find(query: MessageQuery) {
      const { where, params, narrowed } = filterSql(query, index);
      params.limit = query.limit + 1;
      const set = (predicate: string, name: string, value: unknown): void => {
        where.push(predicate);
        params[name] = value;
      };
      const byNextAttempt = query.order === 'next_attempt';
      if (byNextAttempt) where.push(`m.state IN ('queued', 'deferred')`);
      if (query.after !== null) {
        if (byNextAttempt) {
          set(
            '(m.next_attempt_at > @afterAt OR (m.next_attempt_at = @afterAt AND m.pk > @afterPk))',
            'afterPk',
            query.after.pk,
          );
          params.afterAt = query.after.nextAttemptAt ?? 0;
        } else set('m.pk < @afterPk', 'afterPk', query.after.pk);
      }
      const order = byNextAttempt ? 'm.next_attempt_at, m.pk' : 'm.pk DESC';
      // Newest first: walk the table backwards from the cursor and stop at the page's end. Left to
      // itself the planner takes the (tenant_id, id) key and sorts all of a tenant's messages for every
      // page. (A (tenant_id, pk) index would serve a small tenant among many better, at an intake cost:
      // schema.sql migration 2 dropped it.) Where the full-text index narrows the rows, their pks are
      // looked up instead.
      const source = !byNextAttempt && !narrowed ? 'messages m NOT INDEXED' : 'messages m';
      const sql = `SELECT ${COLUMNS} FROM ${source} ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`} ORDER BY ${order} LIMIT @limit`;
      const rows = statement(sql).all(params) as SummaryRow[];
      const page = rows.slice(0, query.limit);
      const last = rows.length > query.limit ? rows[query.limit - 1] : undefined;
      return {
        messages: page.map((row) => toSummary(row, open(row))),
        next:
          last === undefined
            ? null
            : byNextAttempt
              ? { pk: last.pk, nextAttemptAt: last.next_attempt_at }
              : { pk: last.pk },
      };
    },
  };
}
