/**
 * GET /account/{id} on the real daemon and a real sink: the account's relay
 * connections (asked of the relay thread that holds its pool) and its last
 * failed and successful attempts, kept in memory since the start.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { histogramSeries, parsePrometheusText, type MetricFamily } from '../helpers/prometheus-text.js';
import { message, startQueueFixture, startSinkScenario } from '../helpers/queue-fixture.js';
import { startSmtpSink } from '../peers/smtp-sink.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('GET /account/{id}: connections and last attempts', () => {
  it('shows the 451 of the last failed attempt, and keeps it with its time after the next attempt succeeds', async () => {
    let refuse = true;
    const { fx, key } = await startSinkScenario(cleanups, {
      sink: { onData: () => (refuse ? { code: 451, message: '4.3.0 try again later' } : null) },
    });
    const account = async () => (await fx.admin('GET', '/account/main?tenant_id=acme')).body.account;
    expect(await account()).toMatchObject({
      last_error: null,
      last_success_ts: null,
      connections: { in_use: 0, max: 5 },
    });

    await fx.post(key, [message('m-1')]);
    await fx.settle();
    const failed = await account();
    expect(failed.last_error).toEqual({
      text: expect.stringMatching(/^451 .*try again later/),
      reply_code: 451,
      at_ts: expect.any(Number),
    });
    expect(Math.abs(failed.last_error.at_ts - fx.clock.now() / 1000)).toBeLessThan(5);
    expect(failed.last_success_ts).toBeNull();

    refuse = false;
    fx.clock.advance(61_000); // past the first retry (60 s)
    await fx.settle();
    const recovered = await account();
    expect(recovered.last_error).toEqual(failed.last_error);
    expect(recovered.last_success_ts).toBeGreaterThan(failed.last_error.at_ts);

    // The same two attempts, timed per outcome.
    const relay = histogramSeries(
      parsePrometheusText((await fx.admin('GET', '/metrics')).text).get(
        'mailproxy_relay_response_seconds',
      ) as MetricFamily,
    );
    expect(Object.fromEntries(relay.map((series) => [series.labels.outcome, series.count]))).toEqual({
      deferred: 1,
      sent: 1,
    });
  });

  it('counts the connection open to the relay and in use while a message is on the wire', async () => {
    const sink = await startSmtpSink({ hangAfterData: true });
    // A send timeout longer than the test: the message stays on the wire until the sink stops.
    const fx = await startQueueFixture({ dispatch: { send_timeout_seconds: '30' } });
    cleanups.push(
      async () => {
        await fx.stop();
        fx.t.cleanup();
      },
      async () => sink.stop(),
    );
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true, max_connections: 2 });

    await fx.post(key, [message('m-1')]);
    await fx.t.daemon.dispatcher.tick();
    await sink.waitForUnanswered(1);
    const { body } = await fx.admin('GET', '/accounts?tenant_id=acme');
    expect(body.accounts).toMatchObject([
      { id: 'main', connections: { open: 1, in_use: 1, max: 2 }, last_error: null },
    ]);
    expect(sink.connections()).toBe(1);
  });
});
