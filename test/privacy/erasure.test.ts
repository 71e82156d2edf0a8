/**
 * Erasure by address against a real daemon, its SQLite file, a real SMTP sink and a real
 * nats-server for the event mirror (issue 45): afterwards the database file and its WAL, the
 * event stream read back through the JetStream API, the latest-state KV and the daemon's log hold
 * no trace of the address, the subject or any 16-byte run of the bodies; a backup taken before holds the bodies only sealed, under keys
 * that no longer exist; the rows keep their final status; a message waiting at erasure is
 * never relayed; another recipient's mail is untouched.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readStream, startNatsServer, type NatsPeer } from '../peers/nats-server.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { storedBody } from '../helpers/stored-body.js';
import { api } from '../helpers/test-daemon.js';

const ANN = 'ann.rossi@example.net';
const SUBJECT = 'Quarterly statement for Ann Rossi';
const BODY = 'Dear Ann, your balance on account IT60X0542811101000000123456 is 1,234.56 EUR. Kind regards.';
const BOB_BODY = 'Dear Bob, this one is yours to keep: nothing of it is erased by the erasure of Ann.';
const HOUR = 3_600_000;

/** Every 16-byte run of `text`, as bytes to look for. */
const runsOf = (text: string): Buffer[] => {
  const bytes = Buffer.from(text);
  return Array.from({ length: bytes.length - 15 }, (_, at) => bytes.subarray(at, at + 16));
};

/** What of `needles` a file's bytes hold (its name when found). */
function tracesIn(path: string, needles: Array<string | Buffer>): string[] {
  if (!existsSync(path)) return [];
  const bytes = readFileSync(path);
  return needles.filter((needle) => bytes.includes(needle)).map((needle) => `${path}: ${needle.toString()}`);
}

describe('erasure by address', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let nats: NatsPeer;
  let key: string;
  let backup: Buffer;
  let digest: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    nats = await startNatsServer();
    fx = await startQueueFixture({ env: { MAILPROXY_NATS_URL: nats.url } });
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    const later = Math.floor((fx.clock.now() + HOUR) / 1000);
    const posted = await fx.post(key, [
      message('ann-sent', { to: ANN, subject: SUBJECT, body: BODY }),
      message('ann-waiting', { to: ANN, subject: SUBJECT, body: BODY, deferred_ts: later }),
      message('bob-sent', { to: 'bob@example.org', subject: 'For Bob', body: BOB_BODY }),
    ]);
    expect(posted.body.queued).toBe(3);
    await fx.settle();
    expect(sink.messages).toHaveLength(2);
    const suppressed = await fx.admin('POST', '/suppression', { tenant_id: 'acme', address: ANN, reason: 'asked' });
    expect(suppressed.status).toBeLessThan(300);
    // The entry, its audit row and its event name the address by this digest (the address itself is sealed).
    digest = suppressed.body.suppression.digest;
    const taken = await fetch(`${fx.t.url}/backup`, { headers: { authorization: `Bearer ${fx.t.adminToken}` } });
    expect(taken.status).toBe(200);
    backup = Buffer.from(await taken.arrayBuffer());
  });
  afterAll(async () => {
    await fx?.stop();
    await sink?.stop();
    await nats?.destroy();
    fx?.t.cleanup();
  });

  it('tombstones every message to the address, stops the waiting one, and leaves no trace in the database or its WAL', async () => {
    const erased = await api(fx.t.url, 'POST', '/commands/erase', { token: key, body: { address: ANN } });
    expect(erased.status).toBe(200);
    expect(erased.body).toMatchObject({
      ok: true,
      tenants: ['acme'],
      erased_messages: 2,
      stopped_waiting: 1,
      in_flight: 0,
      suppressions: 1,
    });

    // The rows still report their final status, with their ids and times.
    const sent = await fx.detail('acme', 'ann-sent');
    expect(sent.message).toMatchObject({ id: 'ann-sent', status: 'sent' });
    expect(sent.events.map((event) => event.event_type)).toContain('erased');
    const waiting = await fx.detail('acme', 'ann-waiting');
    expect(waiting.message).toMatchObject({ id: 'ann-waiting', status: 'error' });
    // The scrub that follows an erasure (the search index's loop, every half second): run now, and
    // again while it is owed (a checkpoint of the checkpointer thread's can stand in its way).
    const erasure = async () =>
      ((await fx.admin('GET', '/status')).body as { store: { erasure: Record<string, unknown> } }).store.erasure;
    await expect
      .poll(async () => {
        await fx.t.daemon.searchIndex.tick();
        return erasure();
      })
      .toMatchObject({ scrub_owed: false, search_terms_to_scrub: 0 });
    // GET /status: the scrub is done; the shredded bodies' bytes (unreadable) wait for retention.
    expect((await erasure()).shredded_bodies_to_remove).toBeGreaterThan(0);

    // Another person's mail is untouched, and its body still opens.
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    try {
      expect(storedBody(db, { dataDir: fx.t.dataDir }, `id = 'bob-sent'`)?.toString()).toContain(BOB_BODY);
      expect(storedBody(db, { dataDir: fx.t.dataDir }, `id = 'ann-sent'`)).toBeNull();
      // What per-destination limits keep of the recipients (their domains) goes with the erasure too.
      expect(db.prepare(`SELECT id, rcpt_domains FROM messages ORDER BY id`).all()).toEqual([
        { id: 'ann-sent', rcpt_domains: null },
        { id: 'ann-waiting', rcpt_domains: null },
        { id: 'bob-sent', rcpt_domains: 'example.org' },
      ]);
    } finally {
      db.close();
    }

    const needles = [ANN, SUBJECT, 'Ann Rossi', ...runsOf(BODY)];
    const file = join(fx.t.dataDir, 'mailproxy.db');
    expect([...tracesIn(file, needles), ...tracesIn(`${file}-wal`, needles)]).toEqual([]);
    // Nor of the digest its suppression was named by: the entry, its audit row and its event are gone or cleared.
    expect(digest).toMatch(/^a[0-9a-f]{16}$/);
    expect([...tracesIn(file, [digest]), ...tracesIn(`${file}-wal`, [digest])]).toEqual([]);
    // A backup taken before holds the body, the envelope and the subject only sealed, and digests:
    // a byte search of it finds none of them (what opens them again is its own copy of their keys,
    // under the secret key: the README's "Backups").
    expect(needles.filter((needle) => backup.includes(needle))).toEqual([]);
    // The daemon's log never carried them.
    expect(fx.t.logLines.filter((line) => needles.some((needle) => line.includes(needle.toString())))).toEqual([]);

    // The event stream, read back through the JetStream API, and the latest-state KV never held them.
    await expect.poll(async () => (await fx.admin('GET', '/mirror/status')).body.mirror.backlog).toBe(0);
    const stream = await readStream(nats.url, 'MAILPROXY');
    expect(stream.some((event) => event.body.event_type === 'message.erased')).toBe(true);
    const published = JSON.stringify(stream);
    expect(needles.filter((needle) => published.includes(needle.toString()))).toEqual([]);
    const nc = await connect({ servers: nats.url });
    try {
      const kv = await new Kvm(nc).open('mailproxy_latest');
      const values: string[] = [];
      for await (const name of await kv.keys()) values.push(name, (await kv.get(name))?.string() ?? '');
      expect(values.length).toBeGreaterThan(0);
      expect(needles.filter((needle) => values.join('\n').includes(needle.toString()))).toEqual([]);
    } finally {
      await nc.close();
    }
  });

  it('never relays the message that was waiting at erasure', async () => {
    fx.clock.advance(2 * HOUR);
    await fx.settle();
    await fx.settle();
    expect(sink.messages.filter((relayed) => relayed.raw.includes('ann-waiting'))).toEqual([]);
    expect(sink.messages).toHaveLength(2);
  });

  it("refuses to erase another tenant's messages with a tenant key, and names what it did not find", async () => {
    await fx.createTenant('other');
    const refused = await api(fx.t.url, 'POST', '/commands/erase', {
      token: key,
      body: { tenant_id: 'other', ids: ['x'] },
    });
    expect(refused.status).toBe(404);
    const unknown = await api(fx.t.url, 'POST', '/commands/erase', { token: key, body: { ids: ['bob-sent', 'nope'] } });
    expect(unknown.body).toMatchObject({ erased_messages: 1, not_found: ['nope'] });
    const both = await api(fx.t.url, 'POST', '/commands/erase', { token: key, body: { ids: ['a'], address: ANN } });
    expect(both.status).toBe(400);
  });
});

describe('erasure of messages claimed ahead', () => {
  it("drops the claimed messages it erased before they reach the relay; those on the wire are the relay's", async () => {
    const sink = await startSmtpSink({ answerDelayMs: 1500 });
    const fx = await startQueueFixture();
    try {
      const key = await fx.createTenant('acme');
      await fx.createAccount('acme', 'main', sink, { is_default: true, max_connections: 1 });
      const ids = Array.from({ length: 8 }, (_, index) => `ahead-${index}`);
      expect(
        (
          await fx.post(
            key,
            ids.map((id) => message(id)),
          )
        ).body.queued,
      ).toBe(8);
      await sink.waitForAnswering(1);
      const waiting = [];
      for (const id of ids) if ((await fx.detail('acme', id)).message.status === 'sending') waiting.push(id);
      const erased = await api(fx.t.url, 'POST', '/commands/erase', { token: key, body: { ids: ids.slice(4) } });
      expect(erased.body).toMatchObject({ erased_messages: 4 });
      await expect
        .poll(
          async () => {
            const states = await Promise.all(ids.map(async (id) => (await fx.detail('acme', id)).message.status));
            return states.filter((status) => status === 'sending' || status === 'queued').length;
          },
          { timeout: 20_000 },
        )
        .toBe(0);
      const relayed = sink.messages.map((relayed) => /X-Genro-Mail-ID: (\S+)/.exec(relayed.raw.toString())?.[1]);
      // Claimed ahead when erased (sending, not on the wire): ended in error, never relayed.
      const droppedInLane = [];
      for (const id of ids.slice(4)) {
        const detail = await fx.detail('acme', id);
        const types = detail.events.map((event) => event.event_type).join(',');
        // Claimed (sending), erased, then ended in error by the lanes: no relay outcome between.
        if (types.endsWith('sending,erased,error')) droppedInLane.push(id);
        if (!relayed.includes(id)) expect(detail.message.status).toBe('error');
      }
      expect(droppedInLane.length + relayed.filter((id) => ids.slice(4).includes(id ?? '')).length).toBe(4);
      expect(droppedInLane.length, `claimed ahead at erasure: ${waiting.join(', ')}`).toBeGreaterThan(0);
    } finally {
      await fx.stop();
      await sink.stop();
      fx.t.cleanup();
    }
  }, 60_000);
});
