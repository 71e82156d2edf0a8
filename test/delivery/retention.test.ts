import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OK } from '../peers/report-client.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';

describe('retention removes a message only after its outcome and its bounce were reported', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let s: ReportScenario;
  let key: string;
  const DAY_MS = 86_400_000;
  let answer: 'fail' | 'ok' = 'fail';

  beforeAll(async () => {
    s = await startReportScenario(cleanups);
    s.client.answer(() => (answer === 'ok' ? OK : { status: 500, body: { ok: false } }));
    ({ key } = await s.addTenant('acme', '/acme'));
    await s.fx.post(key, [message('plain'), message('bounced')]);
    await s.sink.waitForMessages(2);
    await s.client.waitFor(
      'a refused report of both outcomes',
      (client) => client.items().filter((item) => item.event === 'sent').length >= 2,
    );
  });
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  const exists = async (id: string): Promise<boolean> =>
    (await s.fx.admin('GET', `/messages/${id}?tenant_id=acme`)).status === 200;
  const reportedTs = async (id: string, field: 'reported_ts' | 'bounce_reported_ts'): Promise<unknown> =>
    (await s.fx.detail('acme', id)).message[field];

  it('an outcome the client has not acknowledged keeps its message, however old', async () => {
    s.fx.clock.advance(2 * DAY_MS);
    await s.fx.t.daemon.retention.tick();
    expect(await exists('plain')).toBe(true);
    const cleanup = await s.fx.admin('POST', '/commands/cleanup-messages?tenant_id=acme&older_than_seconds=0');
    expect(cleanup.body).toMatchObject({ ok: true, removed: 0 });
    expect(await reportedTs('plain', 'reported_ts')).toBeNull();
  });

  it('once acknowledged, the message is removed after report_retention_seconds, not before', async () => {
    answer = 'ok';
    await expect.poll(() => reportedTs('plain', 'reported_ts'), { timeout: 5000 }).not.toBeNull();
    await expect.poll(() => reportedTs('bounced', 'reported_ts'), { timeout: 5000 }).not.toBeNull();
    await s.fx.t.daemon.retention.tick();
    expect(await exists('plain')).toBe(true);

    // A bounce arrives for one of them, and its report is refused.
    answer = 'fail';
    s.fx.t.daemon.store.bounces.record({
      tenantId: 'acme',
      clientId: 'bounced',
      type: 'hard',
      code: '5.1.1',
      reason: 'user unknown',
      recipient: null,
      at: s.fx.clock.now(),
    });
    await s.client.waitFor('a refused bounce report', (client) =>
      client.items().some((item) => item.event === 'bounced'),
    );

    s.fx.clock.advance(8 * DAY_MS);
    await s.fx.t.daemon.retention.tick();
    expect(await exists('plain')).toBe(false);
    expect(await exists('bounced')).toBe(true);
  });

  it('a reported bounce lets its message go too', async () => {
    answer = 'ok';
    await expect.poll(() => reportedTs('bounced', 'bounce_reported_ts'), { timeout: 5000 }).not.toBeNull();
    s.fx.clock.advance(8 * DAY_MS);
    await s.fx.t.daemon.retention.tick();
    expect(await exists('bounced')).toBe(false);
  });
});
