/**
 * A message's body as a daemon stored it, opened with the daemon's own key material (its data
 * directory's secret.key, or the secret key it was given): bodies are sealed at rest (issue 45),
 * so a test that checks what was stored opens it as the relay would.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { createBodySeal } from '../../src/security/body-seal.js';
import { loadKeyMaterial } from '../../src/security/key-material.js';
import { partsOf, type PersonalFields } from '../../src/core/message/index.js';
import { personalColumns, personalOpener, type PersonalRow } from '../../src/store/personal-fields.js';
import { BODY_COLUMNS, openStored, spoolReader } from '../../src/store/stored-body.js';

interface BodyRow {
  tenant_id: string;
  body: Buffer | null;
  key: Buffer | null;
  spool_id: number | null;
  body_object: string | null;
}

/** A body object of the embedded body store (src/storage/file-objects.ts), read as the relay reads it. */
export const embeddedObject = (dataDir: string, name: string): Buffer | null => {
  const path = join(dataDir, 'bodies', name.slice(0, 2), name);
  return existsSync(path) ? readFileSync(path) : null;
};

/** The sealed parts of an embedded body object. */
const embeddedParts = (dataDir: string, name: string): Buffer[] => {
  const object = embeddedObject(dataDir, name);
  return object === null ? [] : partsOf(object);
};

/** Opens the body of the first message `where` (an SQL condition on messages, with its parameters) finds. */
export function storedBody(
  db: Database.Database,
  keys: { dataDir: string; secretKey?: string },
  where: string,
  ...params: unknown[]
): Buffer | null {
  const row = db
    .prepare(
      `SELECT tenant_id, ${BODY_COLUMNS}, spool_id, body_object FROM messages WHERE ${where} ORDER BY pk LIMIT 1`,
    )
    .get(...params) as BodyRow | undefined;
  if (row === undefined) return null;
  const seal = sealOf(keys);
  // A large body is in the embedded body store, beside the database.
  const inline = row.body === null ? [] : [row.body];
  const parts = row.body_object === null ? inline : embeddedParts(keys.dataDir, row.body_object);
  const stored = row.spool_id === null ? { key: row.key, parts } : spoolReader(db)(row.spool_id);
  return openStored(seal, row.tenant_id, stored);
}

const sealOf = (keys: { dataDir: string; secretKey?: string }) =>
  createBodySeal(
    loadKeyMaterial({ dataDir: keys.dataDir, secretKey: keys.secretKey ?? '', adminToken: 'x'.repeat(16) }).bodyKeys,
  );

/** The envelope and subject of every message (pk order), opened as the daemon opens them: they are sealed at rest. */
export function storedPersonal(
  db: Database.Database,
  keys: { dataDir: string; secretKey?: string },
): Array<PersonalFields & { pk: number; id: string }> {
  const open = personalOpener(sealOf(keys));
  const rows = db.prepare(`SELECT pk, id, tenant_id, ${personalColumns()} FROM messages ORDER BY pk`).all() as Array<
    PersonalRow & { pk: number; id: string }
  >;
  return rows.map((row) => ({ pk: row.pk, id: row.id, ...open(row) }));
}

/** Opens the body of the first message whose (sealed) subject is `subject`. */
export function storedBodyBySubject(
  db: Database.Database,
  keys: { dataDir: string; secretKey?: string },
  subject: string,
): Buffer | null {
  const found = storedPersonal(db, keys).find((fields) => fields.subject === subject);
  return found === undefined ? null : storedBody(db, keys, 'pk = ?', found.pk);
}

/** Spools of SMTP transfers in progress beside the body store (src/storage/file-spool.ts): its files. */
export const spoolFiles = (dataDir: string): number =>
  existsSync(join(dataDir, 'spool')) ? readdirSync(join(dataDir, 'spool')).length : 0;
