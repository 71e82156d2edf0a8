/**
 * GET /status on the real daemon: waiting messages by status, priority,
 * tenant and account, the message overdue longest, the loops' health for the
 * admin, and a tenant key that sees its own queue only.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { message, startOverMinuteLimit, startSinkScenario } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('GET /status', () => {
  it('counts what waits and names the message overdue longest; the admin also sees every loop', async () => {
    const { fx, key } = await startSinkScenario(cleanups);
    const globex = await fx.createTenant('globex');
    // Suspended below: its account is never used.
    await fx.admin('POST', '/account', {
      id: 'main',
      tenant_id: 'globex',
      host: '127.0.0.1',
      port: 9,
      tls_mode: 'none',
      is_default: true,
    });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'held' });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'globex' });
    const later = Math.floor(fx.clock.now() / 1000) + 3600;
    await fx.post(key, [
      message('sent-1'),
      message('held-1', { batch_code: 'held', priority: 'low' }),
      message('held-2', { batch_code: 'held', priority: 'low' }),
      message('later-1', { deferred_ts: later, priority: 'high' }),
    ]);
    await fx.post(globex, [message('g-1'), message('g-2')]);
    await fx.settle();

    const status = await fx.admin('GET', '/status');
    expect(status.status).toBe(200);
    expect(status.body.queue).toMatchObject({
      waiting: 5,
      // A message the client deferred waits as `deferred`.
      by_status: { queued: 0, deferred: 1, sending: 0, suspended: 4 },
      by_priority: { 0: 0, 1: 1, 2: 2, 3: 2 },
      by_tenant: [
        { tenant_id: 'acme', waiting: 3 },
        { tenant_id: 'globex', waiting: 2 },
      ],
    });
    expect(status.body.queue.by_account).toContainEqual({
      tenant_id: 'acme',
      account_id: 'main',
      waiting: 3,
      by_status: { deferred: 1, suspended: 2 },
    });
    // Suspended messages are not due; the one scheduled for later is not due yet: nothing is overdue.
    expect(status.body.queue.oldest_due).toBeNull();
    expect(status.body).toMatchObject({
      dispatcher: { running: true },
      reports: { tenants: 2 },
      mirror: { enabled: false },
      bounce: [],
    });
    // acme's account has sent: its relay pool is there, nothing on the wire now; globex's never opened one.
    const relays = status.body.relays as {
      open: number;
      in_use: number;
      accounts: Array<{ tenant_id: string; account_id: string; open: number; in_use: number }>;
    };
    expect(relays.accounts.map((pool) => [pool.tenant_id, pool.account_id, pool.in_use])).toEqual([
      ['acme', 'main', 0],
    ]);
    expect(relays.open).toBe(relays.accounts[0]?.open);
    expect(relays.in_use).toBe(0);

    // The same, as genro-mail-proxy dashboards read it.
    const metrics = (await fx.admin('GET', '/metrics')).text;
    expect(metrics).toContain('gmp_sent_total{tenant_id="acme",account_id="main"} 1');
    expect(metrics).toContain('gmp_pending_messages{tenant_id="acme",account_id="main"} 3');
    expect(metrics).toContain('gmp_pending_messages{tenant_id="globex",account_id="main"} 2');
    expect(metrics).not.toContain('gmp_errors_total{');

    const asTenant = await api(fx.t.url, 'GET', '/status', { token: key });
    expect(asTenant.body).toEqual({
      queue: expect.objectContaining({ waiting: 3, by_tenant: [{ tenant_id: 'acme', waiting: 3 }] }),
    });
    expect((await api(fx.t.url, 'GET', '/status?tenant_id=globex', { token: key })).status).toBe(404);
  });

  it('names the message overdue longest while its account cannot take it', async () => {
    const { fx, key } = await startOverMinuteLimit(cleanups);
    const oldest = (await fx.admin('GET', '/status')).body.queue.oldest_due;
    expect(oldest).toMatchObject({ tenant_id: 'acme', account_id: 'main' });
    expect(['first', 'second']).toContain(oldest.id);
    expect(oldest.overdue_seconds).toBeGreaterThanOrEqual(0);

    // The account tells the same: its minute is used up, one message waits for it.
    const account = (await fx.admin('GET', '/account/main?tenant_id=acme')).body.account;
    const minuteEnds = Math.floor(fx.clock.now() / 60_000) * 60 + 60;
    expect(account).toMatchObject({
      state: 'active',
      waiting: 1,
      usage: { minute: { used: 1, limit: 1, resets_ts: minuteEnds }, hour: { used: 1, limit: null } },
    });
    expect((await api(fx.t.url, 'GET', '/accounts', { token: key })).body.accounts).toMatchObject([
      { id: 'main', waiting: 1 },
    ]);
  });

  it('counts messages refused by an account limit that rejects, and deferrals', async () => {
    let refusals = 1;
    const { fx } = await startOverMinuteLimit(cleanups, {
      account: { limit_behavior: 'reject' },
      sink: { onData: () => (refusals-- > 0 ? { code: 451, message: '4.7.1 try later' } : null) },
    });
    const metrics = (await fx.admin('GET', '/metrics')).text;
    expect(metrics).toContain('gmp_deferred_total{tenant_id="acme",account_id="main"} 1');
    expect(metrics).toContain('gmp_rate_limited_total{tenant_id="acme",account_id="main"} 1');
    expect(metrics).toContain('gmp_errors_total{tenant_id="acme",account_id="main"} 1');
  });
});
