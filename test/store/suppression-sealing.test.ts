/**
 * Suppressions kept sealed (migration 20): the database file, its WAL and a backup hold no
 * suppressed address in clear, not in the list, its audit rows nor its events; every match
 * (intake's lookup, get, remove, the exact filter) goes through the digest in any case; the
 * clear rows of an earlier version are sealed at the first open, once; a key rotation reseals
 * them and the digests stay the same.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSuppressionService } from '../../src/core/tenant/index.js';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { rotateStoredKeys } from '../../src/store/key-rotation.js';
import { loadMigrations, migrate } from '../../src/store/migrations.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/sqlite-store.js';
import { openTestStore } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const NOW = 1_800_000_000_000;
const ANN = 'ann.rossi@example.net';
const admin = { principal: { kind: 'admin' as const }, correlationId: null };

/** Where `needle` (any case) appears in the file and its WAL. */
function clearIn(path: string, needle: string): string[] {
  return [path, `${path}-wal`].filter(
    (file) => existsSync(file) && readFileSync(file).toString('latin1').toLowerCase().includes(needle.toLowerCase()),
  );
}

const service = (store: SqliteStore) =>
  createSuppressionService({ store, clock: { now: () => NOW }, ids: { uuid: () => randomBytes(8).toString('hex') } });

const listed = (store: SqliteStore, address: string | null = null) =>
  store.suppressions.list('acme', { after: null, limit: 100, address, now: NOW });

describe('sealed suppressions', () => {
  it('keeps a suppressed address nowhere in clear: the file, its WAL, a backup, the audit and the events', async () => {
    const { store, path, read } = openTestStore(cleanups);
    const added = service(store).add(admin, 'acme', { address: 'Ann.Rossi@Example.NET', reason: 'asked' });
    expect(added).toMatchObject({ address: ANN, digest: store.suppressions.digestOf(ANN) });
    expect(listed(store).map((entry) => entry.address)).toEqual([ANN]);

    expect(clearIn(path, ANN)).toEqual([]);
    expect(clearIn(path, 'ann.rossi')).toEqual([]);
    const backup = await store.snapshot();
    try {
      expect(clearIn(backup.path, ANN)).toEqual([]);
    } finally {
      backup.remove();
    }
    // The audit row and the outbox event name the entry by its digest.
    const digest = added.digest;
    expect(read<{ target: string; params: string }>(`SELECT target, params FROM command_log`)).toEqual([
      {
        target: `acme/${digest}`,
        params: JSON.stringify({ address_digest: digest, reason: 'asked', source: 'manual', expires_at: null }),
      },
    ]);
    expect(read<{ aggregate_id: string }>(`SELECT aggregate_id FROM outbox`)).toEqual([
      { aggregate_id: `acme/${digest}` },
    ]);
    // The row itself: a digest and a sealed value, nothing of the address.
    const [row] = read<Record<string, unknown>>(`SELECT * FROM suppressions`);
    expect(row).toMatchObject({ tenant_id: 'acme', address_digest: digest, reason: 'asked', source: 'manual' });
    expect(String(row?.address_sealed)).not.toContain('example');
  });

  it('matches the address in any case: intake, get, the exact filter and remove', () => {
    const { store } = openTestStore(cleanups);
    const suppressions = service(store);
    suppressions.add(admin, 'acme', { address: ANN });
    suppressions.add(admin, 'acme', { address: 'bob@example.org', expiresAt: NOW + 1 });

    expect([...store.queue.suppressed('acme', ['ANN.ROSSI@example.net'], NOW)]).toEqual([ANN]);
    expect(
      [...store.queue.suppressed('acme', ['x@example.net', 'Bob@Example.ORG', 'Ann.Rossi@EXAMPLE.net'], NOW)].sort(),
    ).toEqual([ANN, 'bob@example.org']);
    // Expired by then, and another tenant's list is another's.
    expect([...store.queue.suppressed('acme', ['bob@example.org'], NOW + 1)]).toEqual([]);
    expect([...store.queue.suppressed('other', [ANN], NOW)]).toEqual([]);
    expect(store.suppressions.get('acme', 'Ann.Rossi@Example.Net', NOW)?.address).toBe(ANN);
    expect(listed(store, 'ANN.rossi@example.NET').map((entry) => entry.address)).toEqual([ANN]);
    expect(listed(store, 'nobody@example.net')).toEqual([]);

    suppressions.remove(admin, 'acme', 'Ann.ROSSI@example.net');
    expect(store.suppressions.get('acme', ANN, NOW)).toBeNull();
    expect(() => suppressions.remove(admin, 'acme', ANN)).toThrow('suppression not found');
  });

  it('pages in digest order, the cursor a digest', () => {
    const { store } = openTestStore(cleanups);
    const suppressions = service(store);
    const addresses = ['a@example.net', 'b@example.net', 'c@example.net', 'd@example.net', 'e@example.net'];
    for (const address of addresses) suppressions.add(admin, 'acme', { address });
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = suppressions.list(admin, 'acme', { limit: 2, ...(after === undefined ? {} : { after }) });
      seen.push(...page.suppressions.map((entry) => entry.digest));
      if (page.next === null) break;
      expect(page.next).toBe(page.suppressions.at(-1)?.digest);
      after = page.next;
    }
    expect(seen).toEqual([...seen].sort());
    expect(seen.sort()).toEqual(addresses.map((address) => store.suppressions.digestOf(address)).sort());
  });

  it('is erased by address with its digest-named audit row and event, and the clear-named ones of an earlier version', () => {
    const { store, path, read } = openTestStore(cleanups);
    const { digest } = service(store).add(admin, 'acme', { address: ANN, reason: 'asked' });
    service(store).add(admin, 'acme', { address: 'bob@example.org' });
    // What an earlier version wrote: the address in the aggregate id, the audit target and the data.
    const legacy = new Database(path);
    try {
      legacy
        .prepare(
          `INSERT INTO outbox (id, aggregate_type, aggregate_id, event_type, event_version, tenant_id, payload, occurred_at)
          VALUES ('legacy-event', 'suppression', 'acme/${ANN}', 'suppression.removed', 1, 'acme', '{"address":"${ANN}"}', 1)`,
        )
        .run();
      legacy
        .prepare(
          `INSERT INTO command_log (occurred_at, actor, command, tenant_id, target, params)
          VALUES (1, 'admin', 'suppression.remove', 'acme', 'acme/${ANN}', '{"address":"${ANN}"}')`,
        )
        .run();
    } finally {
      legacy.close();
    }

    const counts = store.erasure.erase(
      { kind: 'address', tenantId: 'acme', address: 'Ann.Rossi@Example.NET' },
      NOW,
      null,
    );
    // The scrub after it, as the daemon's search index loop runs it: no message's terms to take out.
    expect(store.erasure.scrub(100)).toBe(counts.messages);
    expect(counts).toMatchObject({ suppressions: 1, events: 2 });
    expect(listed(store).map((entry) => entry.address)).toEqual(['bob@example.org']);
    for (const needle of [ANN, digest]) {
      expect(clearIn(path, needle)).toEqual([]);
      expect(
        read<{ text: string }>(
          `SELECT aggregate_id || ' ' || coalesce(payload, '') AS text FROM outbox
          UNION ALL SELECT coalesce(target, '') || ' ' || params FROM command_log`,
        ).filter((row) => row.text.includes(needle)),
      ).toEqual([]);
    }
    // Bob's entry and its records are untouched.
    const bob = store.suppressions.digestOf('bob@example.org');
    expect(read(`SELECT target FROM command_log WHERE target = 'acme/${bob}'`)).toHaveLength(1);
  });

  it('seals the clear entries of an earlier version at the first open, once, and leaves none of them in the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-supp-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'db.sqlite');
    // A database as migration 19 left it, its suppressions in clear.
    const old = new Database(path);
    old.pragma('journal_mode = WAL');
    migrate(old, loadMigrations().slice(0, 19));
    old.exec(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
    );
    const insert = old.prepare(
      `INSERT INTO suppressions (tenant_id, address, reason, source, created_at, expires_at) VALUES ('acme', ?, ?, ?, ?, ?)`,
    );
    insert.run(ANN, '5.1.1 user unknown', 'bounce', 1000, null);
    insert.run('carla.bianchi@example.org', 'asked', 'manual', 2000, NOW + 60_000);
    old.close();
    expect(clearIn(path, 'carla.bianchi')).not.toEqual([]);

    const secrets = createAesGcmSecretBox(randomBytes(32));
    const indexKey = randomBytes(32);
    const open = () => {
      const store = createSqliteStore({
        path,
        secrets,
        bodies: createBodySeal([keyEncryptionKey(randomBytes(32))]),
        blindIndex: () => createBlindIndex(indexKey),
        ids: { uuid: () => randomBytes(8).toString('hex') },
        now: () => NOW,
      });
      cleanups.push(() => store.close());
      return store;
    };
    const store = open();
    // From migration 20 (the sealed suppressions) to the latest, each once.
    const latest = loadMigrations().length;
    expect(store.migrated).toEqual(Array.from({ length: latest - 19 }, (_, index) => 20 + index));
    const entries = listed(store).map(({ address, reason, source, createdAt, expiresAt }) => ({
      address,
      reason,
      source,
      createdAt,
      expiresAt,
    }));
    expect(entries.sort((a, b) => a.createdAt - b.createdAt)).toEqual([
      { address: ANN, reason: '5.1.1 user unknown', source: 'bounce', createdAt: 1000, expiresAt: null },
      {
        address: 'carla.bianchi@example.org',
        reason: 'asked',
        source: 'manual',
        createdAt: 2000,
        expiresAt: NOW + 60_000,
      },
    ]);
    expect([...store.queue.suppressed('acme', ['Carla.Bianchi@Example.org'], NOW)]).toEqual([
      'carla.bianchi@example.org',
    ]);
    expect(clearIn(path, ANN)).toEqual([]);
    expect(clearIn(path, 'carla.bianchi')).toEqual([]);
    store.close();

    // A second open has nothing left to convert, and finds the same entries.
    const again = open();
    expect(again.migrated).toEqual([]);
    expect(listed(again)).toHaveLength(2);
    const reader = new Database(path, { readonly: true });
    try {
      expect(reader.prepare(`SELECT name FROM sqlite_master WHERE name = 'suppressions_clear'`).all()).toEqual([]);
    } finally {
      reader.close();
    }
  });

  it('is resealed by a key rotation, under digests that stay the same', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-supp-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'db.sqlite');
    const [oldMaster, newMaster, oldIndex, newIndex] = [0, 1, 2, 3].map(() => randomBytes(32)) as [
      Buffer,
      Buffer,
      Buffer,
      Buffer,
    ];
    const open = (secrets: Buffer[], indexKey: Buffer) => {
      const store = createSqliteStore({
        path,
        secrets: createAesGcmSecretBox(secrets),
        bodies: createBodySeal([keyEncryptionKey(randomBytes(32))]),
        blindIndex: (kept) => createBlindIndex(kept ?? indexKey),
        ids: { uuid: () => randomBytes(8).toString('hex') },
        now: () => NOW,
      });
      cleanups.push(() => store.close());
      return store;
    };
    const before = open([oldMaster], oldIndex);
    const seed = new Database(path);
    seed.exec(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
    );
    seed.close();
    service(before).add(admin, 'acme', { address: ANN });
    const digest = before.suppressions.digestOf(ANN);
    before.close();

    const counts = rotateStoredKeys(
      path,
      {
        bodies: createBodySeal([keyEncryptionKey(randomBytes(32))]),
        secrets: createAesGcmSecretBox([newMaster, oldMaster]),
        tokenDigest: randomBytes(32),
        blindIndex: oldIndex,
        unsubscribeLinks: randomBytes(32),
      },
      NOW,
    );
    expect(counts?.secrets.failed).toBe(0);

    // The new master alone opens it; the kept index key finds it by the same digest.
    const after = open([newMaster], newIndex);
    expect(after.suppressions.digestOf(ANN)).toBe(digest);
    expect(after.suppressions.get('acme', ANN, NOW)?.address).toBe(ANN);
  });
});
