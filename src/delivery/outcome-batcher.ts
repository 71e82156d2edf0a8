/**
 * Group commit of delivery outcomes: every commit rewrites the pages it touches,
 * so one per finished send would cost more than the send (measured). A group is
 * committed when it holds `maxGroup` outcomes or is `maxDelayMs` old; a crash
 * inside that window re-sends those messages (same X-Genro-Mail-ID).
 */
import type { Logger } from '../core/logger.js';
import type { MessageQueue, RecordedOutcome } from '../core/queue.js';

export interface OutcomeBatcher {
  add(outcome: RecordedOutcome): void;
  /** Commits what is pending now. */
  flush(): void;
  pending(): number;
}

export function createOutcomeBatcher(options: { queue: Pick<MessageQueue, 'record'>; log: Logger; maxGroup?: number; maxDelayMs?: number }): OutcomeBatcher {
  const maxGroup = options.maxGroup ?? 200;
  const maxDelayMs = options.maxDelayMs ?? 10;
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
      // The leases stay; they expire and the messages are sent again. Nothing is lost.
      options.log.error({ err: error, outcomes: group.length }, 'recording delivery outcomes failed');
    }
  };

  return {
    add(outcome) {
      outcomes.push(outcome);
      if (outcomes.length >= maxGroup) flush();
      else timer ??= setTimeout(flush, maxDelayMs);
    },
    flush,
    pending: () => outcomes.length,
  };
}
