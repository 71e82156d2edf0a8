/**
 * `mailproxy keys rotate` (the built CLI, as a process) on the data directory of a real daemon
 * that stored sealed bodies, a relay password, a client credential and a tenant API key: after
 * it the new key alone opens everything, the bodies' bytes are those they were, and the daemon
 * started again relays through the resealed password and takes the same tenant API key. A
 * rotation stopped after its database commit leaves a daemon that starts, and the command run
 * again finishes it. With the key in the configuration the new one comes from a file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createBlindIndex } from '../../src/security/blind-index.js';
import { createBodySeal } from '../../src/security/body-seal.js';
import { keyRing, loadKeyMaterial } from '../../src/security/key-material.js';
import { beginFileRotation } from '../../src/security/key-rotation.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { rotateStoredKeys } from '../../src/store/key-rotation.js';
import { createSqliteStore } from '../../src/store/sqlite-store.js';
import { createUnsubscribeLinks } from '../../src/security/unsubscribe-links.js';
import { BODY_COLUMNS, openStored } from '../../src/store/stored-body.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { runCli } from '../helpers/cli-process.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';

const HOUR = 3_600_000;
const RELAY = { user: 'mailer', pass: 'relay-password-kept-sealed' };
const CLIENT_TOKEN = 'client-token-kept-sealed-0123';
const BODIES = ['first body, sealed under its own key', 'second body, sealed under its own key'];

interface Seeded {
  dataDir: string;
  path: string;
  sink: SmtpSink;
  /** The tenant's API key, digested with a key the master derived. */
  apiKey: string;
}

describe('mailproxy keys rotate', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A daemon's data directory: tenant acme (a client credential), account main (a relay password), two waiting bodies. */
  async function seeded(env: Record<string, string> = {}): Promise<Seeded> {
    const sink = await startSmtpSink({ auth: RELAY });
    cleanups.push(() => sink.stop());
    const dataDir = mkdtempSync(join(tmpdir(), 'mailproxy-keys-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const fx = await startQueueFixture({ dataDir, env });
    const apiKey = await fx.createTenant('acme', { client_auth: { method: 'bearer', token: CLIENT_TOKEN } });
    await fx.createAccount('acme', 'main', sink, { is_default: true, user: RELAY.user, password: RELAY.pass });
    // A sending domain: its DKIM private key is sealed in the tenant's row too.
    const domain = await fx.admin('POST', '/domains', { tenant_id: 'acme', domain: 'example.com', selector: 'mp1' });
    expect(domain.status, domain.text).toBe(201);
    const later = Math.floor((fx.clock.now() + HOUR) / 1000);
    const posted = await fx.post(
      apiKey,
      BODIES.map((body, index) => message(`m-${index}`, { body, deferred_ts: later })),
    );
    expect(posted.body.queued).toBe(2);
    await fx.stop();
    return { dataDir, path: join(dataDir, 'mailproxy.db'), sink, apiKey };
  }

  /** What the database holds as it is: bodies' bytes and wrapped keys. */
  function stored(path: string) {
    const db = new Database(path, { readonly: true });
    try {
      return {
        bodies: db
          .prepare(`SELECT m.id, b.body FROM messages m JOIN message_bodies b ON b.pk = m.pk ORDER BY m.pk`)
          .all() as Array<{ id: string; body: Buffer }>,
        // Every data key: a message's two in its row, a spool's or receipt's in data_keys (none here).
        wrapped: db
          .prepare(
            `SELECT wrapped FROM (SELECT wrapped, 0 AS kind, id FROM data_keys
               UNION ALL SELECT body_key, 1, pk FROM messages WHERE body_key IS NOT NULL
               UNION ALL SELECT personal_key, 2, pk FROM messages WHERE personal_key IS NOT NULL) ORDER BY kind, id`,
          )
          .pluck()
          .all() as Buffer[],
      };
    } finally {
      db.close();
    }
  }

  /** Opens every body, the relay password and the client credential with the given master keys alone. */
  function openedWith(path: string, masters: Buffer[]) {
    const ring = keyRing(masters);
    const seal = createBodySeal(ring.bodyKeys);
    const store = createSqliteStore({
      path,
      secrets: createAesGcmSecretBox(ring.encryptionKeys),
      bodies: seal,
      blindIndex: (kept) => createBlindIndex(kept ?? ring.blindKey),
      ids: { uuid: () => 'unused' },
      now: Date.now,
    });
    try {
      const db = new Database(path, { readonly: true });
      const rows = db.prepare(`SELECT tenant_id, ${BODY_COLUMNS} FROM messages ORDER BY pk`).all() as Array<{
        tenant_id: string;
        body: Buffer;
        key: Buffer | null;
      }>;
      db.close();
      return {
        bodies: rows.map((row) => openStored(seal, row.tenant_id, { key: row.key, parts: [row.body] })?.toString()),
        password: store.accounts.get('acme', 'main')?.password,
        clientAuth: store.tenants.get('acme')?.clientAuth,
        dkimKeys: store.tenants
          .get('acme')
          ?.sendingDomains.flatMap((domain) => domain.keys.map((key) => key.privateKey.slice(0, 27))),
      };
    } finally {
      store.close();
    }
  }

  const masterIn = (dataDir: string, file = 'secret.key'): Buffer =>
    Buffer.from(readFileSync(join(dataDir, file), 'utf8').trim(), 'base64');
  const rotate = (dataDir: string, args: string[] = [], env: Record<string, string> = {}) =>
    runCli(['keys', 'rotate', ...args], { env: { MAILPROXY_DATA_DIR: dataDir, ...env } });

  /** The daemon started again on the directory: the tenant's key is taken, and both messages go through the relay's AUTH. */
  async function relaysAgain(
    seed: Seeded,
    env: Record<string, string> = {},
    also: (fx: QueueFixture) => Promise<void> = async () => undefined,
  ): Promise<void> {
    const fx = await startQueueFixture({ dataDir: seed.dataDir, env });
    cleanups.push(() => fx.stop());
    expect((await api(fx.t.url, 'GET', '/messages', { token: seed.apiKey })).status).toBe(200);
    await also(fx);
    fx.clock.advance(2 * HOUR);
    await fx.settle();
    await seed.sink.waitForMessages(2);
    const relayed = seed.sink.messages.map((sent) => sent.raw.toString());
    for (const body of BODIES) expect(relayed.filter((raw) => raw.includes(body))).toHaveLength(1);
    await fx.stop();
  }

  it('moves every key under a new master, leaves the bodies as they were, and the old key opens nothing', async () => {
    const seed = await seeded();
    const old = masterIn(seed.dataDir);
    const before = stored(seed.path);

    const run = await rotate(seed.dataDir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`data keys: ${before.wrapped.length} rewrapped, 0 already under the new key`);
    // The client credential, the report signing secret every tenant is given, the sending domains, the relay password.
    expect(run.stdout).toContain('stored secrets: 4 resealed');
    expect(run.stdout).toContain("API keys' digest key: kept");
    expect(run.stdout).toContain("unsubscribe links' key: kept");
    const fresh = masterIn(seed.dataDir);
    expect(fresh.equals(old)).toBe(false);
    // Nothing is printed that could be the key, and no file is left but secret.key.
    expect(run.stdout).not.toContain(fresh.toString('base64'));
    expect(['secret.key.next', 'secret.key.previous'].filter((file) => existsSync(join(seed.dataDir, file)))).toEqual(
      [],
    );

    const after = stored(seed.path);
    expect(after.bodies).toEqual(before.bodies);
    const currentId = keyRing([fresh]).bodyKeys[0]?.id as Uint8Array;
    expect(after.wrapped.every((wrapped) => Buffer.from(currentId).equals(wrapped.subarray(0, 4)))).toBe(true);
    expect(loadKeyMaterial({ dataDir: seed.dataDir, secretKey: '', adminToken: 'x'.repeat(16) }).masters).toHaveLength(
      1,
    );
    expect(openedWith(seed.path, [fresh])).toEqual({
      bodies: expect.arrayContaining(BODIES.map((body) => expect.stringContaining(body))),
      password: RELAY.pass,
      clientAuth: { method: 'bearer', token: CLIENT_TOKEN },
      dkimKeys: ['-----BEGIN PRIVATE KEY-----'],
    });
    expect(() => openedWith(seed.path, [old])).toThrow();

    // A one-click unsubscribe link in mail sent before the rotation (sealed under the old master's key) still works.
    const link = createUnsubscribeLinks(keyRing([old]).unsubscribeKey).issue({
      tenantId: 'acme',
      messageId: 'm-0',
      recipient: 'ann@example.net',
      list: null,
    });
    await relaysAgain(seed, {}, async (fx) => {
      expect((await fetch(`${fx.t.url}/unsubscribe/${link}`, { method: 'POST' })).status).toBe(200);
      const listed = await fx.admin('GET', '/suppressions?tenant_id=acme');
      expect(listed.body.suppressions).toMatchObject([{ address: 'ann@example.net', source: 'unsubscribe' }]);
    });
  });

  it('leaves a daemon that starts when it stops after the database commit, and finishes when run again', async () => {
    const seed = await seeded();
    const old = masterIn(seed.dataDir);
    // Steps 1 and 2 of a rotation, then a crash: secret.key.next written, the database committed, nothing renamed.
    const start = beginFileRotation({ dataDir: seed.dataDir }, null);
    if (!start.ok) throw new Error(start.problem);
    // Two messages: each body's key, and each envelope's.
    expect(rotateStoredKeys(seed.path, start.rotation, Date.now())?.dataKeys.rewrapped).toBe(4);
    expect(masterIn(seed.dataDir).equals(old)).toBe(true);
    expect(masterIn(seed.dataDir, 'secret.key.next').equals(start.next)).toBe(true);
    // The ring (secret.key, then secret.key.next) opens what either wrapped or sealed.
    expect(openedWith(seed.path, [old, start.next]).password).toBe(RELAY.pass);

    // A daemon started now takes the tenant's key and writes a body under the old key.
    const fx = await startQueueFixture({ dataDir: seed.dataDir });
    cleanups.push(() => fx.stop());
    expect((await api(fx.t.url, 'GET', '/messages', { token: seed.apiKey })).status).toBe(200);
    expect((await fx.post(seed.apiKey, [message('between', { deferred_ts: 4_000_000_000 })])).body.queued).toBe(1);
    await fx.stop();

    const run = await rotate(seed.dataDir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('finished the rotation an earlier run left unfinished');
    expect(run.stdout).toContain('data keys: 2 rewrapped, 4 already under the new key');
    expect(masterIn(seed.dataDir).equals(start.next)).toBe(true);
    expect(existsSync(join(seed.dataDir, 'secret.key.next'))).toBe(false);
    expect(existsSync(join(seed.dataDir, 'secret.key.previous'))).toBe(false);
    expect(openedWith(seed.path, [start.next]).bodies).toHaveLength(3);

    await relaysAgain(seed);
  });

  it('refuses while the daemon runs, and changes nothing', async () => {
    const seed = await seeded();
    const old = masterIn(seed.dataDir);
    const fx = await startQueueFixture({ dataDir: seed.dataDir });
    cleanups.push(() => fx.stop());
    const run = await rotate(seed.dataDir);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/in use by another mailproxy/);
    expect(masterIn(seed.dataDir).equals(old)).toBe(true);
    expect(existsSync(join(seed.dataDir, 'secret.key.next'))).toBe(false);
  });

  it('takes the new key from a file when the configuration holds the key, and says to configure it', async () => {
    const [oldKey, newKey] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
    const seed = await seeded({ MAILPROXY_SECURITY_SECRET_KEY: oldKey });
    const env = { MAILPROXY_SECURITY_SECRET_KEY: oldKey };

    const bare = await rotate(seed.dataDir, [], env);
    expect(bare.code).toBe(64);
    expect(bare.stderr).toMatch(/--new-key-file/);

    const file = join(seed.dataDir, '..', `${seed.dataDir.split('/').pop()}.new-key`);
    writeFileSync(file, `${newKey}\n`, { mode: 0o600 });
    cleanups.push(() => rmSync(file, { force: true }));
    const run = await rotate(seed.dataDir, ['--new-key-file', file], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('now set security.secret_key');
    expect(run.stdout).not.toContain(newKey);
    // No key file is written into the data directory: the configuration is the operator's.
    expect(existsSync(join(seed.dataDir, 'secret.key'))).toBe(false);
    expect(existsSync(join(seed.dataDir, 'secret.key.next'))).toBe(false);
    expect(openedWith(seed.path, [Buffer.from(newKey, 'base64')]).password).toBe(RELAY.pass);

    // Started with only the old key, the daemon says what to set rather than a cipher's error.
    const stale = await runCli(['serve'], {
      env: {
        MAILPROXY_DATA_DIR: seed.dataDir,
        MAILPROXY_SECURITY_SECRET_KEY: oldKey,
        MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
      },
    });
    expect(stale.code).toBe(1);
    expect(stale.stdout + stale.stderr).toMatch(/set security\.secret_key to the new key/);

    await relaysAgain(seed, { MAILPROXY_SECURITY_SECRET_KEY: newKey });
  });
});
