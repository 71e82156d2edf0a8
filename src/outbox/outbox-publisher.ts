/**
 * Publishing the outbox: windows of rows in order, the cursor moved past a row
 * only after its PubAck (and its message's latest state written). A failed
 * window is retried after a backoff; a row published again carries the same
 * Nats-Msg-Id, and the stream's duplicate window stores it once. The wire side
 * of a window (window-publisher.ts) runs on the main thread or in the mirror's
 * own thread; this side reads the rows and moves the cursor, in SQLite.
 */
import type { Clock } from '../core/clock.js';
import { affectsLatest, type LatestEvent } from '../core/latest-state.js';
import type { Logger } from '../core/logger.js';
import { eventSubject } from '../core/contracts/event.js';
import type { MirrorStore, PendingEvent } from '../core/mirror.js';
import { exponentialBackoff } from '../core/retry-policy.js';
import type { MirrorWindow, WindowPublisher } from './window-publisher.js';

export interface PublisherConfig {
  subjectPrefix: string;
  maxInFlight: number;
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
  let publishedTotal = 0;
  let failures = 0;

  const windowOf = (rows: readonly PendingEvent[]): MirrorWindow => ({
    events: rows.map((row) => ({ subject: eventSubject(config.subjectPrefix, row), body: row.body, msgId: row.id })),
    latest: latestEvents(rows),
  });

  /** One window: up to maxInFlight rows out, and the cursor past the acknowledged prefix. */
  const publishWindow = async (wire: WindowPublisher): Promise<number> => {
    const rows = store.pending(config.maxInFlight);
    if (rows.length === 0) return 0;
    const outcome = await wire.publish(windowOf(rows));
    const last = rows[outcome.acknowledged - 1];
    if (last !== undefined) {
      store.advance(last.seq, clock.now());
      publishedTotal += outcome.acknowledged;
    }
    if (outcome.error !== null) throw new Error(outcome.error);
    return rows.length;
  };

  return {
    /**
     * Publishes window after window until the backlog is empty (or `stopping`);
     * answers when to try again: null after success, a backoff after a failure.
     */
    async drain(wire: WindowPublisher, stopping: () => boolean): Promise<{ nextWakeAt: number | null }> {
      try {
        while ((await publishWindow(wire)) === config.maxInFlight && !stopping());
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
