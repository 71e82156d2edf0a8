/**
 * A mirror whose connection comes back while JetStream cannot answer yet (no
 * leader: an election after a server's loss) provisions the stream again until
 * it can, and then publishes. It used to try once, stay 'disconnected' for good
 * and drop every wake, so the outbox grew behind a working connection (found by
 * test/fleet/nats-loss.test.ts). Here on a real three-server cluster: all three
 * are killed and one started, so the client reconnects to a server that has no
 * quorum; a second comes back, with no reconnect of the client. And a mirror
 * started while JetStream has no quorum goes on without the stream and attaches
 * once it can, rather than refusing the daemon's start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNatsMirror } from '../../src/outbox/nats-mirror.js';
import { createLogger, randomIds, systemClock } from '../../src/runtime/index.js';
import type { SqliteStore } from '../../src/store/sqlite-store.js';
import { storeWithAdminEvents } from '../helpers/mirror-store.js';
import { startNatsCluster, type NatsCluster } from '../peers/nats-cluster.mjs';
import { readStream } from '../peers/nats-server.js';

const STREAM = 'REPROV';

describe('re-provisioning the stream after a reconnect', () => {
  let cluster: NatsCluster;
  let store: SqliteStore;
  let removeStore: () => void;

  beforeAll(async () => {
    cluster = await startNatsCluster();
    ({ store, remove: removeStore } = storeWithAdminEvents('reprov', 5, () => 'acme'));
  }, 60_000);
  afterAll(async () => {
    removeStore?.();
    await cluster?.destroy();
  });

  const record = (count: number): void =>
    store.transaction(() => {
      for (let index = 0; index < count; index += 1)
        store.changes.record({
          eventId: randomIds.uuid(),
          occurredAt: Date.now(),
          actor: 'admin',
          command: 'test',
          tenantId: 'acme',
          aggregateType: 'tenant',
          aggregateId: 'acme',
          eventType: 'tenant.updated',
          eventVersion: 1,
          data: { index },
          correlationId: null,
        });
    });

  it('retries until the stream answers, then publishes what waited and what comes next', async () => {
    const [first, second, third] = cluster.servers as [
      NatsCluster['servers'][0],
      NatsCluster['servers'][0],
      NatsCluster['servers'][0],
    ];
    const lines: string[] = [];
    const mirror = mirrorOn(store, first.url, STREAM, lines);
    const until = untilFor(mirror, lines);
    try {
      await mirror.start();
      await until(() => mirror.status().backlog === 0, 'the first events to be published');

      // Whichever server the client was on, it can only come back on the third, alone: no meta leader, so provisioning fails.
      await Promise.all([first.kill(), second.kill(), third.kill()]);
      third.start();
      await until(
        () => lines.some((line) => line.includes('after reconnecting')),
        'a failed provisioning after the reconnect',
      );
      expect(mirror.status().state).toBe('disconnected');
      record(10);
      expect(mirror.status().backlog).toBe(10);

      // Quorum again, without a reconnect of the mirror's client.
      second.start();
      await until(() => mirror.status().state === 'connected', 'the mirror to be connected again');
      await until(() => mirror.status().backlog === 0, 'what waited to be published');
      record(7);
      mirror.wake();
      await until(() => mirror.status().backlog === 0, 'new events to be published');

      const stored = await readStream(third.url, STREAM);
      expect(new Set(stored.map((event) => event.msgId)).size).toBe(22);
      expect(stored).toHaveLength(22);
    } finally {
      await mirror.stop(0);
    }
  }, 120_000);

  it('starts without the stream when JetStream has no quorum (not a refused start), and attaches once it has', async () => {
    const [first, second, third] = cluster.servers as [
      NatsCluster['servers'][0],
      NatsCluster['servers'][0],
      NatsCluster['servers'][0],
    ];
    await Promise.all([first.kill(), second.kill()]);
    third.start();
    const lines: string[] = [];
    // A store of its own: the first test's events are marked published.
    const fresh = storeWithAdminEvents('reprov-start', 5, () => 'acme');
    const mirror = mirrorOn(fresh.store, third.url, 'REPROV_START', lines);
    const until = untilFor(mirror, lines);
    try {
      // It used to throw here (the daemon's start refused, exit 1) for anything but a conflicting stream.
      await mirror.start();
      expect(mirror.status().state).toBe('disconnected');
      expect(lines.some((line) => line.includes('going on without it and trying again'))).toBe(true);
      const waiting = mirror.status().backlog;
      expect(waiting).toBeGreaterThan(0);

      // All three again: a new R3 stream needs three servers to be placed on.
      second.start();
      first.start();
      await until(() => mirror.status().state === 'connected', 'the mirror to attach once JetStream has a quorum');
      await until(() => mirror.status().backlog === 0, 'what waited to be published');
      expect(await readStream(third.url, 'REPROV_START')).toHaveLength(waiting);
    } finally {
      await mirror.stop(0);
      fresh.remove();
    }
  }, 120_000);
});

/** A mirror of the test store's outbox to `stream` on the cluster, logging into `lines`. */
function mirrorOn(store: SqliteStore, url: string, stream: string, lines: string[]) {
  return createNatsMirror({
    store: store.mirror,
    clock: systemClock,
    log: createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } }),
    config: {
      // One server: the others are learnt from it, as a client does.
      url,
      latestBucket: '',
      maxInFlight: 100,
      batchDelayMs: 5,
      publishTimeoutMs: 2000,
      connectTimeoutMs: 10_000,
      // The stream may answer before it takes publishes again (its own election): a failed window is retried soon.
      // Nothing is published while the stream cannot answer, so no such retry can stand in for the re-provisioning.
      retryInitialMs: 500,
      retryMaxMs: 2000,
      stream: {
        name: stream,
        subjectPrefix: stream.toLowerCase(),
        maxAgeMs: 0,
        maxBytes: 0,
        replicas: 3,
        duplicateWindowMs: 120_000,
      },
    },
  });
}

function untilFor(mirror: ReturnType<typeof mirrorOn>, lines: string[]) {
  return async (check: () => boolean, what: string, timeoutMs = 45_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(`timed out waiting for ${what}: ${JSON.stringify(mirror.status())}\n${lines.join('')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
}
