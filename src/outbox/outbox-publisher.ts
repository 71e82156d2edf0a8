/**
 * Publishing the outbox: windows of rows in order, a window's publishes
 * pipelined on one connection, the cursor moved past a row only after its
 * PubAck (and its message's latest state written). A failed window is retried
 * after a backoff; a row published again carries the same Nats-Msg-Id, and the
 * stream's duplicate window stores it once. Publishes (and the latest state's
 * compare-and-set writes) go through the acknowledged publisher: nats.js's own
 * builds an Error with a stack trace per completed request (profiled: the
 * largest single cost of a node's main thread with the mirror on).
 */
import { headers, type KV, type NatsConnection } from 'nats';
import type { Clock } from '../core/clock.js';
import { affectsLatest, type LatestEvent } from '../core/latest-state.js';
import type { Logger } from '../core/logger.js';
import { eventSubject } from '../core/contracts/event.js';
import type { MirrorStore, PendingEvent } from '../core/mirror.js';
import { exponentialBackoff } from '../core/retry-policy.js';
import { createAckPublisher, type AckPublisher } from './ack-publisher.js';
import { LatestCache, latestWriter, writeLatestAll } from './latest-kv.js';

export interface PublisherConfig {
  subjectPrefix: string;
  /** The latest-state bucket (its keys written by subject); empty: none. */
  latestBucket: string;
  /** A fleet node's id, in every latest-state key; null on a single node. */
  latestKeyNode?: string | null;
  maxInFlight: number;
  publishTimeoutMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
}

const latestEvents = (rows: readonly PendingEvent[]): LatestEvent[] =>
  rows.flatMap((row) =>
    row.messagePk !== null && affectsLatest(row.eventType)
      ? [{ seq: row.seq, eventType: row.eventType, tenantId: row.tenantId, messageId: row.messageId, messagePk: row.messagePk, occurredAt: row.occurredAt }]
      : [],
  );

export function createOutboxPublisher(deps: { store: MirrorStore; clock: Clock; log: Logger; config: PublisherConfig }) {
  const { store, clock, log, config } = deps;
  const latestCache = new LatestCache();
  let publishedTotal = 0;
  let failures = 0;

  /**
   * One window: publish up to maxInFlight rows, bring their messages' latest
   * state up to date, and advance past the acknowledged prefix.
   */
  let publisher: { nc: NatsConnection; acks: AckPublisher } | null = null;
  const acksOn = (nc: NatsConnection): AckPublisher => {
    if (publisher?.nc !== nc) {
      publisher?.acks.close();
      publisher = { nc, acks: createAckPublisher(nc, config.publishTimeoutMs) };
    }
    return publisher.acks;
  };
  const msgIdOf = (id: string) => {
    const h = headers();
    h.set('Nats-Msg-Id', id);
    return h;
  };

  const publishWindow = async (nc: NatsConnection, latest: KV | null): Promise<number> => {
    const acks = acksOn(nc);
    const rows = store.pending(config.maxInFlight);
    if (rows.length === 0) return 0;
    // The latest states are written alongside the events, not after them; the cursor waits for both.
    // A window whose KV writes fail is published again: the stream drops the repeats, the merge ignores them.
    // Settled at once, not when awaited: a KV write that failed while the publishes were still in
    // flight was an unhandled rejection, and the daemon exited on a NATS timeout (found by the soak).
    const kvWrites = (
      latest === null
        ? Promise.resolve()
        : writeLatestAll(latest, latestEvents(rows), latestCache, latestWriter(acks, config.latestBucket), config.latestKeyNode ?? null)
    ).then(
      () => null,
      (error: unknown) => ({ error }),
    );
    const results = await Promise.allSettled(rows.map((row) => acks.publish(eventSubject(config.subjectPrefix, row), row.body, msgIdOf(row.id))));
    const kvFailure = await kvWrites;
    if (kvFailure !== null) throw kvFailure.error;
    const firstFailure = results.findIndex((result) => result.status === 'rejected');
    const acknowledged = firstFailure < 0 ? rows.length : firstFailure;
    const last = rows[acknowledged - 1];
    if (last !== undefined) {
      store.advance(last.seq, clock.now());
      publishedTotal += acknowledged;
    }
    if (firstFailure >= 0) throw (results[firstFailure] as PromiseRejectedResult).reason;
    return rows.length;
  };

  return {
    /**
     * Publishes window after window until the backlog is empty (or `stopping`);
     * answers when to try again: null after success, a backoff after a failure.
     */
    async drain(nc: NatsConnection, latest: KV | null, stopping: () => boolean): Promise<{ nextWakeAt: number | null }> {
      try {
        while ((await publishWindow(nc, latest)) === config.maxInFlight && !stopping());
        failures = 0;
        return { nextWakeAt: null };
      } catch (error) {
        failures += 1;
        store.failed((error as Error).message, clock.now());
        const wait = exponentialBackoff(failures, { initialMs: config.retryInitialMs, maxMs: config.retryMaxMs, jitter: 0 }, 0.5);
        log.warn({ err: error, failures, retryInMs: wait }, 'publishing to the event stream failed; retrying');
        return { nextWakeAt: clock.now() + wait };
      }
    },
    publishedTotal: (): number => publishedTotal,
  };
}
