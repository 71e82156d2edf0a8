/**
 * The mirror's wire side in a thread of its own (`nats.publisher_thread`, on by
 * default): the events and the latest states go out on the thread's connection
 * (named `mailproxy-publisher`), and the main thread's connection only
 * provisions and takes commands; switched off, there is no such connection.
 * And the thread alone: a window while NATS is away fails within the publish
 * timeout instead of hanging, and once NATS is back a window is acknowledged.
 */
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { afterAll, describe, expect, it } from 'vitest';
import { createThreadedWindowPublisher } from '../../src/outbox/threaded-window-publisher.js';
import { createLogger } from '../../src/runtime/index.js';
import { eventually } from '../helpers/eventually.js';
import { tearDownPeers } from '../helpers/peer-teardown.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startNatsServer, type NatsPeer } from '../peers/nats-server.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const MESSAGES = 40;

interface Connz {
  connections: Array<{ name?: string; in_msgs: number }>;
}

/** Messages each client connection sent the server, by connection name. */
async function sentByConnection(nats: NatsPeer): Promise<Map<string, number>> {
  const connz = (await (await fetch(`${nats.monitorUrl}/connz`)).json()) as Connz;
  return new Map(connz.connections.map((connection) => [connection.name ?? '', connection.in_msgs]));
}

/** Each message's handoff state in the latest-state bucket. */
async function latestStates(url: string): Promise<string[]> {
  const nc = await connect({ servers: url });
  try {
    const kv = await new Kvm(nc).open('mailproxy_latest');
    // The keys first: reading a value while the key listing runs ends the listing.
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    return await Promise.all(
      keys.map(async (key) => (await kv.get(key))?.json<{ handoff_state: string }>().handoff_state ?? 'none'),
    );
  } finally {
    await nc.close();
  }
}

describe.each([
  { thread: true, publisher: 'mailproxy-publisher' },
  { thread: false, publisher: 'mailproxy' },
])('the mirror with publisher_thread = $thread', ({ thread, publisher }) => {
  let nats: NatsPeer;
  let sink: SmtpSink;
  let fx: QueueFixture;
  afterAll(() => tearDownPeers({ fx, sink, nats }));

  it(`publishes every event and latest state from the ${publisher} connection`, async () => {
    nats = await startNatsServer({ monitoring: true });
    sink = await startSmtpSink();
    fx = await startQueueFixture({
      env: { MAILPROXY_NATS_URL: nats.url, MAILPROXY_NATS_PUBLISHER_THREAD: String(thread) },
    });
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    expect(
      (
        await fx.post(
          key,
          Array.from({ length: MESSAGES }, (_, index) => message(`t-${index}`)),
        )
      ).status,
    ).toBe(200);
    await sink.waitForMessages(MESSAGES, 20_000);
    const mirror = async () => (await fx.admin('GET', '/mirror/status')).body.mirror;
    // Queued, sending and sent for each: the outbox drained and each message's latest state sent.
    await eventually(
      async () => (await mirror()).published_total >= 3 * MESSAGES && (await mirror()).backlog === 0,
      'the mirror to publish every event',
    );
    await eventually(
      async () => (await latestStates(nats.url)).filter((state) => state === 'sent').length === MESSAGES,
      'every latest state to be sent',
    );

    const sent = await sentByConnection(nats);
    // Each event and each latest-state write is one message from the connection that publishes.
    expect(sent.get(publisher)).toBeGreaterThanOrEqual(4 * MESSAGES);
    if (thread) {
      // The main thread's connection asked for the stream, the bucket and the command consumer: a handful of requests.
      expect(sent.get('mailproxy')).toBeLessThan(MESSAGES);
    } else {
      expect(sent.has('mailproxy-publisher')).toBe(false);
    }
  }, 60_000);
});

describe('the publisher thread alone', () => {
  let nats: NatsPeer;
  afterAll(() => nats?.destroy());

  it('fails a window within the publish timeout while NATS is away, publishes once it is back, and after an outage waits for its own connection', async () => {
    nats = await startNatsServer();
    await nats.stop();
    const wire = createThreadedWindowPublisher(
      { url: nats.url, settings: { latestBucket: '', latestKeyNode: null, publishTimeoutMs: 500 }, logLevel: 'silent' },
      createLogger({ level: 'silent' }),
    );
    try {
      const window = {
        events: Array.from({ length: 10 }, (_, index) => ({
          subject: 'thread.test',
          body: new TextEncoder().encode(`{"n":${index}}`),
          msgId: `w-${index}`,
        })),
        latest: [],
      };
      const startedAt = Date.now();
      const away = await wire.publish(window);
      expect(away.acknowledged).toBe(0);
      expect(away.error).toMatch(/connecting to NATS/);
      // The publish timeout, and not the thread's stuck-task limit (5 s more), ended it.
      expect(Date.now() - startedAt).toBeLessThan(4000);

      await nats.start();
      const nc = await connect({ servers: nats.url });
      await (await jetstreamManager(nc)).streams.add({ name: 'THREAD', subjects: ['thread.>'] });
      await nc.close();
      let outcome = away;
      await eventually(
        async () => (outcome = await wire.publish(window)).error === null,
        'a window acknowledged once NATS is back',
      );
      expect(outcome.acknowledged).toBe(10);

      // An outage: the thread's connection redials on its own clock. A window sent as soon as the
      // server answers another client waits for this connection rather than being dropped with the
      // client's buffer at its next dial (which failed it only after the whole publish timeout).
      await nats.stop();
      await nats.start();
      const other = await connect({ servers: nats.url });
      await (await jetstreamManager(other)).streams.info('THREAD');
      await other.close();
      const back = await wire.publish(window);
      expect(back).toEqual({ acknowledged: 10, error: null });
    } finally {
      await wire.close(1000);
    }
  }, 30_000);
});
