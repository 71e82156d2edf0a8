/**
 * Migration 22 on a database written since bodies were sealed (migrations 17-21): each message's
 * data keys move from data_keys into its row and its sealed body beside it (its search terms too,
 * migration 24), and everything still opens as before; a shredded message stays shredded, a spool
 * keeps its key in data_keys. Then the store's own path: a body shredded by an erasure is
 * unreadable at once, and retention removes its sealed bytes.
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { loadMigrations, migrate } from '../../src/store/migrations.js';
import { BODY_COLUMNS, openStored } from '../../src/store/stored-body.js';
import { openTestStore, rawMessage, withMainAccount } from '../helpers/sqlite-store.js';

const seal = createBodySeal([keyEncryptionKey(randomBytes(32))]);
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** A message row as migration 21 left it, its keys' ids in data_keys. */
function oldMessage(db: Database.Database, pk: number, columns: Record<string, unknown>): void {
  db.prepare(
    `INSERT INTO messages (pk, tenant_id, id, account_id, source, mail_from, rcpt_to, next_attempt_at, created_at, updated_at,
       body, key_id, personal, personal_key_id, search_terms, spool_id, body_shredded_at)
     VALUES (@pk, 'acme', @id, 'main', 'http', '', '[]', 0, 0, 0, @body, @key_id, @personal, @personal_key_id, @terms, @spool_id, @shredded)`,
  ).run({
    pk,
    id: `m${pk}`,
    body: null,
    key_id: null,
    personal: null,
    personal_key_id: null,
    terms: null,
    spool_id: null,
    shredded: null,
    ...columns,
  });
}

const storeKey = (db: Database.Database, wrapped: Uint8Array): number =>
  Number(
    db.prepare(`INSERT INTO data_keys (tenant_id, wrapped, created_at) VALUES ('acme', ?, 0)`).run(wrapped)
      .lastInsertRowid,
  );

describe('keys in the row, bodies beside it (migration 22)', () => {
  it('moves the keys and sealed bodies of a database written since migration 17, and every body still opens', () => {
    const db = new Database(':memory:');
    const migrations = loadMigrations();
    const at21 = migrations.findIndex((migration) => migration.version === 22);
    migrate(db, migrations.slice(0, at21));
    db.prepare(
      `INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`,
    ).run();
    withMainAccount(db);
    const bodyKey = seal.newKey();
    const envelopeKey = seal.newKey();
    const spoolKey = seal.newKey();
    oldMessage(db, 1, {
      body: seal.seal(bodyKey, 'acme', 0, Buffer.from('the body of m1')),
      key_id: storeKey(db, bodyKey.wrapped),
      personal: Buffer.from('sealed envelope'),
      personal_key_id: storeKey(db, envelopeKey.wrapped),
      terms: 'wabc tdef',
    });
    // Shredded by retention before the upgrade: no key, no body; its envelope key stays.
    oldMessage(db, 2, {
      personal: Buffer.from('sealed envelope 2'),
      personal_key_id: storeKey(db, envelopeKey.wrapped),
      shredded: 1,
    });
    const spoolId = Number(
      db.prepare(`INSERT INTO spools (created_at, key_id) VALUES (0, ?)`).run(storeKey(db, spoolKey.wrapped))
        .lastInsertRowid,
    );
    oldMessage(db, 3, { spool_id: spoolId });

    expect(migrate(db, migrations)[0]).toBe(22);

    const rows = db.prepare(`SELECT pk, ${BODY_COLUMNS}, personal_key FROM messages ORDER BY pk`).all() as Array<{
      pk: number;
      body: Buffer | null;
      key: Buffer | null;
      personal_key: Buffer | null;
    }>;
    const [first, second, third] = rows;
    expect(
      openStored(seal, 'acme', { key: first?.key ?? null, parts: first?.body ? [first.body] : [] })?.toString(),
    ).toBe('the body of m1');
    expect(first?.personal_key).toEqual(Buffer.from(envelopeKey.wrapped));
    // Shredded stays shredded: an empty key, never a body in clear.
    expect([second?.body, second?.key, second?.personal_key]).toEqual([
      null,
      Buffer.alloc(0),
      Buffer.from(envelopeKey.wrapped),
    ]);
    expect([third?.body, third?.key]).toEqual([null, null]);
    // Only the spool's key is left in data_keys; the message columns of migration 17 and 19 are gone.
    expect(db.prepare(`SELECT wrapped FROM data_keys`).pluck().all()).toEqual([Buffer.from(spoolKey.wrapped)]);
    const columns = (db.prepare(`SELECT name FROM pragma_table_info('messages')`).pluck().all() as string[]).filter(
      (name) => ['body', 'key_id', 'personal_key_id', 'body_key', 'personal_key'].includes(name),
    );
    expect(columns).toEqual(['body_key', 'personal_key']);
    expect(db.prepare(`SELECT pk FROM message_bodies`).pluck().all()).toEqual([1]);
    // Its search terms moved beside it too (migration 24), for the indexer to index again.
    expect(db.prepare(`SELECT pk, search_terms FROM message_search_terms`).all()).toEqual([
      { pk: 1, search_terms: 'wabc tdef' },
    ]);
    expect(db.prepare(`SELECT indexed_pk FROM search_state`).pluck().get()).toBe(0);
    db.close();
  });

  it('leaves an erased body unreadable at once, and retention removes its sealed bytes', () => {
    const { store, read } = openTestStore(cleanups, withMainAccount);
    store.queue.enqueue([rawMessage('a', 'ann@example.net'), rawMessage('b', 'bob@example.net')], 1, null);
    store.erasure.erase({ kind: 'address', tenantId: 'acme', address: 'ann@example.net' }, 2, null);
    // The key went with the erasure: the bytes left beside the row open to nothing, and are listed.
    const left = () =>
      read<{ id: string; key: Buffer | null; sealed: number; listed: number }>(
        `SELECT id, body_key AS key, (SELECT count(*) FROM message_bodies b WHERE b.pk = m.pk) AS sealed,
           (SELECT count(*) FROM shredded_bodies s WHERE s.pk = m.pk) AS listed FROM messages m ORDER BY pk`,
      );
    expect(left().map(({ id, key, sealed, listed }) => [id, key === null, sealed, listed])).toEqual([
      ['a', true, 1, 1],
      ['b', false, 1, 0],
    ]);
    expect(store.messages.removeShreddedBodies()).toBe(1);
    expect(left().map(({ id, sealed, listed }) => [id, sealed, listed])).toEqual([
      ['a', 0, 0],
      ['b', 1, 0],
    ]);
    expect(store.messages.removeShreddedBodies()).toBe(0);
  });
});
