/**
 * Keys a rotation of the master secret keeps (migration 18), sealed in the secret
 * box like any stored secret. The one kept today is the key tenants' API keys
 * are digested with: only their digests are stored, so it must outlive the
 * master it was derived from.
 */
import type { SecretBox } from '../core/index.js';
import type { SqliteDatabase } from './database.js';

export const TOKEN_DIGEST = 'token-digest';

/** The context a kept key is sealed under: one purpose's key copied to another does not open. */
export const keptKeyContext = (purpose: string): string => `kept-key:${purpose}`;

/** The API keys' digest key the database keeps, opened; null when it keeps none (no rotation yet). */
export function readTokenDigestKey(db: SqliteDatabase, secrets: SecretBox): Buffer | null {
  const sealed = db
    .prepare<[string], string>(`SELECT sealed FROM kept_keys WHERE purpose = ?`)
    .pluck()
    .get(TOKEN_DIGEST);
  if (sealed === undefined) return null;
  try {
    return Buffer.from(secrets.open(sealed, keptKeyContext(TOKEN_DIGEST)), 'base64');
  } catch (error) {
    // The one secret every start reads: a master key that does not open it is the likeliest mistake after a rotation.
    throw new Error(
      'the secret key does not open this database: after `mailproxy keys rotate --new-key-file`, set security.secret_key ' +
        'to the new key (keeping the old one in security.previous_secret_keys until the rotation has finished)',
      { cause: error },
    );
  }
}

/** Keeps `key` as the API keys' digest key unless one is kept already; answers whether it was written. */
export function keepTokenDigestKey(db: SqliteDatabase, secrets: SecretBox, key: Buffer, now: number): boolean {
  const sealed = secrets.seal(key.toString('base64'), keptKeyContext(TOKEN_DIGEST));
  return (
    db
      .prepare(`INSERT INTO kept_keys (purpose, sealed, created_at) VALUES (?, ?, ?) ON CONFLICT (purpose) DO NOTHING`)
      .run(TOKEN_DIGEST, sealed, now).changes === 1
  );
}
