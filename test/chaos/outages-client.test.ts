/**
 * The client's report endpoint away (nothing listening), then back on the same
 * port. test/reports/report-retries.test.ts proves one refused report is
 * retried with backoff; here a whole outage: intake and delivery go on, the
 * daemon says which tenant fails, and once the endpoint is back every item of
 * the outage arrives (at least once, each event id) with no operator command.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectEachOnce, expectServing, outageMessageCount } from '../helpers/outage-checks.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { startReportClient, type ReportClient } from '../peers/report-client.js';

const COUNT = outageMessageCount(30);
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('client report endpoint outage', () => {
  it('nothing listening, then back on the same port: every sent item of the outage is received, and the backlog drains by itself', async () => {
    const s = await startReportScenario(cleanups, {
      reports: { retry_initial_seconds: '0.2', retry_max_seconds: '0.5' },
    });
    const { key } = await s.addTenant('acme', '/acme');
    await s.client.waitFor('the first heartbeat', (client) => client.reports.length >= 1);
    const port = Number(new URL(s.client.base).port);
    await s.client.stop();

    const ids = Array.from({ length: COUNT }, (_, index) => `r-${index}`);
    expect(
      (
        await s.fx.post(
          key,
          ids.map((id) => message(id)),
        )
      ).body,
    ).toMatchObject({ ok: true, queued: COUNT });
    // Delivery does not wait for the client.
    await s.sink.waitForMessages(COUNT, 20_000);
    expectEachOnce(s.sink.messages, ids);
    const syncStatus = async () => (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status;
    await expect.poll(async () => (await syncStatus()).backlog, { timeout: 10_000 }).toBe(COUNT);
    await expect
      .poll(async () => (await syncStatus()).consecutive_failures, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(2);
    expect((await syncStatus()).last_error).toMatch(/^connection/);
    const { status } = await expectServing(s.fx.t.url, s.fx.t.adminToken);
    expect(status.reports).toMatchObject({ failing: ['acme'], backlog: COUNT });

    const back: ReportClient = await startReportClient({ port });
    cleanups.push(async () => back.stop());
    const sentIds = () =>
      new Set(
        back
          .items('/acme')
          .filter((item) => item.event === 'sent')
          .map((item) => item.id),
      );
    await back.waitFor('every sent item', () => sentIds().size === COUNT, 15_000);
    expect([...sentIds()].sort()).toEqual([...ids].sort());
    // At least once: a repeat carries an event id already seen, never a second event of the same message.
    const sentEvents = new Map<unknown, unknown>();
    for (const item of back.items('/acme').filter((entry) => entry.event === 'sent')) {
      expect(sentEvents.get(item.id) ?? item.event_id).toBe(item.event_id);
      sentEvents.set(item.id, item.event_id);
    }
    await expect.poll(async () => (await syncStatus()).backlog, { timeout: 10_000 }).toBe(0);
    expect(await syncStatus()).toMatchObject({ consecutive_failures: 0 });
    for (const id of ids.slice(0, 3)) expect((await s.fx.detail('acme', id)).message.reported_ts).not.toBeNull();
  }, 60_000);
});
