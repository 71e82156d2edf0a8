/**
 * Group commit of delivery outcomes: every commit rewrites the pages it touches,
 * so one per finished send would cost more than the send. A group is
 * committed when it holds `maxGroup` outcomes or is `maxDelayMs` old; a crash
 * inside that window re-sends those messages (same X-Genro-Mail-ID). A group
 * the store refuses (full, locked) is kept and committed again later.
 */
import type { Logger } from '../core/index.js';
import type { MessageQueue, RecordedOutcome } from '../core/message/index.js';

export interface OutcomeBatcher {
  add(outcome: RecordedOutcome): void;
  /** Commits what is pending now. */
  flush(): void;
  pending(): number;
  /** At stop, after the last flush: forgets what could not be recorded (the leases are handed back) and stops retrying. */
  abandon(): number;
}

export function createOutcomeBatcher(options: {
  queue: Pick<MessageQueue, 'record'>;
  log: Logger;
  maxGroup?: number;
  maxDelayMs?: number;
  retryMs?: number;
  /** After a group is committed (the dispatcher reads the queue as it now is). */
  onRecorded?: (group: readonly RecordedOutcome[]) => void;
}): OutcomeBatcher {
  const maxGroup = options.maxGroup ?? 200;
  const maxDelayMs = options.maxDelayMs ?? 10;
  const retryMs = options.retryMs ?? 1000;
  let outcomes: RecordedOutcome[] = [];
  let timer: NodeJS.Timeout | null = null;

  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (outcomes.length === 0) return;
    const group = outcomes;
    outcomes = [];
    try {
      options.queue.record(group);
    } catch (error) {
      // Nothing of the group was written (one transaction). Dropping it left each
      // message `sending` until its lease expired (lease_seconds, 5 min by default)
      // and then sent the relayed ones a second time: a full or locked store must
      // delay the bookkeeping, not repeat deliveries (test/chaos/outages-store-full).
      // An outcome whose lease was reclaimed meanwhile is ignored by record().
      outcomes = [...group, ...outcomes];
      options.log.error({ err: error, outcomes: group.length }, 'recording delivery outcomes failed; will try again');
      timer = setTimeout(flush, retryMs);
      return;
    }
    options.onRecorded?.(group);
  };

  return {
    add(outcome) {
      outcomes.push(outcome);
      if (outcomes.length >= maxGroup) flush();
      else timer ??= setTimeout(flush, maxDelayMs);
    },
    flush,
    pending: () => outcomes.length,
    abandon() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const dropped = outcomes.length;
      outcomes = [];
      return dropped;
    },
  };
}
