import { afterEach, describe, expect, it } from 'vitest';
import { ON_WIRE_PER_CONNECTION } from '../../src/delivery/account-lane.js';
import { message, startQueueFixture, startSinkScenario } from '../helpers/queue-fixture.js';

describe('stopping the dispatcher', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('returns claimed but unsent messages to the queue, and the next start sends what was in flight', async () => {
    // A relay that takes each message and never answers: sends stay in flight.
    const { fx, sink, key } = await startSinkScenario(cleanups, { sink: { hangAfterData: true }, account: { max_connections: 1 } });
    const ids = Array.from({ length: 30 }, (_, index) => `s-${String(index).padStart(2, '0')}`);
    await fx.post(key, ids.map((id) => message(id)));
    await sink.waitForUnanswered(1);
    await fx.t.daemon.dispatcher.tick();
    expect(fx.t.daemon.dispatcher.ready()).toBeGreaterThan(0);

    await fx.t.daemon.dispatcher.stop(100);
    const states = await Promise.all(ids.map(async (id) => (await fx.detail('acme', id)).message));
    const sending = states.filter((stored) => stored.state === 'sending');
    const queued = states.filter((stored) => stored.state === 'queued');
    // At most the lane's sends per connection handed over; everything else back in the queue, its attempt not spent.
    expect(sending.length).toBeGreaterThan(0);
    expect(sending.length).toBeLessThanOrEqual(ON_WIRE_PER_CONNECTION);
    expect(queued.length).toBe(ids.length - sending.length);
    for (const stored of queued) expect(stored.attempts).toBe(0);
    const released = await fx.detail('acme', queued[0]?.id);
    expect(released.events.map((event) => event.event_type)).toContain('released');

    // The daemon's stop waits for the send in flight until its deadline (here the
    // relay's timeout ends it first); whatever is still leased after that is taken
    // back by the next process at once (the crash test covers that path).
    await fx.stop();
    const next = await startQueueFixture({ clock: fx.clock, dataDir: fx.t.dataDir });
    cleanups.push(async () => next.stop());
    const resumed = await next.detail('acme', sending[0]?.id);
    expect(resumed.message.state).not.toBe('sending');
    expect(resumed.events.map((event) => event.event_type)).toEqual(expect.arrayContaining([expect.stringMatching(/^(deferred|lease_expired)$/)]));
  });
});
