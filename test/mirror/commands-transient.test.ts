import { connect } from '@nats-io/transport-node';
import { headers } from '@nats-io/nats-core';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, describe, expect, it } from 'vitest';
import { tearDownPeers } from '../helpers/peer-teardown.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { readStream, startNatsServer, type NatsPeer } from '../peers/nats-server.js';

describe('a command that fails for a transient reason', () => {
  let nats: NatsPeer;
  let fx: QueueFixture;
  afterAll(() => tearDownPeers({ fx, nats }));

  /** A daemon whose store is full (intake refused), with tenant `acme` held; answers the fillers' ids. */
  const fullStore = async (env: Record<string, string> = {}): Promise<string[]> => {
    // Bodies kept in the database (no body store), so that the fillers fill it.
    fx = await startQueueFixture({
      extraToml: 'max_database_mb = 3\n[storage]\nbackend = "database"\n',
      env: { MAILPROXY_NATS_URL: nats.url, ...env },
    });
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', { port: 9 }, { is_default: true });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    const fillers: string[] = [];
    for (let index = 0; index < 40; index += 1) {
      const id = `filler-${index}`;
      const response = await fx.post(key, [message(id, { body: 'x'.repeat(200_000) })]);
      if (response.status === 503) break;
      fillers.push(id);
    }
    expect((await fx.post(key, [message('refused', { body: 'x'.repeat(200_000) })])).status).toBe(503);
    return fillers;
  };

  it('is delivered again and then applied: the store full, then room made', async () => {
    nats = await startNatsServer();
    const fillers = await fullStore();

    const nc = await connect({ servers: nats.url });
    try {
      const h = headers();
      h.set('Nats-Msg-Id', 'cmd-full');
      await jetstream(nc).publish(
        'mailproxy.commands.acme.add-messages',
        new TextEncoder().encode(JSON.stringify({ messages: [message('late', { body: 'y'.repeat(200_000) })] })),
        { headers: h },
      );
      const jsm = await jetstreamManager(nc);
      // Refused for now: negatively acknowledged, waiting to come again.
      await expect
        .poll(async () => (await jsm.consumers.info('MAILPROXY', 'mailproxy-commands')).num_redelivered, {
          timeout: 10_000,
        })
        .toBeGreaterThanOrEqual(1);
      expect((await fx.admin('GET', '/messages/late?tenant_id=acme')).status).toBe(404);

      expect((await fx.admin('POST', '/commands/delete-messages', { tenant_id: 'acme', ids: fillers })).status).toBe(
        200,
      );
      await expect
        .poll(async () => (await fx.admin('GET', '/messages/late?tenant_id=acme')).status, { timeout: 15_000 })
        .toBe(200);
      await expect
        .poll(async () => (await jsm.consumers.info('MAILPROXY', 'mailproxy-commands')).num_ack_pending)
        .toBe(0);
      // Each deleted filler is a transition on the stream.
      await expect
        .poll(
          async () =>
            (await readStream(nats.url, 'MAILPROXY')).filter((event) => event.body.event_type === 'message.deleted')
              .length,
          { timeout: 10_000 },
        )
        .toBe(fillers.length);
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('goes to the DLQ after max_deliver deliveries that all failed', async () => {
    await fx.stop();
    fx.t.cleanup();
    await fullStore({ MAILPROXY_NATS_MAX_DELIVER: '2', MAILPROXY_NATS_CONSUMER: 'give-up' });
    const nc = await connect({ servers: nats.url });
    try {
      const h = headers();
      h.set('Nats-Msg-Id', 'cmd-never');
      await jetstream(nc).publish(
        'mailproxy.commands.acme.add-messages',
        new TextEncoder().encode(JSON.stringify({ messages: [message('never', { body: 'z'.repeat(200_000) })] })),
        { headers: h },
      );
      await expect
        .poll(
          async () =>
            (await readStream(nats.url, 'MAILPROXY')).find(
              (event) => event.subject === 'mailproxy.dlq.acme' && event.body.nats_msg_id === 'cmd-never',
            )?.body,
          { timeout: 15_000 },
        )
        .toMatchObject({ code: 'GAVE_UP', deliveries: 2 });
      expect((await fx.admin('GET', '/messages/never?tenant_id=acme')).status).toBe(404);
    } finally {
      await nc.close();
    }
  }, 60_000);
});
