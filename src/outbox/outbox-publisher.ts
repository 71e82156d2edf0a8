/**
 * Publishing the outbox: windows of rows in order, the cursor moved past a row
 * only after its PubAck (and its message's latest state written). A failed
 * window is retried after a backoff; a row published again carries the same
 * Nats-Msg-Id, and the stream's duplicate window stores it once. The wire side
 * of a window (window-publisher.ts) runs on the main thread or in the mirror's
 * own thread; this side reads the rows and moves the cursor, in SQLite.
 */
import { errorText, type Clock, type Logger } from '../core/index.js';
import { affectsLatest, type LatestEvent, type MirrorStore, type PendingEvent } from '../core/events/index.js';
import { eventSubject } from '../core/contracts/index.js';
import { exponentialBackoff } from '../core/delivery/index.js';
import type { MirrorWindow, WindowOutcome, WindowPublisher } from './window-publisher.js';

/** Windows sent at once: one waits for its PubAcks while the next is read and sent. */
const WINDOWS_IN_FLIGHT = 2;

export interface PublisherConfig {
  subjectPrefix: string;
  maxInFlight: number;
  retryInitialMs: number;
  retryMaxMs: number;
}

const latestEvents = (rows: readonly PendingEvent[]): LatestEvent[] =>
  rows.flatMap((row) =>
    row.messagePk !== null && affectsLatest(row.eventType)
      ? [
          {
            seq: row.seq,
            eventType: row.eventType,
            tenantId: row.tenantId,
            messageId: row.messageId,
            messagePk: row.messagePk,
            occurredAt: row.occurredAt,
            bounceType: row.bounceType,
          },
        ]
      : [],
  );

export function createOutboxPublisher(deps: {
  store: MirrorStore;
  clock: Clock;
  log: Logger;
  config: PublisherConfig;
}) {
  const { store, clock, log, config } = deps;
  let publishedTotal = 0;
  let failures = 0;

  const windowOf = (rows: readonly PendingEvent[]): MirrorWindow => ({
    events: rows.map((row) => ({ subject: eventSubject(config.subjectPrefix, row), body: row.body, msgId: row.id })),
    latest: latestEvents(rows),
  });

  /**
   * Windows out until the backlog is empty (or `stopping`), the next one read and sent while the
   * one before waits for its PubAcks (a backlog drains while this thread reads, not after), and
   * the cursor moved past each window's acknowledged prefix in order. A window that fails stops
   * the drain: what was sent after it is published again from the cursor, and the stream drops
   * the repeats.
   */
  const publishWindows = async (wire: WindowPublisher, stopping: () => boolean): Promise<void> => {
    const inFlight: Array<{ rows: PendingEvent[]; outcome: Promise<WindowOutcome> }> = [];
    let readUpTo = 0;
    let more = true;
    const sendNext = (): void => {
      const rows = store.pending(config.maxInFlight, readUpTo);
      more = rows.length === config.maxInFlight;
      const last = rows.at(-1);
      if (last === undefined) return;
      readUpTo = last.seq;
      inFlight.push({ rows, outcome: wire.publish(windowOf(rows)) });
    };
    sendNext();
    for (let head = inFlight.shift(); head !== undefined; head = inFlight.shift()) {
      while (more && inFlight.length < WINDOWS_IN_FLIGHT - 1 && !stopping()) sendNext();
      const outcome = await head.outcome;
      const last = head.rows[outcome.acknowledged - 1];
      if (last !== undefined) {
        store.advance(last.seq, clock.now());
        publishedTotal += outcome.acknowledged;
      }
      if (outcome.error !== null) {
        await Promise.allSettled(inFlight.map((window) => window.outcome));
        throw new Error(outcome.error);
      }
    }
  };

  return {
    /**
     * Publishes window after window until the backlog is empty (or `stopping`);
     * answers when to try again: null after success, a backoff after a failure.
     */
    async drain(wire: WindowPublisher, stopping: () => boolean): Promise<{ nextWakeAt: number | null }> {
      try {
        await publishWindows(wire, stopping);
        failures = 0;
        return { nextWakeAt: null };
      } catch (error) {
        failures += 1;
        store.failed(errorText(error), clock.now());
        const wait = exponentialBackoff(
          failures,
          { initialMs: config.retryInitialMs, maxMs: config.retryMaxMs, jitter: 0 },
          0.5,
        );
        log.warn({ err: error, failures, retryInMs: wait }, 'publishing to the event stream failed; retrying');
        return { nextWakeAt: clock.now() + wait };
      }
    },
    publishedTotal: (): number => publishedTotal,
  };
}
