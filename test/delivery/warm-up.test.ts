/**
 * An account's warm-up on a real sink: day by day from its start date, no more than the
 * day's cap is relayed; what is over waits (`rate_limited`, until the next UTC day), and
 * `/status` shows the day, the cap and what was sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario } from '../helpers/queue-fixture.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const DAY_MS = 86_400_000;

describe('warm-up', () => {
  it("relays no more than each day's cap from the start date, and the rest the days after", async () => {
    const { fx, sink, key } = await startSinkScenario(cleanups);
    // Ten minutes into a UTC day, so that the test is over long before it turns.
    fx.clock.advance(DAY_MS - (fx.clock.now() % DAY_MS) + 600_000);
    const today = new Date(fx.clock.now()).toISOString().slice(0, 10);
    const saved = await fx.admin('POST', '/account', {
      id: 'main',
      tenant_id: 'acme',
      host: '127.0.0.1',
      port: sink.port,
      tls_mode: 'none',
      warmup: { start_date: today, daily_caps: [2, 3] },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.account.warmup).toEqual({ start_date: today, daily_caps: [2, 3] });

    await fx.post(
      key,
      ['w1', 'w2', 'w3', 'w4', 'w5', 'w6'].map((id) => message(id)),
    );
    await fx.settle();
    await fx.settle();
    expect(sink.messages).toHaveLength(2);
    const status = await fx.admin('GET', '/status');
    expect(status.body.warmup).toEqual([
      { tenant_id: 'acme', account_id: 'main', day: 0, days: 2, cap_today: 2, sent_today: 2 },
    ]);
    const waiting = await fx.detail('acme', 'w3');
    expect(waiting.why.reasons).toEqual([
      expect.objectContaining({
        code: 'rate_limited',
        until_ts: Math.floor(fx.clock.now() / DAY_MS + 1) * (DAY_MS / 1000),
      }),
    ]);

    fx.clock.advance(DAY_MS);
    await fx.settle();
    await fx.settle();
    expect(sink.messages).toHaveLength(5);

    // The schedule is over: only the account's own limits (none) remain.
    fx.clock.advance(DAY_MS);
    await fx.settle();
    await fx.settle();
    expect(sink.messages).toHaveLength(6);
    expect((await fx.admin('GET', '/status')).body.warmup).toEqual([]);
  });

  it('refuses a schedule that is not a date and a list of positive caps', async () => {
    const { fx, sink } = await startSinkScenario(cleanups);
    for (const warmup of [
      { start_date: '2026-13-01', daily_caps: [1] },
      { start_date: '2026-12-01', daily_caps: [] },
      { start_date: '2026-12-01', daily_caps: [0] },
    ]) {
      const refused = await fx.admin('POST', '/account', {
        id: 'main',
        tenant_id: 'acme',
        host: '127.0.0.1',
        port: sink.port,
        tls_mode: 'none',
        warmup,
      });
      expect(refused.status, JSON.stringify(warmup)).toBe(400);
    }
  });
});
