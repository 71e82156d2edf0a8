/**
 * A message's body as a daemon stored it, opened with the daemon's own key material (its data
 * directory's secret.key, or the secret key it was given): bodies are sealed at rest (issue 45),
 * so a test that checks what was stored opens it as the relay would.
 */
import type Database from 'better-sqlite3';
import { createBodySeal } from '../../src/security/body-seal.js';
import { loadKeyMaterial } from '../../src/security/key-material.js';
import { BODY_COLUMNS, openStored, spoolReader } from '../../src/store/stored-body.js';

interface BodyRow {
  tenant_id: string;
  body: Buffer | null;
  key: Buffer | null;
  spool_id: number | null;
}

/** Opens the body of the first message `where` (an SQL condition on messages, with its parameters) finds. */
export function storedBody(
  db: Database.Database,
  keys: { dataDir: string; secretKey?: string },
  where: string,
  ...params: unknown[]
): Buffer | null {
  const row = db
    .prepare(`SELECT tenant_id, ${BODY_COLUMNS}, spool_id FROM messages WHERE ${where} ORDER BY pk LIMIT 1`)
    .get(...params) as BodyRow | undefined;
  if (row === undefined) return null;
  const material = loadKeyMaterial({
    dataDir: keys.dataDir,
    secretKey: keys.secretKey ?? '',
    adminToken: 'x'.repeat(16),
  });
  const seal = createBodySeal(material.bodyKeys);
  const stored =
    row.spool_id === null
      ? { key: row.key, parts: row.body === null ? [] : [row.body] }
      : spoolReader(db)(row.spool_id);
  return openStored(seal, row.tenant_id, stored);
}
