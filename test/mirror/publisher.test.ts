import { connect } from '@nats-io/transport-node';
import { nanos } from '@nats-io/nats-core';
import { jetstreamManager, jetstream, StorageType } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merge, type LatestEvent, type LatestState } from '../../src/core/events/latest-state.js';
import type { MirrorStore } from '../../src/core/events/mirror.js';
import { createAckPublisher } from '../../src/outbox/ack-publisher.js';
import { LatestCache, latestWriter, openLatestBucket, writeLatest } from '../../src/outbox/latest-kv.js';
import { createNatsMirror, type MirrorConfig } from '../../src/outbox/nats-mirror.js';
import { createLogger, systemClock } from '../../src/runtime/index.js';
import type { SqliteStore } from '../../src/store/sqlite-store.js';
import { storeWithAdminEvents } from '../helpers/mirror-store.js';
import { startTestDaemon } from '../helpers/test-daemon.js';
import { readStream, startNatsServer, type NatsPeer } from '../peers/nats-server.js';

const silent = createLogger({ level: 'silent' });

function mirrorConfig(url: string, stream: string, overrides: Partial<MirrorConfig> = {}): MirrorConfig {
  return {
    url,
    stream: {
      name: stream,
      subjectPrefix: stream.toLowerCase(),
      maxAgeMs: 0,
      maxBytes: 0,
      replicas: 1,
      duplicateWindowMs: 120_000,
    },
    latestBucket: '',
    maxInFlight: 100,
    batchDelayMs: 5,
    publishTimeoutMs: 2000,
    connectTimeoutMs: 2000,
    retryInitialMs: 50,
    retryMaxMs: 200,
    ...overrides,
  };
}

/** A message's whole life as latest-state events, in order. */
const lifeOf = (messageId: string, messagePk: number): LatestEvent[] =>
  ['queued', 'sending', 'deferred', 'sending', 'sent', 'bounced', 'reported'].map((type, index) => ({
    seq: index + 1,
    eventType: `message.${type}`,
    tenantId: 'acme',
    messageId,
    messagePk,
    occurredAt: 1_700_000_000_000 + index,
  }));

describe('the publisher against a real nats-server', () => {
  let nats: NatsPeer;
  let removeStore: () => void;
  let store: SqliteStore;

  beforeAll(async () => {
    nats = await startNatsServer();
    ({ store, remove: removeStore } = storeWithAdminEvents('publisher', 450, (index) => `t${index % 3}`));
  });
  afterAll(async () => {
    removeStore();
    await nats.destroy();
  });

  it('a publisher that dies between the PubAcks and its mark republishes, and the stream stores each event once', async () => {
    // The first publisher's mark never happens: as if the process died right after the acknowledgements.
    const dying: MirrorStore = {
      ...store.mirror,
      advance: () => {
        throw new Error('killed before the mark');
      },
    };
    const first = createNatsMirror({
      store: dying,
      clock: systemClock,
      log: silent,
      config: mirrorConfig(nats.url, 'DEDUP', { maxInFlight: 1000 }),
    });
    await first.start();
    await first.tick();
    await first.stop();
    expect(store.mirror.record().cursorSeq).toBe(0);
    expect(await readStream(nats.url, 'DEDUP')).toHaveLength(450);

    const second = createNatsMirror({
      store: store.mirror,
      clock: systemClock,
      log: silent,
      config: mirrorConfig(nats.url, 'DEDUP'),
    });
    await second.start();
    await second.tick();
    expect(second.status()).toMatchObject({ state: 'connected', backlog: 0, published_total: 450 });
    await second.stop();

    const stored = await readStream(nats.url, 'DEDUP');
    expect(stored).toHaveLength(450);
    expect(new Set(stored.map((event) => event.msgId)).size).toBe(450);
    // In outbox order, window after window.
    expect(stored.map((event) => event.body.data.index)).toEqual(Array.from({ length: 450 }, (_, index) => index));
  });

  it('two writers racing on one key resolve by CAS: the value ends as if the events were applied in order', async () => {
    const nc = await connect({ servers: nats.url });
    try {
      const kv = await openLatestBucket(jetstream(nc), 'race_latest', 1);
      const events = lifeOf('m-1', 1);
      // Two writers, each with half the events (interleaved), many rounds at once on the same key.
      const odd = events.filter((_, index) => index % 2 === 1);
      const even = events.filter((_, index) => index % 2 === 0);
      await Promise.all([
        ...even.map((event) => writeLatest(kv, 'acme.1', [event])),
        ...odd.map((event) => writeLatest(kv, 'acme.1', [event])),
      ]);
      const stored = (await kv.get('acme.1'))?.json<LatestState>();
      expect(stored).toEqual(events.reduce<LatestState | null>((state, event) => merge(state, event), null));
      expect(stored).toMatchObject({ handoff_state: 'sent', provider_state: 'bounced', version: 7 });
      // A stale writer changes nothing.
      expect(await writeLatest(kv, 'acme.1', [events[1] as LatestEvent])).toBe(false);
    } finally {
      await nc.close();
    }
  });

  it('writers with a cache, writing by subject through the acknowledged publisher, take turns and go stale without losing an event', async () => {
    const nc = await connect({ servers: nats.url });
    const acks = createAckPublisher(nc, 2000);
    try {
      const kv = await openLatestBucket(jetstream(nc), 'race_fast_latest', 1);
      const write = latestWriter(acks, 'race_fast_latest');
      const events = lifeOf('m-2', 2);
      // Two writers take turns, each with a cache of what it wrote last: the other's write makes it stale, so
      // its compare-and-set by subject is refused (wrong last sequence) and it reads, merges and writes again.
      const [a, b] = [new LatestCache(), new LatestCache()];
      for (const [index, event] of events.entries())
        await writeLatest(kv, 'acme.2', [event], index % 2 === 0 ? a : b, write);
      const stored = await kv.get('acme.2');
      expect(stored?.json<LatestState>()).toEqual(
        events.reduce<LatestState | null>((state, event) => merge(state, event), null),
      );
      // The revision a cache holds is the key's: the next write by subject goes through at once.
      expect(a.get('acme.2')?.revision ?? b.get('acme.2')?.revision).toBeGreaterThan(0);
      expect(await writeLatest(kv, 'acme.2', [events[1] as LatestEvent], a, write)).toBe(false);
    } finally {
      acks.close();
      await nc.close();
    }
  });

  it('creates an absent stream with file storage and a duplicate window of at least two minutes', async () => {
    const nc = await connect({ servers: nats.url });
    const info = await (await jetstreamManager(nc)).streams.info('DEDUP');
    await nc.close();
    expect(info.config).toMatchObject({
      subjects: ['dedup.>'],
      storage: StorageType.File,
      duplicate_window: nanos(120_000),
    });
  });

  it('refuses a stream it cannot use, saying why', async () => {
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'MEMORY', subjects: ['memory.>'], storage: StorageType.Memory });
    await jsm.streams.add({
      name: 'OTHER',
      subjects: ['elsewhere.>'],
      storage: StorageType.File,
      duplicate_window: nanos(120_000),
    });
    await jsm.streams.add({
      name: 'SHORT',
      subjects: ['short.>'],
      storage: StorageType.File,
      duplicate_window: nanos(10_000),
    });
    await nc.close();
    const refusal = async (stream: string): Promise<string> => {
      const mirror = createNatsMirror({
        store: store.mirror,
        clock: systemClock,
        log: silent,
        config: mirrorConfig(nats.url, stream),
      });
      try {
        await mirror.start();
        return 'started';
      } catch (error) {
        return (error as Error).message;
      } finally {
        await mirror.stop();
      }
    };
    expect(await refusal('MEMORY')).toMatch(/storage is memory, not file/);
    expect(await refusal('OTHER')).toMatch(/do not include "other\.>"/);
    expect(await refusal('SHORT')).toMatch(/duplicate_window is 10 s/);
  });

  it('the daemon does not start on a conflicting stream', async () => {
    const failure = await startTestDaemon('', undefined, undefined, {
      MAILPROXY_NATS_URL: nats.url,
      MAILPROXY_NATS_STREAM: 'MEMORY',
      MAILPROXY_NATS_SUBJECT_PREFIX: 'memory',
    }).then(
      () => 'started',
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/stream MEMORY cannot hold the mirror/);
  });
});
