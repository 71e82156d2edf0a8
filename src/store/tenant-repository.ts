/** SQLite tenants: reads (cached), writes and API keys; the rows and their sealed credentials are tenant-rows.ts's. */
import type { SecretBox, TenantRepository } from '../core/index.js';
import type { Tenant } from '../core/tenant/index.js';
import type { SqliteDatabase } from './database.js';
import { REPORTABLE_SQL } from './outbox-predicates.js';
import { createTenantRowMapper, TENANT_COLUMNS as COLUMNS, type TenantRow } from './tenant-rows.js';
import type { RoutingRule } from '../core/account/index.js';

/**
 * Message states that still need work; a tenant or account holding them is not
 * deleted lightly. Exactly the predicate of the `messages_pending` index: a query
 * that spells it so can use that index.
 */
export const PENDING_STATES_SQL = `('queued', 'deferred', 'sending')`;

type TenantMapper = ReturnType<typeof createTenantRowMapper>;
type TenantCache = ReturnType<typeof createTenantCache>;

/** The tenants as this connection caches them: rows written to its tables otherwise (fleet config) must forget them. */
export interface SqliteTenantRepository extends TenantRepository {
  /** Drops the tenants and key holders read so far: rows were written beside the repository. */
  forgetCached(): void;
}

export function createSqliteTenantRepository(db: SqliteDatabase, secrets: SecretBox): SqliteTenantRepository {
  const mapper = createTenantRowMapper(secrets);
  const cache = createTenantCache(db);
  return {
    ...createTenantReads(db, mapper, cache),
    ...createTenantWrites(db, mapper, cache),
    forgetCached: cache.forget,
  };
}

/** Reads: tenants and key holders answered from the cache when this connection has seen them. */
function createTenantReads(
  db: SqliteDatabase,
  { toTenant }: TenantMapper,
  { keyHolders, tenants, current }: TenantCache,
): Pick<TenantRepository, 'get' | 'isActive' | 'routes' | 'list' | 'findKeyHolder' | 'countPendingMessages'> {
  const byId = db.prepare<[string], TenantRow>(`SELECT ${COLUMNS} FROM tenants WHERE id = ?`);
  const byKey = db.prepare<[string], { id: string; api_key_expires_at: number | null }>(
    `SELECT id, api_key_expires_at FROM tenants WHERE api_key_hash = ?`,
  );
  const all = db.prepare<[], TenantRow>(`SELECT ${COLUMNS} FROM tenants ORDER BY id`);
  const activeOf = db.prepare<[string], { active: number }>(`SELECT active FROM tenants WHERE id = ?`);
  const routesOf = db.prepare<[string], { routes: string | null }>(`SELECT routes FROM tenants WHERE id = ?`);
  const pending = db.prepare<[string], { n: number }>(
    `SELECT count(*) AS n FROM messages WHERE tenant_id = ? AND state IN ${PENDING_STATES_SQL}`,
  );
  return {
    get: (id) => {
      current();
      const known = tenants.get(id);
      if (known !== undefined) return known;
      const row = byId.get(id);
      if (row === undefined) return null;
      const tenant = toTenant(row);
      if (db.inTransaction) return tenant;
      Object.freeze(tenant.clientAuth);
      tenants.set(id, Object.freeze(tenant));
      return tenant;
    },
    isActive: (id) => {
      const row = activeOf.get(id);
      return row === undefined ? null : row.active === 1;
    },
    routes: (id) => {
      const routes = routesOf.get(id)?.routes ?? null;
      return routes === null ? [] : (JSON.parse(routes) as RoutingRule[]);
    },
    list: () => all.all().map(toTenant),
    findKeyHolder: (hash) => {
      current();
      const known = keyHolders.get(hash);
      if (known !== undefined) return known;
      const row = byKey.get(hash);
      if (row === undefined) return null;
      const holder = { tenantId: row.id, apiKeyExpiresAt: row.api_key_expires_at };
      keyHolders.set(hash, holder);
      return holder;
    },
    countPendingMessages: (id) => pending.get(id)?.n ?? 0,
  };
}

/** Writes: each drops what the cache holds first. */
function createTenantWrites(
  db: SqliteDatabase,
  { toParams }: TenantMapper,
  { forget }: TenantCache,
): Pick<TenantRepository, 'insert' | 'update' | 'replaceApiKey' | 'delete'> {
  const insert = db.prepare(`INSERT INTO tenants (${COLUMNS}, api_key_hash)
    VALUES (@id, @name, @client_base_url, @client_sync_path, @client_attachment_path, @client_auth_sealed,
      @client_signing_secret_sealed, @active, @routes, @sending_domains_sealed, @list_unsubscribe, @attachment_offload, @api_key_created_at, @api_key_expires_at, @created_at, @updated_at, @api_key_hash)`);
  const update = db.prepare(`UPDATE tenants SET name = @name, client_base_url = @client_base_url,
    client_sync_path = @client_sync_path, client_attachment_path = @client_attachment_path,
    client_auth_sealed = @client_auth_sealed, client_signing_secret_sealed = @client_signing_secret_sealed, active = @active, routes = @routes,
    sending_domains_sealed = @sending_domains_sealed, list_unsubscribe = @list_unsubscribe, attachment_offload = @attachment_offload, updated_at = @updated_at WHERE id = @id`);
  const replaceKey = db.prepare(`UPDATE tenants SET api_key_hash = ?, api_key_created_at = ?, api_key_expires_at = ?,
    updated_at = ? WHERE id = ?`);
  const remove = db.prepare(`DELETE FROM tenants WHERE id = ?`);
  // Its messages went with it; their report events waited for a report that will not come now.
  const removeReportEvents = db.prepare(`DELETE FROM outbox WHERE tenant_id = ? AND ${REPORTABLE_SQL}
    AND seq <= (SELECT cursor_seq FROM mirror_state WHERE id = 1)`);
  // A new tenant is told of what happens from now on; an id used before does not inherit its predecessor's events.
  const startReports = db.prepare(
    `INSERT INTO report_state (tenant_id, cursor_seq) VALUES (?, (SELECT coalesce(max(seq), 0) FROM outbox))`,
  );
  return {
    insert: (tenant, apiKeyHash) => {
      forget();
      insert.run({
        ...toParams(tenant),
        api_key_hash: apiKeyHash,
        api_key_created_at: tenant.apiKeyCreatedAt,
        api_key_expires_at: tenant.apiKeyExpiresAt,
        created_at: tenant.createdAt,
      });
      startReports.run(tenant.id);
    },
    update: (tenant) => {
      forget();
      update.run(toParams(tenant));
    },
    replaceApiKey: (id, hash, createdAt, expiresAt) => {
      forget();
      replaceKey.run(hash, createdAt, expiresAt, createdAt, id);
    },
    delete: (id) => {
      forget();
      remove.run(id);
      removeReportEvents.run(id);
    },
  };
}

/** What this connection has read of tenants and key holders, dropped on any write here or another connection's commit. */
function createTenantCache(db: SqliteDatabase) {
  // Every request looks its key up: the holders found are kept until any tenant is written
  // here or another connection commits (data_version). Misses are not kept, so that guessed
  // keys cannot grow the map.
  const keyHolders = new Map<string, { tenantId: string; apiKeyExpiresAt: number | null }>();
  // Tenants read, kept likewise: a tenant is read at every SMTP MAIL FROM, admission and handoff
  // (a query and two deciphered secrets a message). Kept only when read outside a
  // transaction (what a transaction reads may still roll back), and frozen (callers share them).
  const tenants = new Map<string, Tenant>();
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let seenVersion = dataVersion.get();
  const forget = (): void => {
    keyHolders.clear();
    tenants.clear();
  };
  /** Both maps answer only what this connection has seen: another connection's commit drops them. */
  const current = (): void => {
    const version = dataVersion.get();
    if (version === seenVersion) return;
    seenVersion = version;
    forget();
  };
  return { keyHolders, tenants, forget, current };
}
