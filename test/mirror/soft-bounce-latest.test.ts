/**
 * A soft bounce in the latest-state KV: no verdict (the provider may still deliver), so it ranks
 * below a hard bounce or a delivery, as the message's provider_state column ranks it
 * (core/provider/events.ts). Before, the KV said `bounced` (rank 100) for it while the column said
 * `soft_bounced` (50).
 */
import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { afterAll, describe, expect, it } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { startNatsServer, type NatsPeer } from '../peers/nats-server.js';

describe('a soft bounce in the latest-state KV', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('is soft_bounced, rank 50, until a hard bounce outranks it', async () => {
    const nats: NatsPeer = await startNatsServer();
    cleanups.push(() => nats.destroy());
    const s: ReportScenario = await startReportScenario(cleanups, { env: { MAILPROXY_NATS_URL: nats.url } });
    const { key } = await s.addTenant('acme', '/acme');
    await s.fx.post(key, [message('soft-1')]);
    await expect.poll(async () => (await s.fx.detail('acme', 'soft-1')).message.state).toBe('sent');
    const bounce = (type: 'hard' | 'soft', code: string) =>
      s.fx.t.daemon.store.bounces.record({
        tenantId: 'acme',
        clientId: 'soft-1',
        type,
        code,
        reason: type === 'soft' ? 'mailbox full, will retry' : 'user unknown',
        recipient: 'rcpt@example.net',
        at: s.fx.clock.now(),
      });
    const nc = await connect({ servers: nats.url });
    cleanups.push(() => nc.close());
    const kv = await new Kvm(nc).create('mailproxy_latest');
    const pk = (await s.fx.detail('acme', 'soft-1')).message.pk as number;
    const latest = async () => {
      await expect.poll(async () => (await s.fx.admin('GET', '/mirror/status')).body.mirror.backlog).toBe(0);
      return (await kv.get(`acme.${pk}`))?.json<{ provider_state: string; provider_rank: number }>();
    };

    bounce('soft', '4.2.2');
    expect(await latest()).toMatchObject({ provider_state: 'soft_bounced', provider_rank: 50 });
    bounce('hard', '5.1.1');
    expect(await latest()).toMatchObject({ provider_state: 'bounced', provider_rank: 100 });
  }, 30_000);
});
