/** Statements prepared once per SQL text: a query built from the filters given has a few dozen shapes at most. */
import type { SqliteDatabase } from './database.js';

export function statementCache(db: SqliteDatabase): (sql: string) => ReturnType<SqliteDatabase['prepare']> {
  const prepared = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  return (sql) => {
    let found = prepared.get(sql);
    if (found === undefined) {
      found = db.prepare(sql);
      prepared.set(sql, found);
    }
    return found;
  };
}
