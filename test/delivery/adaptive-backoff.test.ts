/**
 * Adaptive backoff against a real smtp-server sink that accepts 60 messages in any minute and
 * answers `421 4.7.0 Try again later` beyond (a provider's per-minute quota). The same 200
 * messages are relayed by a daemon with adaptive backoff and by one without (the fixed retry
 * schedule alone), in the same run: with it, everything is delivered once and under 10% of
 * attempts are refused; both figures are printed. The test clock is moved forward in small steps
 * (the sink reads it too), so that minutes of relaying take seconds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';
import { createTestClock, type TestClock } from '../helpers/test-daemon.js';
import type { SinkReply } from '../peers/smtp-sink.js';

const QUOTA = 60;
const MESSAGES = 200;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A relay's per-minute quota over a sliding minute of the test clock. */
function minuteQuota(clock: TestClock) {
  let window: number[] = [];
  const counts = { accepted: 0, refused: 0 };
  return {
    counts,
    onData(): SinkReply | null {
      const now = clock.now();
      window = window.filter((at) => at > now - 60_000);
      if (window.length >= QUOTA) {
        counts.refused += 1;
        return { code: 421, message: '4.7.0 Try again later, closing connection' };
      }
      window.push(now);
      counts.accepted += 1;
      return null;
    },
  };
}

interface Run {
  scenario: SinkScenario;
  counts: { accepted: number; refused: number };
  simulatedMs: number;
}

/** Posts the messages, then moves the clock `stepMs` at a time until all are relayed (or `limitMs` is reached). */
async function relayAll(adaptive: boolean, stepMs: number, limitMs: number): Promise<Run> {
  const clock = createTestClock();
  const quota = minuteQuota(clock);
  const scenario = await startSinkScenario(cleanups, {
    clock,
    sink: { onData: () => quota.onData(), enhancedStatusCodes: false },
    account: { max_connections: 1 },
    dispatch: { adaptive_backoff: String(adaptive), retry_schedule_seconds: '[60, 300]' },
  });
  const { fx, key } = scenario;
  for (let batch = 0; batch < MESSAGES / 100; batch += 1) {
    const messages = Array.from({ length: 100 }, (_, index) => message(`m${batch * 100 + index}`));
    expect((await fx.post(key, messages)).status).toBe(200);
  }
  const started = clock.now();
  while (quota.counts.accepted < MESSAGES && clock.now() - started < limitMs) {
    await fx.settle();
    clock.advance(stepMs);
  }
  await fx.t.daemon.dispatcher.idle();
  return { scenario, counts: quota.counts, simulatedMs: clock.now() - started };
}

const refusedShare = ({ accepted, refused }: Run['counts']): number => refused / (accepted + refused);

describe('adaptive backoff', () => {
  it('relays everything to a relay with a per-minute quota with under 10% of attempts refused, against the fixed retry', async () => {
    // Steps shorter than the pace's spacing (45 a minute: 1.3 s); the fixed schedule needs none (60 s, then 300 s).
    const adaptive = await relayAll(true, 500, 15 * 60_000);
    const fixed = await relayAll(false, 5000, 40 * 60_000);
    const report = (name: string, run: Run) =>
      `${name}: ${run.counts.accepted} accepted, ${run.counts.refused} refused (${(100 * refusedShare(run.counts)).toFixed(1)}% of attempts) in ${Math.round(run.simulatedMs / 1000)} s of clock`;
    console.log(`${report('adaptive backoff', adaptive)}\n${report('fixed retry', fixed)}`);

    // Everything delivered, each message once.
    const ids = adaptive.scenario.sink.messages.map(
      (received) => received.raw.toString().match(/^Message-ID: (.*)$/im)?.[1],
    );
    expect(ids).toHaveLength(MESSAGES);
    expect(new Set(ids).size).toBe(MESSAGES);
    expect(refusedShare(adaptive.counts)).toBeLessThan(0.1);
    expect(refusedShare(fixed.counts)).toBeGreaterThan(refusedShare(adaptive.counts));

    // While paced, the account says so: /status, the metrics, a message's waiting reasons.
    const { fx, key } = adaptive.scenario;
    const status = await fx.admin('GET', '/status');
    expect(status.body.pacing).toEqual([
      expect.objectContaining({ tenant_id: 'acme', account_id: 'main', per_minute: expect.any(Number) }),
    ]);
    expect(status.body.pacing[0].pushbacks).toBeGreaterThan(0);
    const accounts = await fx.admin('GET', '/accounts?tenant_id=acme');
    expect(accounts.body.accounts[0].pace).toMatchObject({
      per_minute: expect.any(Number),
      pushbacks: expect.any(Number),
    });
    const metrics = await fx.admin('GET', '/metrics');
    expect(metrics.text).toMatch(/^mailproxy_account_pace\{tenant_id="acme",account_id="main"\} \d/m);
    await fx.post(key, [message('late')]);
    const late = await fx.detail('acme', 'late');
    expect(late.why.reasons).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'relay_backoff', until_ts: expect.any(Number) })]),
    );
  }, 120_000);
});
