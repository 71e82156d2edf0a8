/** SQLite side of a bulk action's selection: the search filter's predicates, the action's statuses, counted or paged by pk. */
import type { BlindIndex } from '../core/index.js';
import type { MessageSelection, SelectedMessage, Selection } from '../core/message/index.js';
import type { SqliteDatabase } from './database.js';
import { filterSql, STATUS_SQL } from './message-filter-sql.js';
import { statementCache } from './statement-cache.js';

export function createSqliteMessageSelection(db: SqliteDatabase, index: BlindIndex): MessageSelection {
  const statement = statementCache(db);

  const clauses = (selection: Selection) => {
    const { where, params, narrowed } = filterSql(selection.filter, index);
    if (selection.statuses !== null)
      where.push(
        selection.statuses.length === 0 ? '0' : `(${selection.statuses.map((s) => `(${STATUS_SQL[s]})`).join(' OR ')})`,
      );
    if (selection.dueAfter !== null) {
      where.push('m.next_attempt_at > @dueAfter');
      params.dueAfter = selection.dueAfter;
    }
    return { where, params, narrowed };
  };
  const whereText = (where: string[]) => (where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`);

  return {
    count(selection) {
      const { where, params } = clauses(selection);
      return statement(`SELECT count(*) AS n FROM messages m ${whereText(where)}`)
        .pluck()
        .get(params) as number;
    },
    page(selection, beforePk, limit) {
      const { where, params, narrowed } = clauses(selection);
      if (beforePk !== null) {
        where.push('m.pk < @beforePk');
        params.beforePk = beforePk;
      }
      params.limit = limit;
      // As the search's newest-first pages: walk the table backwards unless the full-text index narrows the rows.
      const source = narrowed ? 'messages m' : 'messages m NOT INDEXED';
      const rows = statement(
        `SELECT m.pk, m.tenant_id, m.id FROM ${source} ${whereText(where)} ORDER BY m.pk DESC LIMIT @limit`,
      ).all(params) as Array<{
        pk: number;
        tenant_id: string;
        id: string;
      }>;
      return rows.map((row): SelectedMessage => ({ pk: row.pk, tenantId: row.tenant_id, id: row.id }));
    },
  };
}
