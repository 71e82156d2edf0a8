/**
 * GET /messages/{id} answers "why is this still queued?" (`why`) from the
 * real daemon's state: a suspended batch, a relay's temporary refusal, a
 * client's schedule, an exhausted sending limit; nothing once it is sent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { message, startOverMinuteLimit, startSinkScenario } from '../helpers/queue-fixture.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const why = async (fx: Awaited<ReturnType<typeof startSinkScenario>>['fx'], id: string) =>
  (await fx.detail('acme', id)).why;

describe('why a message is still queued', () => {
  it('names a suspended batch, then nothing once the batch is activated and the message sent', async () => {
    const { fx, key } = await startSinkScenario(cleanups);
    expect((await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'spring' })).status).toBe(200);
    await fx.post(key, [message('held', { batch_code: 'spring' })]);
    await fx.settle();
    expect(await why(fx, 'held')).toMatchObject({
      waiting: true,
      reasons: [{ code: 'batch_suspended', until_ts: null }],
    });

    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme', batch_code: 'spring' });
    await fx.settle();
    expect(await why(fx, 'held')).toEqual({ waiting: false, reasons: [], expires_ts: null });
  });

  it("names the relay's refusal with the next attempt, and a client's schedule", async () => {
    const { fx, key } = await startSinkScenario(cleanups, {
      sink: { onData: () => ({ code: 451, message: '4.7.1 Greylisted, come back later' }) },
    });
    const later = Math.floor(fx.clock.now() / 1000) + 3600;
    await fx.post(key, [message('grey'), message('tomorrow', { deferred_ts: later })]);
    await fx.settle();
    await fx.settle();
    const { message: grey } = await fx.detail('acme', 'grey');
    const greyWhy = await why(fx, 'grey');
    expect(greyWhy.reasons).toMatchObject([{ code: 'retry_backoff', until_ts: grey.next_attempt_ts }]);
    expect(greyWhy.reasons[0].message).toContain('Greylisted');
    expect(greyWhy.expires_ts).toBe(grey.created_ts + 5 * 24 * 3600);
    expect((await why(fx, 'tomorrow')).reasons).toMatchObject([{ code: 'scheduled', until_ts: later }]);
  });

  it('names an exhausted sending limit and when its window ends', async () => {
    const { fx } = await startOverMinuteLimit(cleanups);
    const ids = ['first', 'second'];
    const states = await Promise.all(ids.map(async (id) => (await fx.detail('acme', id)).message.state));
    const waiting = ids[states.indexOf('queued')] ?? ids[states.indexOf('deferred')];
    if (waiting === undefined)
      throw new Error(`expected one message held back by the limit, states ${states.join(', ')}`);
    const reasons = (await why(fx, waiting)).reasons as Array<{ code: string; until_ts: number | null }>;
    const limited = reasons.find((reason) => reason.code === 'rate_limited');
    expect(limited?.until_ts).toBe(Math.floor(fx.clock.now() / 60_000) * 60 + 60);
  });
});
