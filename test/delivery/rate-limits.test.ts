import { afterEach, describe, expect, it } from 'vitest';
import { message, startQueueFixture, startSinkScenario, type QueueFixture } from '../helpers/queue-fixture.js';
import { createTestClock } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const mailIds = (sink: SmtpSink): string[] =>
  sink.messages.map((received) => /^X-Genro-Mail-ID: (.+)\r$/m.exec(received.raw.toString())?.[1] ?? '?');

describe('per-account limits', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A clock one second into a minute, so a test's first window is (nearly) whole. */
  const alignedClock = () => {
    const clock = createTestClock();
    clock.advance(61_000 - (clock.now() % 60_000));
    return clock;
  };

  const settleAll = async (fx: QueueFixture): Promise<void> => {
    for (let round = 0; round < 4; round += 1) await fx.settle();
  };

  it('sends 5 per minute of 20 with limit_per_minute = 5, deferring the rest, also across a restart', async () => {
    const sink = await startSmtpSink();
    cleanups.push(async () => sink.stop());
    const clock = alignedClock();
    let fx = await startQueueFixture({ clock });
    const dataDir = fx.t.dataDir;
    cleanups.push(async () => {
      await fx.stop();
      fx.t.cleanup();
    });
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true, limit_per_minute: 5, limit_behavior: 'defer' });
    await fx.post(
      key,
      Array.from({ length: 20 }, (_, index) => message(`m-${String(index).padStart(2, '0')}`)),
    );
    await settleAll(fx);
    expect(sink.messages).toHaveLength(5);
    const waiting = (await fx.detail('acme', 'm-19')).message;
    expect(waiting).toMatchObject({ state: 'queued', attempts: 0 });

    // A restart within the same window must not hand out the window's budget again.
    await fx.stop();
    fx = await startQueueFixture({ clock, dataDir });
    await settleAll(fx);
    expect(sink.messages).toHaveLength(5);

    for (const expected of [10, 15, 20]) {
      const report = await fx.t.daemon.dispatcher.tick();
      // The dispatcher sleeps until the window reopens, not on a poll.
      expect(report.nextWakeAt).toBe(clock.now() - (clock.now() % 60_000) + 60_000);
      clock.advance(60_000);
      await settleAll(fx);
      await sink.waitForMessages(expected);
      expect(sink.messages).toHaveLength(expected);
    }
    // FIFO from one window to the next; within a window the five go out in
    // parallel over the pool's connections, so they may arrive in any order.
    const ids = Array.from({ length: 20 }, (_, index) => `m-${String(index).padStart(2, '0')}`);
    const windows = (list: string[]) => [0, 5, 10, 15].map((start) => list.slice(start, start + 5).sort());
    expect(windows(mailIds(sink))).toEqual(windows(ids));
  });

  it("ends messages over the limit in error 'rate_limit_exceeded' when the account says reject", async () => {
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      clock: alignedClock(),
      account: { limit_per_minute: 2, limit_behavior: 'reject' },
    });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    await fx.post(
      key,
      Array.from({ length: 5 }, (_, index) => message(`r-${index}`)),
    );
    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme' });
    await settleAll(fx);
    await sink.waitForMessages(2);
    const states = await Promise.all(
      Array.from({ length: 5 }, async (_, index) => (await fx.detail('acme', `r-${index}`)).message),
    );
    expect(states.map((stored) => stored.status)).toEqual(['sent', 'sent', 'error', 'error', 'error']);
    expect(states[4]?.error).toBe('rate_limit_exceeded');
  });

  it('gives scarce budget to the higher priority', async () => {
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      clock: alignedClock(),
      account: { limit_per_hour: 1 },
    });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    await fx.post(key, [message('bulk', { priority: 'low' }), message('password-reset', { priority: 'immediate' })]);
    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme' });
    await settleAll(fx);
    await sink.waitForMessages(1);
    expect(mailIds(sink)).toEqual(['password-reset']);
    expect((await fx.detail('acme', 'bulk')).message.state).toBe('queued');
  });
});
