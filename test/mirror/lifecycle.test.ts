import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { afterAll, describe, expect, it } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { OK } from '../peers/report-client.js';
import { readStream, startNatsServer, type NatsPeer, type StoredEvent } from '../peers/nats-server.js';

describe("one message's whole life on the stream", () => {
  const cleanups: Array<() => Promise<void>> = [];
  let nats: NatsPeer;
  let s: ReportScenario;
  let events: StoredEvent[];

  it('lives: deferred once, sent, bounced, reported', async () => {
    nats = await startNatsServer();
    cleanups.push(() => nats.destroy());
    let refused = false;
    let reportsAccepted = false;
    s = await startReportScenario(cleanups, {
      env: { MAILPROXY_NATS_URL: nats.url },
      sink: {
        onRcpt: () => {
          if (refused) return null;
          refused = true;
          return { code: 451, message: '4.3.0 try again later' };
        },
      },
    });
    // Reports are refused until the bounce is in: then one report tells all, and one `reported` event ends the life.
    s.client.answer(() => (reportsAccepted ? OK : { status: 503 }));
    const { key } = await s.addTenant('acme', '/acme');
    await s.fx.post(key, [message('life-1')]);
    await expect.poll(async () => (await s.fx.detail('acme', 'life-1')).message.state).toBe('deferred');
    s.fx.clock.advance(61_000);
    await s.fx.settle();
    await expect.poll(async () => (await s.fx.detail('acme', 'life-1')).message.state).toBe('sent');
    // A round refused meanwhile ends first: one whose answer came after the flip below reported the
    // sent outcome alone, and the bounce in a second report (a loaded CI run saw two `reported`).
    await s.fx.t.daemon.reports.lanes().get('acme')?.round;
    s.fx.t.daemon.store.bounces.record({
      tenantId: 'acme',
      clientId: 'life-1',
      type: 'hard',
      code: '5.1.1',
      reason: 'user unknown',
      recipient: 'rcpt@example.net',
      at: s.fx.clock.now(),
    });
    reportsAccepted = true;
    await s.fx.t.daemon.reports.lanes().get('acme')?.round;
    await s.fx.admin('POST', '/tenant/acme/sync-now');
    await expect
      .poll(async () => (await s.fx.detail('acme', 'life-1')).message.bounce_reported_ts, { timeout: 5000 })
      .not.toBeNull();
    await expect.poll(async () => (await s.fx.admin('GET', '/mirror/status')).body.mirror.backlog).toBe(0);
    events = (await readStream(nats.url, 'MAILPROXY')).filter((event) => event.body.message_id === 'life-1');
    expect(events.length).toBeGreaterThan(0);
  }, 30_000);
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('every transition appears once, in order, on its subject', () => {
    expect(events.map((event) => event.body.event_type)).toEqual([
      'message.queued',
      'message.sending',
      'message.deferred',
      'message.sending',
      'message.sent',
      'message.bounced',
      'message.reported',
    ]);
    for (const event of events) expect(event.subject).toBe(`mailproxy.events.acme.${event.body.event_type}`);
    expect(new Set(events.map((event) => event.body.event_id)).size).toBe(events.length);
  });

  it('each carries its event id as Nats-Msg-Id and the contract body', async () => {
    const { events: timeline } = await s.fx.detail('acme', 'life-1');
    expect(timeline.map((event) => event.event_type)).toEqual(
      events.map((event) => event.body.event_type.replace('message.', '')),
    );
    for (const event of events) {
      expect(event.msgId).toBe(event.body.event_id);
      expect(Object.keys(event.body).sort()).toEqual([
        'account_id',
        'attempt',
        'batch_code',
        'correlation_id',
        'data',
        'event_id',
        'event_type',
        'event_version',
        'message_id',
        'message_pk',
        'occurred_at',
        'tenant_id',
      ]);
      expect(event.body).toMatchObject({
        tenant_id: 'acme',
        message_id: 'life-1',
        account_id: 'main',
        event_version: 2,
      });
      expect(new Date(event.body.occurred_at).toISOString()).toBe(event.body.occurred_at);
    }
    const [, , deferred, , sent, bounced, reported] = events.map((event) => event.body);
    expect(deferred).toMatchObject({ attempt: 1, data: { reply_code: 451, next_attempt_ts: expect.any(Number) } });
    expect(sent).toMatchObject({ attempt: 2, data: { reply_code: 250 } });
    expect(bounced?.data).toMatchObject({ bounce_type: 'hard', bounce_code: '5.1.1' });
    // The stream carries ids, states and codes: no address, no relay's or bounce's words (issue 45).
    for (const event of events) expect(event.body.data).not.toHaveProperty('text');
    expect(bounced?.data).not.toHaveProperty('bounce_reason');
    expect(bounced?.data).not.toHaveProperty('recipient');
    expect(reported?.data).toMatchObject({ events: ['deferred', 'sent', 'bounced'] });
  });

  it('the latest-state KV holds where the message ended, at the version of its last event', async () => {
    const nc = await connect({ servers: nats.url });
    try {
      const kv = await new Kvm(nc).create('mailproxy_latest');
      const pk = events[0]?.body.message_pk as number;
      const entry = await kv.get(`acme.${pk}`);
      expect(entry?.json()).toMatchObject({
        tenant_id: 'acme',
        message_id: 'life-1',
        message_pk: pk,
        handoff_state: 'sent',
        rank: 100,
        provider_state: 'bounced',
        provider_rank: 100,
        reported_at: expect.any(String),
        at: events[events.length - 1]?.body.occurred_at,
      });
    } finally {
      await nc.close();
    }
  });

  it('suspending and activating a batch is a transition of each waiting message in it', async () => {
    const { key } = { key: (await s.fx.admin('POST', '/tenant/acme/api-key')).body.api_key as string };
    const later = Math.floor(Date.now() / 1000) + 3600;
    await s.fx.post(key, [
      message('held-1', { batch_code: 'b3', deferred_ts: later }),
      message('held-2', { batch_code: 'b3', deferred_ts: later }),
    ]);
    expect((await s.fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'b3' })).body).toMatchObject(
      { suspended_messages: 2 },
    );
    expect(
      (await s.fx.admin('POST', '/commands/activate', { tenant_id: 'acme', batch_code: 'b3' })).body,
    ).toMatchObject({ activated_messages: 2 });
    await expect.poll(async () => (await s.fx.admin('GET', '/mirror/status')).body.mirror.backlog).toBe(0);
    const stored = (await readStream(nats.url, 'MAILPROXY')).filter((event) => event.body.message_id === 'held-1');
    expect(stored.map((event) => event.body.event_type)).toEqual([
      'message.queued',
      'message.suspended',
      'message.activated',
    ]);
    expect(stored[1]?.body.batch_code).toBe('b3');
  });

  it('admin changes are mirrored too', async () => {
    const all = await readStream(nats.url, 'MAILPROXY');
    expect(all.filter((event) => event.body.event_type === 'tenant.created').map((event) => event.subject)).toEqual([
      'mailproxy.events.acme.tenant.created',
    ]);
    expect(all.some((event) => event.body.event_type.startsWith('account.'))).toBe(true);
  });
});
