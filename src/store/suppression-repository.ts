/**
 * SQLite side of the tenants' suppression lists. An entry is keyed by its address's
 * blind-index digest and keeps the address only sealed (bound to the tenant and the
 * digest), so the file, its WAL and its backups hold no suppressed address in clear;
 * every match is a digest's, any case of the address alike.
 */
import { addressDigest, addressDigests, normalizeAddress, type BlindIndex, type SecretBox } from '../core/index.js';
import type { SuppressionRecord, SuppressionSource } from '../core/bounce/index.js';
import type { MessageQueue } from '../core/message/index.js';
import type { SuppressionEntry, SuppressionRepository } from '../core/tenant/index.js';
import type { SqliteDatabase } from './database.js';

/** What the secret box binds a sealed address to: a sealed value copied to another entry does not open. */
export const suppressionContext = (tenantId: string, digest: string): string => `suppression:${tenantId}:${digest}`;

type Keyed = { tenant_id: string; address_digest: string };
/** The sealed column and its context (a key rotation reseals it: store/key-rotation.ts). */
export const SUPPRESSION_SEALED_COLUMN = {
  column: 'address_sealed',
  context: (row: Keyed) => suppressionContext(row.tenant_id, row.address_digest),
} as const;

interface SuppressionRow extends Keyed {
  address_sealed: string;
  reason: string | null;
  source: SuppressionSource;
  created_at: number;
  expires_at: number | null;
}

const COLUMNS = 'tenant_id, address_digest, address_sealed, reason, source, created_at, expires_at';
const LIVE = '(expires_at IS NULL OR expires_at > @now)';

export interface SuppressionStoreDeps {
  secrets: SecretBox;
  index: BlindIndex;
}

export function createSqliteSuppressionRepository(
  db: SqliteDatabase,
  { secrets, index }: SuppressionStoreDeps,
): SuppressionRepository {
  const toEntry = (row: SuppressionRow): SuppressionEntry => ({
    tenantId: row.tenant_id,
    address: secrets.open(row.address_sealed, SUPPRESSION_SEALED_COLUMN.context(row)),
    digest: row.address_digest,
    reason: row.reason,
    source: row.source,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  });
  // The primary key (tenant_id, address_digest) serves the page seek and the exact-address filter.
  const list = db.prepare<Record<string, unknown>, SuppressionRow>(`SELECT ${COLUMNS} FROM suppressions
    WHERE tenant_id = @tenant AND address_digest > @after AND (@digest IS NULL OR address_digest = @digest) AND ${LIVE}
    ORDER BY address_digest LIMIT @limit`);
  const get = db.prepare<Record<string, unknown>, SuppressionRow>(
    `SELECT ${COLUMNS} FROM suppressions WHERE tenant_id = @tenant AND address_digest = @digest AND ${LIVE}`,
  );
  // An operator's entry and a recipient's unsubscribe are theirs: a bounce or complaint does not replace them while
  // they last. An unsubscribe (permanent) replaces any entry, so that it outlasts one that expires; an operator's
  // replaces any but an unsubscribe (removing that is an explicit DELETE).
  const upsert = db.prepare(`INSERT INTO suppressions (${COLUMNS})
    VALUES (@tenant_id, @address_digest, @address_sealed, @reason, @source, @created_at, @expires_at)
    ON CONFLICT (tenant_id, address_digest) DO UPDATE SET address_sealed = excluded.address_sealed, reason = excluded.reason,
      source = excluded.source, created_at = excluded.created_at, expires_at = excluded.expires_at
    WHERE excluded.source = 'unsubscribe' OR (excluded.source = 'manual' AND suppressions.source <> 'unsubscribe')
      OR suppressions.source NOT IN ('manual', 'unsubscribe') OR (suppressions.expires_at IS NOT NULL AND suppressions.expires_at <= excluded.created_at)`);
  const remove = db.prepare(`DELETE FROM suppressions WHERE tenant_id = ? AND address_digest = ?`);
  const digestOf = (address: string): string => addressDigest(index, address);

  return {
    list: (tenantId, options) =>
      list
        .all({
          tenant: tenantId,
          after: options.after ?? '',
          digest: options.address === null ? null : digestOf(options.address),
          now: options.now,
          limit: options.limit,
        })
        .map(toEntry),
    get: (tenantId, address, now) => {
      const row = get.get({ tenant: tenantId, digest: digestOf(address), now });
      return row === undefined ? null : toEntry(row);
    },
    upsert: (record) => {
      upsert.run(sealedRow(record, digestOf(record.address), secrets));
    },
    remove: (tenantId, address) => remove.run(tenantId, digestOf(address)).changes > 0,
    digestOf,
  };
}

/** A record as its row: the address sealed under its entry's context. */
export function sealedRow(record: SuppressionRecord, digest: string, secrets: SecretBox): SuppressionRow {
  return {
    tenant_id: record.tenantId,
    address_digest: digest,
    address_sealed: secrets.seal(record.address, suppressionContext(record.tenantId, digest)),
    reason: record.reason,
    source: record.source,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
  };
}

/**
 * Which of `addresses` (answered normalized) are on the tenant's list now, as intake asks it
 * (core/message/queue.ts `suppressed`): their digests, looked up at once.
 */
export function createSuppressedLookup(db: SqliteDatabase, index: BlindIndex): MessageQueue['suppressed'] {
  const rows = db
    .prepare<[string, number, string], string>(
      `SELECT address_digest FROM suppressions WHERE tenant_id = ? AND (expires_at IS NULL OR expires_at > ?)
        AND address_digest IN (SELECT value FROM json_each(?))`,
    )
    .pluck();
  // One recipient (every SMTP RCPT TO) is a primary-key probe, without json_each's parse.
  const row = db
    .prepare<[string, string, number], string>(
      `SELECT address_digest FROM suppressions WHERE tenant_id = ? AND address_digest = ? AND (expires_at IS NULL OR expires_at > ?)`,
    )
    .pluck();
  return (tenantId, addresses, now) => {
    if (addresses.length === 0) return new Set();
    const digests = addressDigests(index, addresses);
    const found = new Set(
      digests.length === 1
        ? row.all(tenantId, digests[0] ?? '', now)
        : rows.all(tenantId, now, JSON.stringify(digests)),
    );
    return new Set(addresses.filter((_, at) => found.has(digests[at] ?? '')).map(normalizeAddress));
  };
}
