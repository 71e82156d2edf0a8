import { describe, expect, it } from 'vitest';
import type { RecordedOutcome } from '../core/message/queue.js';
import type { Logger } from '../core/logger.js';
import { createOutcomeBatcher } from './outcome-batcher.js';

const outcome = (pk: number): RecordedOutcome => ({
  pk,
  attempt: 1,
  at: 0,
  kind: 'released',
  reason: 'test',
  replyCode: null,
  enhancedStatus: null,
});
// The delivery room may not import the runtime's pino logger; nothing here reads the log.
const quiet = (): undefined => undefined;
const silent: Logger = { fatal: quiet, error: quiet, warn: quiet, info: quiet, debug: quiet, child: () => silent };

describe('outcome batcher when the store refuses a commit', () => {
  it('keeps the group and records it once the store takes it again, instead of leaving the messages sending until their lease expires', async () => {
    let refusing = true;
    const recorded: number[][] = [];
    const queue = {
      record: (group: readonly RecordedOutcome[]) => {
        if (refusing) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
        recorded.push(group.map((entry) => entry.pk));
        return group.length;
      },
    };
    const batcher = createOutcomeBatcher({ queue, log: silent, retryMs: 10 });
    batcher.add(outcome(1));
    batcher.add(outcome(2));
    batcher.flush();
    expect(batcher.pending()).toBe(2);
    batcher.add(outcome(3));
    refusing = false;
    await expect.poll(() => recorded.flat()).toEqual([1, 2, 3]);
    expect(batcher.pending()).toBe(0);
  });

  it('abandon() at stop forgets what could not be recorded and retries no more', async () => {
    let calls = 0;
    const batcher = createOutcomeBatcher({
      queue: {
        record: () => {
          calls += 1;
          throw new Error('locked');
        },
      },
      log: silent,
      retryMs: 5,
    });
    batcher.add(outcome(1));
    batcher.flush();
    expect(batcher.abandon()).toBe(1);
    const after = calls;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(calls).toBe(after);
  });
});
