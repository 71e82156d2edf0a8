/**
 * Keys a rotation of the master secret keeps (migration 18), sealed in the secret
 * box like any stored secret. Each was derived from the master, and what was made
 * with it is stored only as made: tenants' API keys as digests (`token-digest`),
 * addresses and words of messages as blind-index digests (`blind-index`). So the
 * key must outlive the master it was derived from.
 */
import type { SecretBox } from '../core/index.js';
import type { SqliteDatabase } from './database.js';

export const TOKEN_DIGEST = 'token-digest';
export const BLIND_INDEX = 'blind-index';
/** One-click unsubscribe links (security/unsubscribe-links.ts): they live on in mail already delivered. */
export const UNSUBSCRIBE_LINKS = 'unsubscribe-links';

/** The context a kept key is sealed under: one purpose's key copied to another does not open. */
export const keptKeyContext = (purpose: string): string => `kept-key:${purpose}`;

/** The key the database keeps for `purpose`, opened; null when it keeps none (no rotation yet). */
export function readKeptKey(db: SqliteDatabase, secrets: SecretBox, purpose: string): Buffer | null {
  const sealed = db.prepare<[string], string>(`SELECT sealed FROM kept_keys WHERE purpose = ?`).pluck().get(purpose);
  if (sealed === undefined) return null;
  try {
    return Buffer.from(secrets.open(sealed, keptKeyContext(purpose)), 'base64');
  } catch (error) {
    // A secret every start reads: a master key that does not open it is the likeliest mistake after a rotation.
    throw new Error(
      'the secret key does not open this database: after `mailproxy keys rotate --new-key-file`, set security.secret_key ' +
        'to the new key (keeping the old one in security.previous_secret_keys until the rotation has finished)',
      { cause: error },
    );
  }
}

/** Keeps `key` for `purpose` unless one is kept already; answers whether it was written. */
export function keepKey(db: SqliteDatabase, secrets: SecretBox, purpose: string, key: Buffer, now: number): boolean {
  const sealed = secrets.seal(key.toString('base64'), keptKeyContext(purpose));
  return (
    db
      .prepare(`INSERT INTO kept_keys (purpose, sealed, created_at) VALUES (?, ?, ?) ON CONFLICT (purpose) DO NOTHING`)
      .run(purpose, sealed, now).changes === 1
  );
}
