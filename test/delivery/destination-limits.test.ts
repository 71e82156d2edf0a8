/**
 * Per-destination limits on a real sink, on the daemon's clock: an account holds the mail for
 * gmail.com (and googlemail.com) to 3 a minute and *.outlook.com to 1, while mail to other domains
 * flows at the account's own pace. What waits says so (`destination_limited`, the destination and
 * when), goes in the windows after, spread one slot apart; a message to two limited destinations
 * goes once, whole, when both have budget; a destination's `max_connections` caps its sends in flight.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario } from '../helpers/queue-fixture.js';
import type { SinkMessage } from '../peers/smtp-sink.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MINUTE = 60_000;
const GMAIL = { domains: ['gmail.com', 'googlemail.com'], limit_per_minute: 3 };
const OUTLOOK = { name: 'outlook', domains: ['*.outlook.com'], limit_per_minute: 1 };

const idOf = (received: SinkMessage): string => /X-Genro-Mail-ID: (\S+)/i.exec(received.raw.toString())?.[1] ?? '';
const ids = (received: readonly SinkMessage[]): string[] => received.map(idOf).sort();

describe('per-destination limits', () => {
  it('holds each limited destination to its pace while other domains flow, and says why', async () => {
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      account: { destination_limits: [GMAIL, OUTLOOK] },
    });
    // Ten seconds into a minute of the daemon's clock: every send of a step lands in one window.
    fx.clock.advance(MINUTE - (fx.clock.now() % MINUTE) + 10_000);
    const minuteEnd = Math.ceil(fx.clock.now() / MINUTE) * MINUTE;
    const saved = await fx.admin('GET', '/accounts?tenant_id=acme');
    expect(saved.body.accounts[0].destination_limits).toEqual([
      { name: 'gmail.com', ...GMAIL, limit_per_hour: null, limit_per_day: null, max_connections: null },
      { ...OUTLOOK, limit_per_hour: null, limit_per_day: null, max_connections: null },
    ]);

    const posted = await fx.post(key, [
      ...['g1', 'g2', 'g3', 'g4', 'g5'].map((id) => message(id, { to: `${id}@gmail.com` })),
      message('n1', { to: 'n1@example.net' }),
      // Both limited destinations: it goes once, whole, when both have budget.
      message('both', { to: ['b@googlemail.com', 'b@mx.outlook.com'] }),
      message('n2', { to: 'n2@example.net' }),
      message('o1', { to: 'o1@outlook.com' }),
    ]);
    expect(posted.status, posted.text).toBe(200);
    await fx.settle();
    // Three for gmail (its minute's limit), both of example.net, the one for outlook.
    expect(ids(sink.messages)).toEqual(['g1', 'g2', 'g3', 'n1', 'n2', 'o1']);

    const held = await fx.detail('acme', 'g4');
    expect(held.message.status).toBe('queued');
    expect(held.message.attempts).toBe(0);
    expect(held.why.reasons).toEqual([
      {
        code: 'destination_limited',
        message: expect.stringContaining('destination "gmail.com", which has used its limit through account "main"'),
        until_ts: minuteEnd / 1000,
      },
    ]);
    // Held for the destination whose budget returns last: gmail at the minute's end, after g4 and g5.
    const both = await fx.detail('acme', 'both');
    expect(both.why.reasons[0]).toMatchObject({ code: 'destination_limited' });
    expect(both.events.map((event) => event.event_type)).toEqual(['queued']);

    // The next minute: the held ones go one slot apart (a minute / 3), never more than 3 in a minute.
    fx.clock.advance(minuteEnd - fx.clock.now());
    await fx.settle();
    expect(ids(sink.messages.slice(6))).toEqual(['g4']);
    fx.clock.advance(20_000);
    await fx.settle();
    expect(ids(sink.messages.slice(6))).toEqual(['g4', 'g5']);
    fx.clock.advance(20_000);
    await fx.settle();
    // The two-destination message's slot is the third of this minute (after g4 and g5), and outlook has budget again.
    expect(ids(sink.messages.slice(6))).toEqual(['both', 'g4', 'g5']);
    const whole = sink.messages.find((received) => idOf(received) === 'both');
    expect(whole?.rcptTo.sort()).toEqual(['b@googlemail.com', 'b@mx.outlook.com']);
    expect(sink.messages).toHaveLength(9); // each once

    const sent = await fx.detail('acme', 'both');
    expect(sent.message.status).toBe('sent');
    expect(sent.message.attempts).toBe(1);
    expect(sent.why.waiting).toBe(false);
  });

  it('caps the sends in flight to a destination with max_connections, not the others', async () => {
    let arrived = 0;
    let most = 0;
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      account: {
        max_connections: 3,
        destination_limits: [{ domains: ['gmail.com'], max_connections: 1 }],
      },
      sink: {
        answerDelayMs: 150,
        onData: (_raw, envelope) => {
          if (envelope.rcptTo.some((address) => address.endsWith('@gmail.com'))) {
            arrived += 1;
            const answered = sink.messages.filter((received) => received.rcptTo[0]?.endsWith('@gmail.com')).length;
            most = Math.max(most, arrived - answered);
          }
          return null;
        },
      },
    });
    await fx.post(key, [
      ...['g1', 'g2', 'g3', 'g4'].map((id) => message(id, { to: `${id}@gmail.com` })),
      ...['n1', 'n2', 'n3'].map((id) => message(id, { to: `${id}@example.net` })),
    ]);
    await fx.settle();
    expect(sink.messages).toHaveLength(7);
    expect(arrived).toBe(4);
    expect(most).toBe(1);
    // The other domains were not held behind gmail's one connection: all three were in flight at once.
    expect(sink.maxConcurrentSeen).toBeGreaterThanOrEqual(2);
  });

  it('refuses destination rules that name one twice or set no limit', async () => {
    const { fx, sink } = await startSinkScenario(cleanups);
    const save = (destination_limits: unknown) =>
      fx.admin('POST', '/account', {
        id: 'main',
        tenant_id: 'acme',
        host: '127.0.0.1',
        port: sink.port,
        tls_mode: 'none',
        destination_limits,
      });
    const twice = await save([GMAIL, { name: 'gmail.com', domains: ['gmail.com'], limit_per_hour: 5 }]);
    expect(twice.status).toBe(400);
    expect(twice.body.error.details[0]).toMatchObject({ path: 'destination_limits' });
    const none = await save([{ domains: ['gmail.com'] }]);
    expect(none.status).toBe(400);
    expect(JSON.stringify(none.body)).toContain('sets no limit');
    const pattern = await save([{ domains: ['gmail com'], limit_per_minute: 1 }]);
    expect(pattern.status).toBe(400);
    expect((await save([])).status).toBe(200);
  });
});
