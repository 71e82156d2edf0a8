/**
 * `mailproxy keys rotate`, the database's side, offline (the caller holds the data
 * directory's lock). In one transaction: every data key not wrapped by the new
 * key-encryption key is rewrapped to it, every stored secret is resealed under the
 * new master, and the API keys' digest key is kept. Bodies are not touched: a body's
 * data key stays the same key, wrapped anew. A key or secret that opens under no key
 * of the ring is left as it was, and counted: it could not be read before either.
 */
import { existsSync } from 'node:fs';
import type { SecretBox } from '../core/index.js';
import type { BodySeal } from '../core/message/index.js';
import { ACCOUNT_SEALED_COLUMNS } from './account-rows.js';
import { durableTransaction, openDatabase, type SqliteDatabase } from './database.js';
import { BLIND_INDEX, keepKey, keptKeyContext, TOKEN_DIGEST, UNSUBSCRIBE_LINKS } from './kept-keys.js';
import { SUPPRESSION_SEALED_COLUMN } from './suppression-repository.js';
import { PERSONAL_SEALED_COLUMNS } from './record-fields.js';
import { TENANT_SEALED_COLUMNS } from './tenant-rows.js';

export interface StoredKeyRotation {
  /** Wraps with the new master's key-encryption key; opens what any key of the ring wrapped. */
  bodies: BodySeal;
  /** Seals under the new master; opens what any master of the ring sealed. */
  secrets: SecretBox;
  /** The API keys' digest key of the master being replaced: kept when the database keeps none yet. */
  tokenDigest: Buffer;
  /** The blind index key of the master being replaced: kept when the database keeps none yet. */
  blindIndex: Buffer;
  /** The unsubscribe links' key of the master being replaced: kept when the database keeps none yet. */
  unsubscribeLinks: Buffer;
}

export interface KeyRotationCounts {
  dataKeys: { rewrapped: number; current: number; failed: number };
  secrets: { resealed: number; failed: number };
  /** This rotation kept the API keys' digest key (the first rotation of the database does). */
  tokenDigestKept: boolean;
  /** This rotation kept the blind index key (the first rotation of the database does). */
  blindIndexKept: boolean;
  /** This rotation kept the unsubscribe links' key (the first rotation of the database does). */
  unsubscribeLinksKept: boolean;
}

interface SealedColumn {
  table: string;
  column: string;
  /** The columns its context reads: only these are read, not a whole row (a PEC receipt's holds its bytes). */
  keys: string;
  context(row: Record<string, string>): string;
}

/** Every column the secret box sealed, with the context of its values. */
const SEALED_COLUMNS: readonly SealedColumn[] = [
  ...TENANT_SEALED_COLUMNS.map((sealed) => ({ table: 'tenants', keys: 'id', ...sealed })),
  ...ACCOUNT_SEALED_COLUMNS.map((sealed) => ({ table: 'accounts', keys: 'tenant_id, id', ...sealed })),
  { table: 'kept_keys', column: 'sealed', keys: 'purpose', context: (row) => keptKeyContext(row.purpose ?? '') },
  { table: 'suppressions', keys: 'tenant_id, address_digest', ...SUPPRESSION_SEALED_COLUMN },
  ...PERSONAL_SEALED_COLUMNS,
];

/** Every column holding data keys wrapped: data_keys' (spools, PEC receipts), and a message's two (migration 22). */
const WRAPPED_KEY_COLUMNS = [
  { table: 'data_keys', id: 'id', column: 'wrapped' },
  { table: 'messages', id: 'pk', column: 'body_key' },
  { table: 'messages', id: 'pk', column: 'personal_key' },
] as const;

/** Keys are read a page at a time: a statement being iterated cannot be written through. */
const PAGE = 1000;

function rewrapDataKeys(db: SqliteDatabase, bodies: BodySeal): KeyRotationCounts['dataKeys'] {
  const counts = { rewrapped: 0, current: 0, failed: 0 };
  for (const { table, id, column } of WRAPPED_KEY_COLUMNS) {
    const page = db.prepare<[number, number], { id: number; wrapped: Buffer }>(
      `SELECT ${id} AS id, ${column} AS wrapped FROM ${table} WHERE ${id} > ? AND ${column} IS NOT NULL ORDER BY ${id} LIMIT ?`,
    );
    const update = db.prepare<[Buffer, number]>(`UPDATE ${table} SET ${column} = ? WHERE ${id} = ?`);
    for (let rows = page.all(0, PAGE); rows.length > 0; rows = page.all(rows.at(-1)?.id ?? 0, PAGE)) {
      for (const row of rows) {
        let rewrapped: Buffer | null;
        try {
          rewrapped = bodies.rewrap(row.wrapped);
        } catch {
          counts.failed += 1;
          continue;
        }
        if (rewrapped === null) counts.current += 1;
        else {
          update.run(rewrapped, row.id);
          counts.rewrapped += 1;
        }
      }
    }
  }
  return counts;
}

function resealSecrets(db: SqliteDatabase, secrets: SecretBox): KeyRotationCounts['secrets'] {
  const counts = { resealed: 0, failed: 0 };
  for (const { table, column, keys, context } of SEALED_COLUMNS) {
    const rows = db
      .prepare<[], Record<string, string> & { row_id: number }>(
        `SELECT rowid AS row_id, ${column}, ${keys} FROM ${table} WHERE ${column} IS NOT NULL`,
      )
      .all();
    const update = db.prepare<[string, number]>(`UPDATE ${table} SET ${column} = ? WHERE rowid = ?`);
    for (const row of rows) {
      const sealed = row[column] ?? '';
      let resealed: string;
      try {
        resealed = secrets.seal(secrets.open(sealed, context(row)), context(row));
      } catch {
        counts.failed += 1;
        continue;
      }
      update.run(resealed, row.row_id);
      counts.resealed += 1;
    }
  }
  return counts;
}

/**
 * Rotates the keys of the database at `path` (migrated first, as the daemon would); null when
 * there is no database yet. Committed at FULL, and the WAL truncated: the data keys as the old
 * key wrapped them are left in no frame of it. (secure_delete zeroes what the rows held.)
 */
export function rotateStoredKeys(path: string, rotation: StoredKeyRotation, now: number): KeyRotationCounts | null {
  if (!existsSync(path)) return null;
  const { db } = openDatabase({ path });
  try {
    db.pragma('secure_delete = ON');
    const counts = durableTransaction(db, () => ({
      dataKeys: rewrapDataKeys(db, rotation.bodies),
      // A digest key kept by an earlier rotation is resealed with the other secrets; the first rotation keeps it.
      secrets: resealSecrets(db, rotation.secrets),
      tokenDigestKept: keepKey(db, rotation.secrets, TOKEN_DIGEST, rotation.tokenDigest, now),
      blindIndexKept: keepKey(db, rotation.secrets, BLIND_INDEX, rotation.blindIndex, now),
      unsubscribeLinksKept: keepKey(db, rotation.secrets, UNSUBSCRIBE_LINKS, rotation.unsubscribeLinks, now),
    }));
    db.pragma('wal_checkpoint(TRUNCATE)');
    return counts;
  } finally {
    db.close();
  }
}
