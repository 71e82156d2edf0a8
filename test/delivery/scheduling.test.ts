import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const mailIds = (sink: SmtpSink): string[] =>
  sink.messages.map((received) => /^X-Genro-Mail-ID: (.+)\r$/m.exec(received.raw.toString())?.[1] ?? '?');

describe('scheduling: priority, order, deferral, fairness, suspension', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  // One connection, one message on the wire at a time: the order the relay sees is the dispatch order.
  const setup = () => startSinkScenario(cleanups, { account: { max_connections: 1 } });

  it('sends priority 0 before 1 before 2 before 3 through a relay that takes one at a time', async () => {
    const { fx, sink, key } = await setup();
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    const posted = await fx.post(key, [
      message('low', { priority: 'low' }),
      message('normal', { priority: 2 }),
      message('high', { priority: 'high' }),
      message('immediate', { priority: 0 }),
      message('normal-default'),
    ]);
    expect(posted.body.queued).toBe(5);
    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme' });
    await sink.waitForMessages(5);
    expect(mailIds(sink)).toEqual(['immediate', 'high', 'normal', 'normal-default', 'low']);
  });

  it('claims a priority 0 message at once even when the account lane is full', async () => {
    // The relay never answers: two sends sit on the wire and the lane fills with claimed normal mail.
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      sink: { hangAfterData: true },
      account: { max_connections: 1 },
    });
    await fx.post(
      key,
      Array.from({ length: 100 }, (_, index) => message(`bulk-${index}`)),
    );
    await sink.waitForUnanswered(1);
    await fx.t.daemon.dispatcher.tick(); // (settle would wait for sends that never end)
    const claimedBulk = fx.t.daemon.dispatcher.ready() + fx.t.daemon.dispatcher.inflight();
    expect(claimedBulk).toBe(20); // the lane's window for one connection
    expect((await fx.detail('acme', 'bulk-99')).message.state).toBe('queued');

    await fx.post(key, [message('urgent', { priority: 'immediate' })]);
    await fx.t.daemon.dispatcher.tick();
    expect((await fx.detail('acme', 'urgent')).message.state).toBe('sending');
    expect(fx.t.daemon.dispatcher.ready() + fx.t.daemon.dispatcher.inflight()).toBe(21);
  });

  it('never hands out again a message whose send is still in progress, however far the clock moves', async () => {
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      sink: { hangAfterData: true },
      account: { max_connections: 1 },
    });
    await fx.post(key, [message('slow-1')]);
    await sink.waitForUnanswered(1);
    // Far past any lease: only a crashed owner's leases expire, not the sends this process still has in hand.
    fx.clock.advance(24 * 3600 * 1000);
    await fx.t.daemon.dispatcher.tick();
    const { message: stored, events } = await fx.detail('acme', 'slow-1');
    expect(stored.state).toBe('sending');
    expect(events.map((event) => event.event_type)).not.toContain('lease_expired');
    expect(fx.t.daemon.dispatcher.inflight()).toBe(1);
    expect(sink.unanswered).toHaveLength(1);
  });

  it('keeps FIFO within a level for 1000 messages posted in the same second', async () => {
    const { fx, sink, key } = await setup();
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    const ids = Array.from({ length: 1000 }, (_, index) => `fifo-${String(index).padStart(4, '0')}`);
    // Shuffled ids, posted in one request: the order is the order of submission, not of the ids.
    const submitted = [...ids].sort(() => 0.5 - Math.random());
    expect(
      (
        await fx.post(
          key,
          submitted.map((id) => message(id)),
        )
      ).body.queued,
    ).toBe(1000);
    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme' });
    await sink.waitForMessages(1000, 60_000);
    expect(mailIds(sink)).toEqual(submitted);
  });

  it('holds a deferred message until its time, then sends it at once', async () => {
    const { fx, sink, key } = await setup();
    const deferredTs = Math.floor(fx.clock.now() / 1000) + 3600;
    await fx.post(key, [message('later', { deferred_ts: deferredTs }), message('now')]);
    await sink.waitForMessages(1);
    const report = await fx.t.daemon.dispatcher.tick();
    // The dispatcher sleeps on a timer set to the message's due instant, not on a poll.
    expect(report.nextWakeAt).toBe(deferredTs * 1000);
    expect((await fx.detail('acme', 'later')).message).toMatchObject({ status: 'deferred', deferred_ts: deferredTs });

    fx.clock.advance(deferredTs * 1000 - fx.clock.now() - 1000);
    await fx.settle();
    expect(mailIds(sink)).toEqual(['now']);

    fx.clock.advance(1000);
    await fx.settle();
    await sink.waitForMessages(2);
    expect(mailIds(sink)).toEqual(['now', 'later']);
  });

  it('does not let a 100,000-message backlog on one account delay another account', async () => {
    const stuck = await startSmtpSink({ hangAfterData: true });
    const { fx, sink: sameTenantSink } = await setup();
    cleanups.push(async () => stuck.stop());
    const otherSink = await startSmtpSink();
    cleanups.push(async () => otherSink.stop());
    await fx.createAccount('acme', 'bulk', stuck, { max_connections: 2 });
    const otherKey = await fx.createTenant('globex');
    await fx.createAccount('globex', 'gx', otherSink, { is_default: true });

    // The backlog goes in through the store in large transactions (the HTTP path is exercised elsewhere).
    const now = fx.clock.now();
    const payload = {
      from: 'bulk@acme.example',
      to: ['x@example.net'],
      cc: [],
      bcc: [],
      replyTo: null,
      returnPath: null,
      subject: 's',
      body: 'b',
      html: null,
      contentType: 'plain' as const,
      headers: {},
      attachments: [],
      messageId: null,
    };
    for (let chunk = 0; chunk < 10; chunk += 1) {
      fx.t.daemon.store.queue.enqueue(
        Array.from({ length: 10_000 }, (_, index) => ({
          tenantId: 'acme',
          id: `bulk-${chunk}-${index}`,
          accountId: 'bulk',
          priority: 2 as const,
          batchCode: null,
          deferredUntil: null,
          content: { kind: 'payload', json: JSON.stringify(payload) },
          subject: payload.subject,
          messageId: null,
          mailFrom: 'bulk@acme.example',
          rcptTo: ['x@example.net'],
          sizeBytes: 1,
          suspended: false,
        })),
        now,
        null,
      );
    }
    await fx.t.daemon.dispatcher.tick();
    await stuck.waitForUnanswered(2);

    await fx.post(await fx.admin('POST', '/tenant/acme/api-key').then((response) => response.body.api_key as string), [
      message('same-tenant', { account_id: 'main' }),
    ]);
    await fx.post(otherKey, [message('other-tenant')]);
    await sameTenantSink.waitForMessages(1, 5000);
    await otherSink.waitForMessages(1, 5000);
    expect(mailIds(sameTenantSink)).toEqual(['same-tenant']);
    expect(mailIds(otherSink)).toEqual(['other-tenant']);
  });

  it('suspends one batch while others flow, and sends it on activation', async () => {
    const { fx, sink, key } = await setup();
    const suspended = await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'B' });
    expect(suspended.body).toMatchObject({ ok: true, batch_code: 'B', suspensions: ['B'] });
    await fx.post(key, [message('b-1', { batch_code: 'B' }), message('a-1', { batch_code: 'A' }), message('none-1')]);
    await sink.waitForMessages(2);
    await fx.settle();
    expect(mailIds(sink).sort()).toEqual(['a-1', 'none-1']);
    expect((await fx.detail('acme', 'b-1')).message).toMatchObject({
      status: 'suspended',
      state: 'queued',
      suspended: true,
    });

    const activated = await fx.admin('POST', '/commands/activate?tenant_id=acme&batch_code=B');
    expect(activated.body).toMatchObject({ ok: true, activated_messages: 1, suspensions: [] });
    await sink.waitForMessages(3);
    expect(mailIds(sink)[2]).toBe('b-1');
  });

  it('moves nothing of a tenant suspended as a whole, nor of an inactive tenant', async () => {
    const { fx, sink, key } = await setup();
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: '*' });
    await fx.post(key, [message('x-1', { batch_code: 'X' }), message('x-2')]);
    await fx.settle();
    expect(sink.messages).toHaveLength(0);
    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme' });
    await sink.waitForMessages(2);

    await fx.admin('PUT', '/tenant/acme', { active: false });
    await fx.post(key, [message('held-1')]);
    await fx.settle();
    expect(sink.messages).toHaveLength(2);
    expect((await fx.detail('acme', 'held-1')).message.status).toBe('suspended');
    await fx.admin('PUT', '/tenant/acme', { active: true });
    await fx.admin('POST', '/commands/run-now', { tenant_id: 'acme' });
    await sink.waitForMessages(3);
  });

  it('audits every command', async () => {
    const { fx } = await setup();
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'Z' });
    await fx.admin('POST', '/commands/activate', { tenant_id: 'acme', batch_code: 'Z' });
    await fx.admin('POST', '/commands/delete-messages', { tenant_id: 'acme', ids: ['nope'] });
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    const commands = db
      .prepare(`SELECT actor, command FROM command_log WHERE command LIKE 'messages.%' ORDER BY seq`)
      .all();
    db.close();
    expect(commands).toEqual([
      { actor: 'admin', command: 'messages.suspend' },
      { actor: 'admin', command: 'messages.activate' },
      { actor: 'admin', command: 'messages.delete' },
    ]);
  });
});
