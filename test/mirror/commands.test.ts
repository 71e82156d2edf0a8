import Database from 'better-sqlite3';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { readStream, startNatsServer, type NatsPeer } from '../peers/nats-server.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const encoder = new TextEncoder();

describe('commands over JetStream', () => {
  let nats: NatsPeer;
  let sink: SmtpSink;
  let fx: QueueFixture;
  let nc: NatsConnection;
  let dataDir: string;

  afterAll(async () => {
    await nc?.close();
    await fx?.stop();
    fx?.t.cleanup();
    await sink?.stop();
    await nats?.destroy();
  });

  const publish = async (subject: string, body: unknown, msgId?: string): Promise<void> => {
    const h = headers();
    if (msgId !== undefined) h.set('Nats-Msg-Id', msgId);
    await jetstream(nc).publish(subject, encoder.encode(typeof body === 'string' ? body : JSON.stringify(body)), {
      headers: h,
    });
  };
  const count = (sql: string): number => {
    const db = new Database(join(dataDir, 'mailproxy.db'), { readonly: true });
    try {
      return db.prepare(sql).pluck().get() as number;
    } finally {
      db.close();
    }
  };
  const daemonEnv = (): Record<string, string> => ({ MAILPROXY_NATS_URL: nats.url });

  it('add-messages over JetStream queues and sends, once even when published twice', async () => {
    nats = await startNatsServer();
    sink = await startSmtpSink();
    fx = await startQueueFixture({ env: daemonEnv() });
    dataDir = fx.t.dataDir;
    await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    nc = await connect({ servers: nats.url });

    const body = { messages: [message('js-1'), message('js-2')] };
    await publish('mailproxy.commands.acme.add-messages', body, 'cmd-1');
    await publish('mailproxy.commands.acme.add-messages', body, 'cmd-1');
    await sink.waitForMessages(2);
    await expect.poll(() => count(`SELECT count(*) FROM inbox WHERE id = 'cmd-1'`)).toBe(1);
    expect(count(`SELECT count(*) FROM messages WHERE id IN ('js-1', 'js-2')`)).toBe(2);

    await publish('mailproxy.commands.acme.suspend', { batch_code: 'later' }, 'cmd-2');
    await expect
      .poll(() => count(`SELECT count(*) FROM suspensions WHERE tenant_id = 'acme' AND batch_code = 'later'`))
      .toBe(1);
    await expect.poll(async () => (await fx.admin('GET', '/mirror/status')).body.mirror.backlog).toBe(0);
    const processed = (await readStream(nats.url, 'MAILPROXY')).filter(
      (event) => event.subject === 'mailproxy.events.acme.command.processed',
    );
    expect(processed.map((event) => event.body.data.outcome)).toEqual([
      { queued: 2, rejected: [] },
      expect.objectContaining({ batch_code: 'later' }),
    ]);
  });

  it('a poison command lands on the DLQ subject with its reason, and is acknowledged', async () => {
    await publish('mailproxy.commands.acme.add-messages', '{"messages": [', 'bad-json');
    await publish('mailproxy.commands.acme.resend', { ids: 'not a list' }, 'bad-body');
    await publish('mailproxy.commands.ghost.add-messages', { messages: [message('x')] }, 'no-tenant');
    await publish('mailproxy.commands.acme.explode', {}, 'no-command');
    const dlq = async () =>
      (await readStream(nats.url, 'MAILPROXY')).filter((event) => event.subject.startsWith('mailproxy.dlq.'));
    await expect.poll(async () => (await dlq()).length, { timeout: 5000 }).toBe(4);
    const byId = new Map((await dlq()).map((event) => [event.body.nats_msg_id, event]));
    expect(byId.get('bad-json')).toMatchObject({
      subject: 'mailproxy.dlq.acme',
      body: { code: 'INVALID_COMMAND', subject: 'mailproxy.commands.acme.add-messages', body: '{"messages": [' },
    });
    expect(byId.get('bad-body')?.body.reason).toMatch(/"ids" must be a list/);
    expect(byId.get('no-tenant')).toMatchObject({ subject: 'mailproxy.dlq.ghost', body: { code: 'UNKNOWN_TENANT' } });
    expect(byId.get('no-command')?.body.code).toBe('UNKNOWN_COMMAND');
    // Acknowledged: nothing is waiting for redelivery.
    const jsm = await jetstreamManager(nc);
    await expect
      .poll(async () => (await jsm.consumers.info('MAILPROXY', 'mailproxy-commands')).num_ack_pending)
      .toBe(0);
    expect((await jsm.consumers.info('MAILPROXY', 'mailproxy-commands')).num_pending).toBe(0);
  });

  it('/mirror/status and /ready show the commands handled and dead-lettered', async () => {
    const status = (await fx.admin('GET', '/mirror/status')).body.mirror;
    expect(status).toMatchObject({
      enabled: true,
      state: 'connected',
      backlog: 0,
      commands: { handled: 5, dead_lettered: 4 },
    });
    const ready = await fetch(`${fx.t.url}/ready`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { details: { mirror: unknown } }).details.mirror).toMatchObject({
      state: 'connected',
      commands: { dead_lettered: 4 },
    });
    const metrics = await fx.admin('GET', '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    for (const line of [
      'mailproxy_mirror_connected 1',
      'mailproxy_outbox_backlog 0',
      'mailproxy_commands_handled_total 5',
      'mailproxy_commands_dead_lettered_total 4',
    ]) {
      expect(metrics.text.split('\n')).toContain(line);
    }
    expect(metrics.text).toMatch(/^mailproxy_mirror_published_total [1-9]\d*$/m);
    expect(metrics.text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('every command delivered again (the consumer recreated from the start) is recognised and applied once', async () => {
    const before = count(`SELECT count(*) FROM outbox WHERE event_type = 'command.processed'`);
    await fx.stop();
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.delete('MAILPROXY', 'mailproxy-commands');
    fx = await startQueueFixture({ env: daemonEnv(), dataDir });
    // The new consumer starts from the first command: all of them come again.
    await expect
      .poll(
        async () => {
          const info = await jsm.consumers.info('MAILPROXY', 'mailproxy-commands');
          return info.num_pending + info.num_ack_pending;
        },
        { timeout: 10_000 },
      )
      .toBe(0);
    expect(count(`SELECT count(*) FROM outbox WHERE event_type = 'command.processed'`)).toBe(before);
    expect(count(`SELECT count(*) FROM outbox WHERE event_type = 'message.queued'`)).toBe(2);
    expect(sink.messages).toHaveLength(2);
  });
});
