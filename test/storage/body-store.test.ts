/**
 * Large bodies in the body store (issue 46), with the embedded store (files beside the database)
 * and with a real S3 API server: a body above `storage.inline_max_bytes` is written sealed to the
 * store before the 200/250, relayed whole from there, and removed from the store once erasure or
 * retention destroyed its key; the database holds none of it. A store that does not answer
 * refuses what would go there (503 STORE_UNAVAILABLE, 451 4.3.0) and says so in /ready and
 * /status, takes small mail meanwhile, and takes everything again once it answers.
 */
import { mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { startS3Server, type S3Server } from '../peers/s3-server.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';
import { embeddedObject, storedBody } from '../helpers/stored-body.js';
import { readDatabase } from '../helpers/data-dir.js';
import { relayedWithId } from '../helpers/relayed-mail.js';
import { api } from '../helpers/test-daemon.js';

const KIB = 1024;
const MIB = 1024 * KIB;
/** Text that cannot be mistaken for anything else, `bytes` long. */
const text = (tag: string, bytes: number): string => `${tag}:`.padEnd(bytes, `${tag} lorem ipsum `);

interface Backend {
  name: 'embedded' | 's3';
  toml(): string;
  object(dataDir: string, name: string): Promise<Buffer | null>;
  /** How many objects the store holds. */
  count(dataDir: string): Promise<number>;
  /** Writes an object straight into the store, as a submission that was never committed leaves one. */
  put(dataDir: string, name: string, bytes: Buffer): Promise<void>;
  /** What the configuration says beside `[storage]`: the S3 section. */
  /** The store stops answering, and answers again. */
  fail(dataDir: string): Promise<void>;
  mend(dataDir: string): Promise<void>;
  cleanup(): Promise<void>;
}

function embedded(): Backend {
  return {
    name: 'embedded',
    toml: () => '',
    object: async (dataDir, name) => embeddedObject(dataDir, name),
    put: async (dataDir, name, bytes) => {
      mkdirSync(join(dataDir, 'bodies', name.slice(0, 2)), { recursive: true });
      writeFileSync(join(dataDir, 'bodies', name.slice(0, 2), name), bytes);
    },
    count: async (dataDir) =>
      readdirSync(join(dataDir, 'bodies'), { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile())
        .length,
    // The bodies directory made unusable: a file where it should be, so nothing can be written under it.
    fail: async (dataDir) => {
      renameSync(join(dataDir, 'bodies'), join(dataDir, 'bodies.away'));
      writeFileSync(join(dataDir, 'bodies'), 'not a directory');
    },
    mend: async (dataDir) => {
      rmSync(join(dataDir, 'bodies'));
      renameSync(join(dataDir, 'bodies.away'), join(dataDir, 'bodies'));
    },
    cleanup: async () => undefined,
  };
}

async function s3(): Promise<Backend> {
  const server: S3Server = await startS3Server();
  return {
    name: 's3',
    toml: () => server.toml('bodies/'),
    object: (_dataDir, name) => server.object(`bodies/${name}`),
    count: () => server.count('bodies/'),
    put: (_dataDir, name, bytes) => server.put(`bodies/${name}`, bytes),
    fail: () => server.stop(),
    mend: () => server.start(),
    cleanup: () => server.cleanup(),
  };
}

describe.each([['embedded'], ['s3']] as const)('the %s body store', (backendName) => {
  let backend: Backend;
  let sink: SmtpSink;
  let fx: QueueFixture;
  let key: string;

  const db = <T>(read: (db: Database.Database) => T): T => readDatabase(fx.t.dataDir, read);
  const row = (id: string) =>
    db(
      (opened) =>
        opened
          .prepare(
            `SELECT body_object, body_key IS NOT NULL AS keyed,
               (SELECT count(*) FROM message_bodies b WHERE b.pk = messages.pk) AS inline
             FROM messages WHERE id = ?`,
          )
          .get(id) as { body_object: string | null; keyed: number; inline: number },
    );
  const metric = async (name: string): Promise<number | null> => {
    const text = (await fx.admin('GET', '/metrics')).text as string;
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
    return line === undefined ? null : Number(line.slice(name.length + 1));
  };
  const submit = async (id: string, body: string): Promise<string> => {
    const session = await openSubmission(fx.t.daemon.smtp?.plain?.port ?? 0);
    try {
      await session.login('acme', key);
      const raw = `From: app@acme.example\r\nTo: someone@example.net\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\n${body}\r\n`;
      return String((await session.send({ from: 'app@acme.example', to: ['someone@example.net'] }, raw)).response);
    } catch (error) {
      return replyOf(error);
    } finally {
      session.close();
    }
  };

  beforeAll(async () => {
    backend = backendName === 'embedded' ? embedded() : await s3();
    sink = await startSmtpSink();
    fx = await startQueueFixture({
      extraToml: `[storage]\nbackend = "${backend.name}"\ninline_max_bytes = 65536\n${backend.toml()}`,
    });
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
  });
  afterAll(async () => {
    await fx?.stop();
    await sink?.stop();
    await backend?.cleanup();
    fx?.t.cleanup();
  });

  it('writes a large HTTP body sealed to the store, keeps a small one inline, and relays both whole', async () => {
    const large = text('large-http', 300 * KIB);
    const answer = await fx.post(key, [message('large-http', { body: large }), message('small-http')]);
    expect(answer.status).toBe(200);
    expect(answer.body.queued).toBe(2);

    const stored = row('large-http');
    expect(stored).toMatchObject({ keyed: 1, inline: 0 });
    expect(stored.body_object).toMatch(/^[0-9a-f]{32}$/);
    const object = await backend.object(fx.t.dataDir, stored.body_object ?? '');
    expect(object?.length).toBeGreaterThan(300 * KIB);
    // Sealed: not a word of the body in what the store holds.
    expect(object?.includes('large-http lorem ipsum')).toBe(false);
    expect(row('small-http')).toMatchObject({ body_object: null, inline: 1 });

    await fx.settle();
    await sink.waitForMessages(2);
    const relayed = relayedWithId(sink, 'large-http');
    expect(relayed?.toString('utf8').replace(/=\r\n/g, '')).toContain(large.slice(0, 2000));
    expect(relayed?.length).toBeGreaterThan(300 * KIB);
  });

  it('relays a large SMTP submission byte for byte from the store', async () => {
    const body = text('large-smtp', 200 * KIB);
    expect(await submit('large-smtp', body)).toMatch(/^250 /);
    expect(row('large-smtp').body_object).toMatch(/^[0-9a-f]{32}$/);
    // The console's view of its header section reads it from the store.
    expect((await fx.t.daemon.store.headers.of('acme', 'large-smtp'))?.text).toContain('Subject: large-smtp');
    await fx.settle();
    await sink.waitForMessages(3);
    const relayed = relayedWithId(sink, 'large-smtp');
    expect(relayed?.includes(Buffer.from(`\r\n\r\n${body}\r\n`))).toBe(true);
  });

  it('moves a message SMTP spooled as it arrived to the store, discards its spool, and relays it byte for byte', async () => {
    const body = text('spooled-smtp', 1536 * KIB);
    expect(await submit('spooled-smtp', body)).toMatch(/^250 /);
    expect(row('spooled-smtp').body_object).toMatch(/^[0-9a-f]{32}$/);
    const spools = db((opened) =>
      opened.prepare('SELECT (SELECT count(*) FROM spools) + (SELECT count(*) FROM spool_parts)').pluck().get(),
    );
    // Spooled beside the store, never in the database, and gone once the message was committed.
    expect(spools, "the database's spools and spooled parts").toBe(0);
    expect(readdirSync(join(fx.t.dataDir, 'spool'))).toEqual([]);
    await fx.settle();
    await expect
      .poll(() => sink.messages.find((received) => received.raw.includes('X-Genro-Mail-ID: spooled-smtp')))
      .toBeDefined();
    const relayed = relayedWithId(sink, 'spooled-smtp');
    expect(relayed?.includes(Buffer.from(`\r\n\r\n${body}\r\n`))).toBe(true);
  });

  it('removes at once the object of a message that was not stored (a repeat of an id already sent)', async () => {
    const before = await backend.count(fx.t.dataDir);
    const repeat = await fx.post(key, [message('large-http', { body: text('repeat', 300 * KIB) })]);
    expect(repeat.body.rejected).toMatchObject([{ code: 'ALREADY_SENT' }]);
    await expect.poll(() => backend.count(fx.t.dataDir)).toBe(before);
  });

  it('removes the object of a sent message once body retention shredded it', async () => {
    const name = row('large-http').body_object ?? '';
    expect(await backend.object(fx.t.dataDir, name)).not.toBeNull();
    await expect.poll(async () => (await fx.detail('acme', 'large-http')).message.reported_ts).not.toBeNull();
    fx.clock.advance(25 * 3_600_000);
    await fx.t.daemon.retention.tick();
    expect(row('large-http')).toMatchObject({ body_object: null, keyed: 0 });
    await fx.t.daemon.bodyRemoval?.tick();
    expect(await backend.object(fx.t.dataDir, name)).toBeNull();
  });

  it('keeps the database small however large the bodies: twenty 1 MB messages', async () => {
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'bulk' });
    // What the database holds (its pages in use, as of its last commit, WAL included), not its files'
    // sizes, which keep room freed before (a spool moved out) and grow and shrink with checkpoints.
    const bytes = () =>
      db(
        (opened) =>
          ((opened.pragma('page_count', { simple: true }) as number) -
            (opened.pragma('freelist_count', { simple: true }) as number)) *
          (opened.pragma('page_size', { simple: true }) as number),
      );
    const before = bytes();
    const bodies = Array.from({ length: 20 }, (_, index) =>
      message(`bulk-${index}`, { batch_code: 'bulk', body: text(`bulk-${index}`, MIB) }),
    );
    expect((await fx.post(key, bodies)).body.queued).toBe(20);
    // 20 MiB of bodies; the database grows by their rows only.
    expect(bytes() - before, 'bytes the database grew by').toBeLessThan(MIB);
    // Each body opens, from the store, to what was sent.
    if (backend.name === 'embedded')
      for (const index of [0, 19])
        expect(
          JSON.parse(
            db((opened) => storedBody(opened, { dataDir: fx.t.dataDir }, 'id = ?', `bulk-${index}`))?.toString() ??
              'null',
          ),
        ).toMatchObject({ body: text(`bulk-${index}`, MIB) });
  });

  it('removes the object once an erasure destroyed its key', async () => {
    const name = row('bulk-3').body_object ?? '';
    expect(await backend.object(fx.t.dataDir, name)).not.toBeNull();
    const erased = await api(fx.t.url, 'POST', '/commands/erase', { token: key, body: { ids: ['bulk-3'] } });
    expect(erased.status).toBe(200);
    expect(row('bulk-3')).toMatchObject({ body_object: null, keyed: 0 });
    expect(db((opened) => opened.prepare('SELECT object FROM object_removals').pluck().all())).toContain(name);
    expect(await metric('mailproxy_body_store_objects_to_remove')).toBe(1);
    await fx.t.daemon.bodyRemoval?.tick();
    expect(await metric('mailproxy_body_store_objects_to_remove')).toBe(0);
    expect(await backend.object(fx.t.dataDir, name)).toBeNull();
    expect(db((opened) => opened.prepare('SELECT count(*) FROM object_removals').pluck().get())).toBe(0);
  });

  it('refuses large mail while the store does not answer, says why, takes small mail, and takes all again after', async () => {
    await backend.fail(fx.t.dataDir);
    try {
      const refused = await fx.post(key, [message('refused-large', { body: text('refused-large', 100 * KIB) })]);
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('STORE_UNAVAILABLE');
      expect(await submit('refused-smtp', text('refused-smtp', 100 * KIB))).toMatch(/^451 4\.3\.0 /);
      expect((await fx.post(key, [message('small-meanwhile')])).body.queued).toBe(1);

      const ready = await api(fx.t.url, 'GET', '/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.checks).toMatchObject({ body_store: 'not ready', store: 'ok' });
      const status = await api(fx.t.url, 'GET', '/status', { token: fx.t.adminToken });
      expect(status.body.body_store).toMatchObject({ backend: backend.name, state: 'failing' });
      expect(status.body.body_store.last_error.reason).toEqual(expect.any(String));
      expect(await metric('mailproxy_body_store_failing')).toBe(1);
      // Nothing of the refused messages was kept.
      expect(
        db((opened) => opened.prepare(`SELECT count(*) FROM messages WHERE id LIKE 'refused-%'`).pluck().get()),
      ).toBe(0);
    } finally {
      await backend.mend(fx.t.dataDir);
    }
    await fx.t.daemon.bodyRemoval?.tick();
    expect((await api(fx.t.url, 'GET', '/ready')).status).toBe(200);
    expect(await metric('mailproxy_body_store_failing')).toBe(0);
    expect((await fx.post(key, [message('after-outage', { body: text('after-outage', 100 * KIB) })])).body.queued).toBe(
      1,
    );
    await fx.settle();
    await expect
      .poll(() => sink.messages.some((received) => received.raw.includes('X-Genro-Mail-ID: after-outage')))
      .toBe(true);
  });

  it('sweeps an object no message names once it is an hour old, and keeps every object a message names', async () => {
    const orphan = 'f'.repeat(32);
    await backend.put(fx.t.dataDir, orphan, Buffer.from('sealed bytes of a submission never committed'));
    const named = row('bulk-0').body_object ?? '';
    const before = await backend.count(fx.t.dataDir);
    fx.clock.advance(2 * 3_600_000);
    await fx.t.daemon.bodyRemoval?.tick();
    expect(await backend.object(fx.t.dataDir, orphan)).toBeNull();
    expect(await backend.object(fx.t.dataDir, named)).not.toBeNull();
    expect(await backend.count(fx.t.dataDir)).toBe(before - 1);
  });
});
