/**
 * A latest-state KV write that fails while the window's event publishes are
 * still in flight: the failure is the window's, retried, never an unhandled
 * rejection (which ended the daemon: found by `npm run soak` during a NATS
 * outage). The KV bucket's stream is deleted under a running mirror, so its
 * writes fail at once (503) while 400 publishes are pending on a real nats-server.
 */
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MirrorStore } from '../../src/core/events/mirror.js';
import { createNatsMirror } from '../../src/outbox/nats-mirror.js';
import { createLogger, systemClock } from '../../src/runtime/index.js';
import type { SqliteStore } from '../../src/store/sqlite-store.js';
import { storeWithAdminEvents } from '../helpers/mirror-store.js';
import { startNatsServer, type NatsPeer } from '../peers/nats-server.js';

const BUCKET = 'kvfail_latest';

describe('a KV write failing under in-flight publishes', () => {
  let nats: NatsPeer;
  let removeStore: () => void;
  let store: SqliteStore;

  beforeAll(async () => {
    nats = await startNatsServer();
    ({ store, remove: removeStore } = storeWithAdminEvents('kvfail', 400, () => 'acme'));
  });
  afterAll(async () => {
    removeStore();
    await nats.destroy();
  });

  it('fails the window and retries it, with no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on('unhandledRejection', record);
    // Nothing pending until the bucket is gone; then the rows as message events, whose latest state goes to the KV.
    let armed = false;
    const asMessages: MirrorStore = {
      ...store.mirror,
      pending: (limit, after) =>
        armed
          ? store.mirror.pending(limit, after).map((row, index) => ({
              ...row,
              eventType: 'message.sent',
              messagePk: index + 1,
              messageId: `m${index}`,
            }))
          : [],
    };
    const mirror = createNatsMirror({
      store: asMessages,
      clock: systemClock,
      log: createLogger({ level: 'silent' }),
      config: {
        url: nats.url,
        latestBucket: BUCKET,
        maxInFlight: 400,
        batchDelayMs: 5,
        publishTimeoutMs: 2000,
        connectTimeoutMs: 2000,
        retryInitialMs: 60_000,
        retryMaxMs: 60_000,
        stream: {
          name: 'KVFAIL',
          subjectPrefix: 'kvfail',
          maxAgeMs: 0,
          maxBytes: 0,
          replicas: 1,
          duplicateWindowMs: 120_000,
        },
      },
    });
    try {
      await mirror.start();
      const nc = await connect({ servers: nats.url });
      expect(await (await jetstreamManager(nc)).streams.delete(`KV_${BUCKET}`)).toBe(true);
      await nc.close();

      armed = true;
      await mirror.tick();
      // Let any rejection that was left without a handler be reported before looking.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
      expect(mirror.status()).toMatchObject({ state: 'connected', backlog: 400, last_error: expect.any(String) });
      expect(store.mirror.record().cursorSeq).toBe(0);
    } finally {
      process.off('unhandledRejection', record);
      await mirror.stop(0);
    }
  });
});
