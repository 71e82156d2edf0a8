import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tearDownPeers } from '../helpers/peer-teardown.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { readStream, startNatsServer, type NatsPeer } from '../peers/nats-server.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const TOTAL = 1000;
const batch = (from: number, count: number) =>
  Array.from({ length: count }, (_, index) => message(`o-${from + index}`));

describe('NATS stopped in the middle of a 1000-message run', () => {
  let nats: NatsPeer;
  let sink: SmtpSink;
  let fx: QueueFixture;

  afterAll(() => tearDownPeers({ fx, sink, nats }));

  it('sending never pauses, and afterwards the stream holds every event exactly once', async () => {
    nats = await startNatsServer();
    sink = await startSmtpSink();
    fx = await startQueueFixture({
      env: { MAILPROXY_NATS_URL: nats.url, MAILPROXY_NATS_PUBLISH_TIMEOUT_SECONDS: '1' },
    });
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    const mirror = async () => (await fx.admin('GET', '/mirror/status')).body.mirror;

    for (let from = 0; from < 300; from += 100) await fx.post(key, batch(from, 100));
    await sink.waitForMessages(100, 20_000);
    expect((await mirror()).state).toBe('connected');

    await nats.stop();
    const atOutage = sink.messages.length;
    for (let from = 300; from < 700; from += 100) expect((await fx.post(key, batch(from, 100))).status).toBe(200);
    // The relay goes on while the stream is away; the outbox keeps the events.
    await sink.waitForMessages(atOutage + 300, 20_000);
    const during = await mirror();
    expect(during.state).toBe('disconnected');
    expect(during.backlog).toBeGreaterThan(0);

    await nats.start();
    for (let from = 700; from < TOTAL; from += 100) await fx.post(key, batch(from, 100));
    await sink.waitForMessages(TOTAL, 30_000);
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    // The sink's 250 comes just before the outcome is recorded.
    await expect.poll(() => db.prepare(`SELECT count(*) FROM messages WHERE state = 'sent'`).pluck().get()).toBe(TOTAL);
    await expect.poll(async () => (await mirror()).state, { timeout: 15_000 }).toBe('connected');
    await expect.poll(async () => (await mirror()).backlog, { timeout: 30_000 }).toBe(0);
    const outbox = db.prepare(`SELECT id FROM outbox ORDER BY seq`).pluck().all() as string[];
    db.close();
    const stored = await readStream(nats.url, 'MAILPROXY');
    const counts = new Map<string, number>();
    for (const event of stored) counts.set(event.msgId ?? '', (counts.get(event.msgId ?? '') ?? 0) + 1);
    expect([...counts.values()].filter((count) => count > 1)).toEqual([]);
    expect(
      outbox.filter((id) => !counts.has(id)),
      'events never published',
    ).toEqual([]);
    expect(stored).toHaveLength(outbox.length);
    // Every message sent once, its events in its own order on the stream.
    expect(stored.filter((event) => event.body.event_type === 'message.sent')).toHaveLength(TOTAL);
    const lastType = new Map<string, string>();
    for (const event of stored) {
      if (event.body.message_id === null) continue;
      const before = lastType.get(event.body.message_id);
      if (event.body.event_type === 'message.sending') expect(before).toBe('message.queued');
      if (event.body.event_type === 'message.sent') expect(before).toBe('message.sending');
      lastType.set(event.body.message_id, event.body.event_type);
    }
  }, 120_000);
});
