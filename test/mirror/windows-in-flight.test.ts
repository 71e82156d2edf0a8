/**
 * The publisher's windows against a real outbox: the next window is read and
 * sent while the one before waits for its PubAcks, never more than two at
 * once, in the outbox's order; the cursor moves past each window's
 * acknowledged prefix in order, and never past a window that failed, whatever
 * the window after it did. The wire here answers as scripted (it is the
 * publisher's own port); test/mirror/publisher-thread.test.ts and the others
 * hold the real wire to NATS.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createOutboxPublisher } from '../../src/outbox/outbox-publisher.js';
import type { MirrorWindow, WindowOutcome, WindowPublisher } from '../../src/outbox/window-publisher.js';
import { createLogger, systemClock } from '../../src/runtime/index.js';
import { storeWithAdminEvents } from '../helpers/mirror-store.js';

const MAX_IN_FLIGHT = 100;

/** A wire that keeps each window until the test answers it. */
function scriptedWire() {
  const sent: Array<{ window: MirrorWindow; answer: (outcome: WindowOutcome) => void }> = [];
  let unanswered = 0;
  let mostUnanswered = 0;
  const wire: WindowPublisher = {
    publish: (window) =>
      new Promise((resolve) => {
        unanswered += 1;
        mostUnanswered = Math.max(mostUnanswered, unanswered);
        sent.push({
          window,
          answer: (outcome) => {
            unanswered -= 1;
            resolve(outcome);
          },
        });
      }),
    close: async () => undefined,
  };
  return { wire, sent, mostUnanswered: () => mostUnanswered };
}

const ids = (window: MirrorWindow): number[] =>
  window.events.map((event) => JSON.parse(new TextDecoder().decode(event.body)).data.index as number);
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('windows in flight', () => {
  let remove: () => void = () => undefined;
  afterEach(() => remove());

  const setUp = (count: number) => {
    const made = storeWithAdminEvents('windows', count, () => 'acme');
    remove = made.remove;
    const publisher = createOutboxPublisher({
      store: made.store.mirror,
      clock: systemClock,
      log: createLogger({ level: 'silent' }),
      config: { subjectPrefix: 'windows', maxInFlight: MAX_IN_FLIGHT, retryInitialMs: 1000, retryMaxMs: 1000 },
    });
    return { store: made.store, publisher };
  };

  it('reads the next window while one waits, two at most, in order, and moves the cursor past each', async () => {
    const { store, publisher } = setUp(250);
    const { wire, sent, mostUnanswered } = scriptedWire();
    const drained = publisher.drain(wire, () => false);
    await settled();
    // The first window waits for its PubAcks, and the second is already out.
    expect(sent.map((entry) => ids(entry.window)[0])).toEqual([0, 100]);
    sent[0]!.answer({ acknowledged: MAX_IN_FLIGHT, error: null });
    await settled();
    expect(store.mirror.backlog().count).toBe(150);
    expect(sent).toHaveLength(3);
    sent[1]!.answer({ acknowledged: MAX_IN_FLIGHT, error: null });
    sent[2]!.answer({ acknowledged: 50, error: null });
    expect(await drained).toEqual({ nextWakeAt: null });
    expect(sent.flatMap((entry) => ids(entry.window))).toEqual(Array.from({ length: 250 }, (_, index) => index));
    expect(mostUnanswered()).toBe(2);
    expect(store.mirror.backlog().count).toBe(0);
  });

  it('stops at a failed window: the cursor stays at its acknowledged prefix though the next was acknowledged, and the next drain starts there', async () => {
    const { store, publisher } = setUp(250);
    const { wire, sent } = scriptedWire();
    const drained = publisher.drain(wire, () => false);
    await settled();
    sent[1]!.answer({ acknowledged: MAX_IN_FLIGHT, error: null });
    sent[0]!.answer({ acknowledged: 40, error: 'TIMEOUT' });
    const report = await drained;
    expect(report.nextWakeAt).not.toBeNull();
    expect(sent).toHaveLength(2);
    expect(store.mirror.backlog().count).toBe(210);
    expect(store.mirror.record().lastError).toBe('TIMEOUT');

    const again = scriptedWire();
    const redrained = publisher.drain(again.wire, () => false);
    await settled();
    expect(ids(again.sent[0]!.window)[0]).toBe(40);
    again.sent[0]!.answer({ acknowledged: MAX_IN_FLIGHT, error: null });
    await settled();
    again.sent[1]!.answer({ acknowledged: MAX_IN_FLIGHT, error: null });
    await settled();
    again.sent[2]!.answer({ acknowledged: 10, error: null });
    expect(await redrained).toEqual({ nextWakeAt: null });
    expect(store.mirror.backlog().count).toBe(0);
  });
});
