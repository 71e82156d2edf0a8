import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../helpers/test-daemon.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';

const TENANTS = Array.from({ length: 10 }, (_, index) => `t${index}`);
const HANGING = 't0';

describe('ten tenants, one endpoint hanging', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let s: ReportScenario;
  const keys = new Map<string, string>();

  beforeAll(async () => {
    // The hanging request is not given up on during the test: it holds its lane the whole time.
    s = await startReportScenario(cleanups, { reports: { request_timeout_seconds: '60' } });
    s.client.answer(() => 'hang', `/${HANGING}/`);
    for (const tenant of TENANTS) keys.set(tenant, (await s.addTenant(tenant, `/${tenant}`)).key);
  });
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  /** When the relay sink received the message whose subject names `id`. */
  const deliveredAt = (id: string): number => {
    const found = s.sink.messages.find((m) => m.raw.toString('utf8').includes(`subject ${id}\r\n`));
    if (found === undefined) throw new Error(`${id} never reached the sink`);
    return found.receivedAt;
  };
  const reportedAt = (tenant: string, id: string): number | undefined =>
    s.client.reports.find(
      (report) => report.path.startsWith(`/${tenant}/`) && report.items.some((item) => item.id === id),
    )?.receivedAt;

  for (const wave of [1, 2, 3]) {
    it(`wave ${wave}: the other nine receive each report within a second of the delivery`, async () => {
      const ids = TENANTS.map((tenant) => `${tenant}-w${wave}`);
      await Promise.all(
        TENANTS.map((tenant, index) => s.fx.post(keys.get(tenant) as string, [message(ids[index] as string)])),
      );
      const healthy = TENANTS.filter((tenant) => tenant !== HANGING);
      await s.client.waitFor(`wave ${wave} reported to nine tenants`, () =>
        healthy.every((tenant) => reportedAt(tenant, `${tenant}-w${wave}`) !== undefined),
      );
      for (const tenant of healthy) {
        const id = `${tenant}-w${wave}`;
        expect((reportedAt(tenant, id) as number) - deliveredAt(id), `${id}: delivered to reported`).toBeLessThan(1000);
      }
      expect(s.client.hanging()).toBe(1);
    });
  }

  it('sync-status shows the hanging tenant in flight with its backlog, the others caught up', async () => {
    const all = await s.fx.admin('GET', '/tenants/sync-status');
    expect(all.status).toBe(200);
    const byId = new Map<string, Record<string, any>>(
      all.body.tenants.map((status: Record<string, any>) => [status.tenant_id, status]),
    );
    expect([...byId.keys()].sort()).toEqual([...TENANTS].sort());
    const hanging = byId.get(HANGING);
    // The first round went out before the wave-1 delivery; everything since waits behind it.
    expect(hanging).toMatchObject({
      in_flight: true,
      client_sync_url: `${s.client.base}/${HANGING}/mail-proxy/sync`,
      last_success_ts: null,
    });
    expect(hanging?.backlog).toBeGreaterThanOrEqual(3);
    expect(hanging?.oldest_unreported_age_seconds).toBeGreaterThanOrEqual(0);
    expect(typeof hanging?.oldest_unreported_ts).toBe('number');
    for (const tenant of TENANTS.filter((id) => id !== HANGING)) {
      expect(byId.get(tenant)).toMatchObject({
        backlog: 0,
        oldest_unreported_ts: null,
        consecutive_failures: 0,
        last_error: null,
      });
      expect(typeof byId.get(tenant)?.last_success_ts).toBe('number');
      expect(byId.get(tenant)?.next_due_ts).toBeGreaterThan(Math.floor(Date.now() / 1000));
    }
  });

  it("/metrics shows each tenant's report backlog, for the admin token only", async () => {
    const metrics = await s.fx.admin('GET', '/metrics');
    const backlog = (tenant: string): number =>
      Number(
        new RegExp(`^mailproxy_report_backlog\\{tenant_id="${tenant}"\\} (\\d+)$`, 'm').exec(metrics.text)?.[1] ?? NaN,
      );
    expect(backlog(HANGING)).toBeGreaterThanOrEqual(3);
    expect(backlog('t1')).toBe(0);
    expect(metrics.text).toMatch(/^mailproxy_mirror_enabled 0$/m);
    expect((await api(s.fx.t.url, 'GET', '/metrics', { token: keys.get('t1') as string })).status).toBe(403);
  });

  it('a tenant key reads its own sync-status only', async () => {
    const key = keys.get('t3') as string;
    const own = await api(s.fx.t.url, 'GET', '/tenant/t3/sync-status', { token: key });
    expect(own.status).toBe(200);
    expect(own.body.sync_status.tenant_id).toBe('t3');
    expect((await api(s.fx.t.url, 'GET', '/tenant/t4/sync-status', { token: key })).status).toBe(404);
    expect((await api(s.fx.t.url, 'GET', '/tenants/sync-status', { token: key })).status).toBe(403);
    expect((await api(s.fx.t.url, 'GET', '/tenant/t3/sync-status')).status).toBe(401);
    expect((await s.fx.admin('GET', '/tenant/nobody/sync-status')).status).toBe(404);
  });
});
