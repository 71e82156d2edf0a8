/**
 * One window of the mirror on the wire: its events published pipelined over
 * the acknowledged publisher, and the latest state of the messages they touch
 * written alongside. The outbox side (which rows, the cursor) is
 * outbox-publisher.ts; this side only needs a NATS connection, so it runs as
 * well in the mirror's own thread (mirror-publisher.thread.ts) as on the
 * main thread.
 */
import { headers, type NatsConnection } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import { errorText } from '../core/index.js';
import type { LatestEvent } from '../core/events/index.js';
import { createAckPublisher, type AckPublisher } from './ack-publisher.js';
import { LatestCache, latestWriter, writeLatestAll } from './latest-kv.js';

/** An event as it goes out: its subject, its bytes and its `Nats-Msg-Id`. */
export interface WindowEvent {
  subject: string;
  body: Uint8Array;
  msgId: string;
}

export interface MirrorWindow {
  events: WindowEvent[];
  /** The window's events that say something of their message's latest state. */
  latest: LatestEvent[];
}

/**
 * How far the window got: the events acknowledged in order from its start (the cursor may
 * pass them), and why it stopped short. A latest-state write that failed counts none as done:
 * the window is published again, and the stream drops the repeats.
 */
export interface WindowOutcome {
  acknowledged: number;
  error: string | null;
}

export interface WindowPublisher {
  publish(window: MirrorWindow): Promise<WindowOutcome>;
  /** Fails a window still waiting for its PubAcks; a thread's connection drains first, within `withinMs`. */
  close(withinMs: number): Promise<void>;
}

export interface WindowSettings {
  /** The latest-state bucket; empty: none. */
  latestBucket: string;
  /** A fleet node's id, in every latest-state key; null on a single node. */
  latestKeyNode: string | null;
  publishTimeoutMs: number;
}

/**
 * Publishes windows over whatever connection `current` answers (null: none yet, and the window
 * fails), each window's events issued when it is handed over, so the stream stores them in the
 * order the windows came. The acknowledged publisher is made anew when the connection changes;
 * what this writer last wrote to each latest-state key is kept across windows, so the usual
 * write is one compare-and-set without a read.
 */
export function createWindowPublisher(
  settings: WindowSettings,
  current: () => { nc: NatsConnection; latest: KV | null } | null,
): WindowPublisher {
  const latestCache = new LatestCache();
  let latestWrites: Promise<unknown> = Promise.resolve();
  let publisher: { nc: NatsConnection; acks: AckPublisher } | null = null;
  const acksOn = (nc: NatsConnection): AckPublisher => {
    if (publisher?.nc !== nc) {
      publisher?.acks.close();
      publisher = { nc, acks: createAckPublisher(nc, settings.publishTimeoutMs) };
    }
    return publisher.acks;
  };
  const msgIdOf = (id: string) => {
    const h = headers();
    h.set('Nats-Msg-Id', id);
    return h;
  };

  return {
    async publish(window) {
      const link = current();
      if (link === null) return { acknowledged: 0, error: 'not connected to NATS' };
      const acks = acksOn(link.nc);
      // The latest states are written alongside the events, not after them; the cursor waits for both.
      // Settled at once, not when awaited: a KV write that failed while the publishes were still in
      // flight was an unhandled rejection, and the daemon exited on a NATS timeout (found by the soak).
      // A window's latest states are written after the window before's: two in flight may touch the same
      // key, and each write is a compare-and-set from the revision the one before left in the cache.
      const latest = link.latest;
      const kvWrites = latestWrites.then(() =>
        (latest === null || window.latest.length === 0
          ? Promise.resolve()
          : writeLatestAll(
              latest,
              window.latest,
              latestCache,
              latestWriter(acks, settings.latestBucket),
              settings.latestKeyNode,
            )
        ).then(() => null, errorText),
      );
      latestWrites = kvWrites;
      const results = await Promise.allSettled(
        window.events.map((event) => acks.publish(event.subject, event.body, msgIdOf(event.msgId))),
      );
      const kvFailure = await kvWrites;
      // A latest state missing: nothing counts as done, so the whole window is done again.
      if (kvFailure !== null) return { acknowledged: 0, error: kvFailure };
      const firstFailure = results.findIndex((result) => result.status === 'rejected');
      if (firstFailure >= 0)
        return {
          acknowledged: firstFailure,
          error: errorText((results[firstFailure] as PromiseRejectedResult).reason),
        };
      return { acknowledged: window.events.length, error: null };
    },
    async close() {
      publisher?.acks.close();
      publisher = null;
    },
  };
}
