/**
 * The real SQLite store on a fresh file, for store-level tests: ids counted in order, the tenant
 * `acme` made through a connection of its own (as an operator's tool would), then `seed` run on
 * that connection; `read` sees what another connection sees (only what was committed).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { NewMessage } from '../../src/core/message/index.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite-store.js';

/** A message of acme's account `main` from the shop to `to`, submitted raw as SMTP would (subject `order <id>`). */
export const rawMessage = (id: string, to: string): NewMessage => ({
  tenantId: 'acme',
  id,
  accountId: 'main',
  priority: 2,
  batchCode: null,
  mailFrom: 'shop@example.com',
  rcptTo: [to],
  subject: `order ${id}`,
  messageId: null,
  sizeBytes: 10,
  deferredUntil: null,
  suspended: false,
  content: { kind: 'raw', bytes: Buffer.from(`body of ${id}`) },
});

/** Seeds tenant acme's account `main`, pointed nowhere (a store test claims, it never relays). */
export const withMainAccount = (admin: Database.Database): void => {
  admin
    .prepare(
      `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, created_at, updated_at) VALUES ('acme', 'main', '127.0.0.1', 25, 'none', 0, 0)`,
    )
    .run();
};

export function openTestStore(cleanups: Array<() => void>, seed: (admin: Database.Database) => void = () => {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-store-'));
  const path = join(dir, 'db.sqlite');
  let next = 0;
  const ids = { uuid: () => `00000000-0000-7000-8000-${String((next += 1)).padStart(12, '0')}` };
  const store: SqliteStore = createSqliteStore({
    path,
    secrets: createAesGcmSecretBox(randomBytes(32)),
    bodies: createBodySeal([keyEncryptionKey(randomBytes(32))]),
    blindIndex: () => createBlindIndex(randomBytes(32)),
    ids,
    now: Date.now,
  });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  const admin = new Database(path);
  try {
    admin
      .prepare(
        `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
      )
      .run();
    seed(admin);
  } finally {
    admin.close();
  }
  const read = <T>(sql: string): T[] => {
    const reader = new Database(path, { readonly: true });
    try {
      return reader.prepare(sql).all() as T[];
    } finally {
      reader.close();
    }
  };
  return { store, ids, read, path };
}
