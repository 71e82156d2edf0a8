import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSinkOptions } from '../peers/smtp-sink.js';

describe('delivery outcomes', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const setup = (sink: SmtpSinkOptions = {}, account: Record<string, unknown> = {}) =>
    startSinkScenario(cleanups, { sink, account });
  const eventTypes = async (fx: QueueFixture, id: string): Promise<string[]> =>
    (await fx.detail('acme', id)).events.map((event) => event.event_type);

  it('defers on 451 with the schedule, then sends when the relay recovers', async () => {
    let refusals = 1;
    const { fx, sink, key } = await setup({
      onData: () => (refusals-- > 0 ? { code: 451, message: 'Greylisted, come back later' } : null),
    });
    await fx.post(key, [message('grey')]);
    await fx.settle();
    await fx.settle();
    const deferred = await fx.detail('acme', 'grey');
    expect(deferred.message).toMatchObject({
      status: 'deferred',
      attempts: 1,
      last_reply_code: 451,
      last_enhanced_status: expect.stringMatching(/^4\./),
    });
    expect(deferred.message.deferred_reason).toContain('Greylisted');
    // The first step of the schedule is 60 s (jitter 0 in this fixture).
    expect(deferred.message.next_attempt_ts * 1000 - fx.clock.now()).toBeGreaterThan(58_000);
    expect(deferred.events.at(-1)).toMatchObject({ event_type: 'deferred', reply_code: 451 });

    fx.clock.advance(30_000);
    await fx.settle();
    expect(sink.messages).toHaveLength(0);
    fx.clock.advance(30_000);
    await fx.settle();
    await sink.waitForMessages(1);
    await fx.settle();
    expect((await fx.detail('acme', 'grey')).message).toMatchObject({ status: 'sent', attempts: 2 });
    expect(await eventTypes(fx, 'grey')).toEqual(['queued', 'sending', 'deferred', 'sending', 'sent']);
  });

  it('gives up on a message still refused after dispatch.max_age_seconds: an `expired` event, state error', async () => {
    const { fx, key } = await setup({ onData: () => ({ code: 451, message: 'Greylisted, come back later' }) });
    await fx.post(key, [message('stale')]);
    await fx.settle();
    await fx.settle();
    expect((await fx.detail('acme', 'stale')).message.state).toBe('deferred');
    fx.clock.advance(5 * 24 * 3600 * 1000 + 1000); // past the default maximum age of five days
    await fx.settle();
    await fx.settle();
    const { message: stored, events } = await fx.detail('acme', 'stale');
    expect(stored).toMatchObject({ status: 'error', attempts: 2, last_reply_code: 451 });
    expect(stored.error).toMatch(/^expired: not delivered within 432000 s after 2 attempts; last: .*Greylisted/);
    expect(events.map((event: Record<string, unknown>) => event.event_type)).toEqual([
      'queued',
      'sending',
      'deferred',
      'sending',
      'expired',
    ]);
  });

  it("honours the relay's own retry hint", async () => {
    const { fx, key } = await setup({
      onRcpt: () => ({ code: 450, message: '4.2.0 Rate limited, try again in 7 seconds' }),
    });
    await fx.post(key, [message('hinted')]);
    await fx.settle();
    await fx.settle();
    const { message: stored } = await fx.detail('acme', 'hinted');
    expect(stored.state).toBe('deferred');
    expect(stored.next_attempt_ts * 1000 - fx.clock.now()).toBeLessThanOrEqual(7_000);
    expect(stored.next_attempt_ts * 1000 - fx.clock.now()).toBeGreaterThan(5_000);
  });

  it("ends in error on 550 with the relay's text", async () => {
    const { fx, key } = await setup({
      onRcpt: (address) =>
        address.startsWith('ghost')
          ? { code: 550, message: '5.1.1 <ghost@example.net>: Recipient address rejected: User unknown' }
          : null,
    });
    await fx.post(key, [message('bad', { to: 'ghost@example.net' })]);
    await fx.settle();
    await fx.settle();
    const { message: stored } = await fx.detail('acme', 'bad');
    expect(stored).toMatchObject({ status: 'error', last_reply_code: 550, last_enhanced_status: '5.1.1' });
    expect(stored.error).toContain('User unknown');
    expect(stored.error_ts).toEqual(expect.any(Number));
  });

  it('records a partial refusal per recipient and sends to the others', async () => {
    const { fx, sink, key } = await setup({
      onRcpt: (address) => (address.startsWith('ghost') ? { code: 550, message: '5.1.1 User unknown' } : null),
    });
    await fx.post(key, [message('partial', { to: ['ok@example.net', 'ghost@example.net'] })]);
    await sink.waitForMessages(1);
    await fx.settle();
    const { message: stored } = await fx.detail('acme', 'partial');
    expect(stored.status).toBe('sent');
    expect(stored.refused_recipients).toEqual([
      expect.objectContaining({ recipient: 'ghost@example.net', replyCode: 550, enhancedStatus: '5.1.1' }),
    ]);
    expect(sink.messages[0]?.rcptTo).toEqual(['ok@example.net']);
  });

  it('defers when the relay refuses the connection or never answers', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const hanging = await startSmtpSink({ hangAfterData: true });
    cleanups.push(async () => hanging.stop());
    const { fx, key } = await setup();
    await fx.createAccount('acme', 'down', { port });
    await fx.createAccount('acme', 'slow', hanging);
    await fx.post(key, [message('refused', { account_id: 'down' }), message('timeout', { account_id: 'slow' })]);
    await fx.settle();
    await fx.settle();
    const refused = (await fx.detail('acme', 'refused')).message;
    expect(refused).toMatchObject({ status: 'deferred', last_reply_code: null });
    expect(refused.deferred_reason).toMatch(/ECONNREFUSED/);
    const timedOut = (await fx.detail('acme', 'timeout')).message;
    expect(timedOut.status).toBe('deferred');
    expect(timedOut.deferred_reason).toMatch(/timeout/i);
  });

  it('pauses the account when the relay refuses our credentials, keeps its mail, and resumes when fixed', async () => {
    const { fx, sink, key } = await setup(
      { auth: { user: 'mailer', pass: 'right-password' } },
      { user: 'mailer', password: 'wrong-password' },
    );
    await fx.post(key, [message('held-1'), message('held-2')]);
    await fx.settle();
    await fx.settle();
    const accounts = await fx.admin('GET', '/accounts?tenant_id=acme');
    expect(accounts.body.accounts[0]).toMatchObject({ id: 'main', state: 'paused' });
    expect(accounts.body.accounts[0].paused_reason).toMatch(/535/);
    for (const id of ['held-1', 'held-2']) {
      const { message: stored } = await fx.detail('acme', id);
      expect(stored.state).toBe('queued');
      expect(stored.attempts).toBe(0);
    }
    expect(sink.messages).toHaveLength(0);

    // Saving the account is the fix: its mail goes at once, no run-now needed.
    await fx.createAccount('acme', 'main', sink, { user: 'mailer', password: 'right-password' });
    await sink.waitForMessages(2);
    await fx.settle();
    expect((await fx.admin('GET', '/accounts?tenant_id=acme')).body.accounts[0].state).toBe('active');
  });

  it('resends a sent message as a new attempt with the same id', async () => {
    const { fx, sink, key } = await setup();
    await fx.post(key, [message('again')]);
    await sink.waitForMessages(1);
    await fx.settle();
    const resent = await fx.admin('POST', '/commands/resend', { tenant_id: 'acme', ids: ['again', 'unknown'] });
    expect(resent.body).toMatchObject({ resent: ['again'], not_found: ['unknown'] });
    await sink.waitForMessages(2);
    await fx.settle();
    expect(sink.messages.map((received) => /^X-Genro-Mail-ID: (.+)\r$/m.exec(received.raw.toString())?.[1])).toEqual([
      'again',
      'again',
    ]);
    // The Message-ID is fixed at submission: every attempt carries the same one.
    const messageIds = sink.messages.map((received) => /^Message-ID: (.+)\r$/m.exec(received.raw.toString())?.[1]);
    expect(messageIds[0]).toMatch(/^<[^@]+@example\.com>$/);
    expect(messageIds[1]).toBe(messageIds[0]);
    expect((await fx.detail('acme', 'again')).message.message_id).toBe(messageIds[0]);
    expect((await fx.detail('acme', 'again')).message).toMatchObject({ status: 'sent', attempts: 2 });
    expect(await eventTypes(fx, 'again')).toEqual(['queued', 'sending', 'sent', 'resent', 'sending', 'sent']);
  });
});
