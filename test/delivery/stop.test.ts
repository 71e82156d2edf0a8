import { afterEach, describe, expect, it } from 'vitest';
import { ON_WIRE_PER_CONNECTION } from '../../src/delivery/account-lane.js';
import { message, startSinkScenario } from '../helpers/queue-fixture.js';

describe('stopping the dispatcher', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('returns claimed but unsent messages to the queue, hands back what was in flight at the deadline', async () => {
    // A relay that takes each message and never answers: sends stay in flight.
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      sink: { hangAfterData: true },
      account: { max_connections: 1 },
    });
    const ids = Array.from({ length: 30 }, (_, index) => `s-${String(index).padStart(2, '0')}`);
    await fx.post(
      key,
      ids.map((id) => message(id)),
    );
    await sink.waitForUnanswered(1);
    await fx.t.daemon.dispatcher.tick();
    expect(fx.t.daemon.dispatcher.ready()).toBeGreaterThan(0);
    const onWire = fx.t.daemon.dispatcher.inflight();
    expect(onWire).toBeGreaterThan(0);
    expect(onWire).toBeLessThanOrEqual(ON_WIRE_PER_CONNECTION);

    await fx.t.daemon.dispatcher.stop(100);
    const states = await Promise.all(ids.map(async (id) => (await fx.detail('acme', id)).message));
    // Nothing is left `sending`: the store may close now.
    expect(states.filter((stored) => stored.state !== 'queued')).toEqual([]);
    // Sends on the wire at the deadline count as an attempt (the relay may have the message); the rest were never tried.
    const interrupted = states.filter((stored) => stored.attempts === 1);
    expect(interrupted).toHaveLength(onWire);
    expect(states.filter((stored) => stored.attempts === 0)).toHaveLength(ids.length - onWire);
    const handedBack = await fx.detail('acme', interrupted[0]?.id);
    expect(handedBack.events.map((event) => event.event_type)).toContain('lease_expired');
    const released = await fx.detail('acme', states.find((stored) => stored.attempts === 0)?.id);
    expect(released.events.map((event) => event.event_type)).toContain('released');
    // That the next process sends them is test/e2e/sigterm-under-load.test.ts.
  });
});
