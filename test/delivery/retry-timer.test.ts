/**
 * A deferred message is tried again at its retry instant on its own: on an idle
 * daemon nothing else wakes the dispatcher (no new mail, no command), so the
 * instant must come from the dispatcher's own timer. Real time, a one-second
 * retry schedule, no tick() from the test after the submission.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario } from '../helpers/queue-fixture.js';

describe('a deferred message on an idle daemon', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('is tried again at its retry instant without anything else waking the dispatcher', async () => {
    let attempts = 0;
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      sink: { onData: () => (++attempts === 1 ? { code: 451, message: '4.7.1 try again later' } : null) },
      dispatch: { retry_schedule_seconds: '[1]' },
    });

    await fx.post(key, [message('retried')]);
    // The 451, then the retry a second later: both from the daemon's own wakes.
    await sink.waitForMessages(1, 15_000);
    expect(attempts).toBe(2);
    await fx.t.daemon.dispatcher.idle();
    expect((await fx.detail('acme', 'retried')).events.map((event) => event.event_type)).toEqual([
      'queued',
      'sending',
      'deferred',
      'sending',
      'sent',
    ]);
  });
});
