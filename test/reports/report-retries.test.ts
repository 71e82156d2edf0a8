import { afterEach, describe, expect, it } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { OK, type ReceivedReport } from '../peers/report-client.js';

const eventIds = (report: ReceivedReport | undefined): unknown[] => (report?.items ?? []).map((item) => item.event_id);

describe('reports that are not acknowledged are sent again', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('500, then 200: the same items arrive again and are then marked reported', async () => {
    const s = await startReportScenario(cleanups);
    let refused = 0;
    s.client.answer((report) => (report.items.length > 0 && refused++ === 0 ? { status: 500, body: 'oops' } : OK));
    const { key } = await s.addTenant('acme', '/acme');
    await s.fx.post(key, [message('m-1'), message('m-2')]);
    await s.client.waitFor(
      'the report, twice',
      (client) => client.reports.filter((r) => r.items.length > 0).length >= 2,
    );
    const [first, second] = s.client.reports.filter((r) => r.items.length > 0);
    // The refused items come again, first and in their order; m-2's event may join them if it
    // was committed after the refused report was built (the lane sends what is pending, by seq).
    expect(eventIds(second).slice(0, eventIds(first).length)).toEqual(eventIds(first));
    await expect.poll(async () => (await s.fx.detail('acme', 'm-2')).message.reported_ts).not.toBeNull();
    const status = await s.fx.admin('GET', '/tenant/acme/sync-status');
    expect(status.body.sync_status).toMatchObject({
      backlog: 0,
      consecutive_failures: 0,
      last_error: expect.stringMatching(/^http_status/),
    });
  });

  it('a 2xx without "ok": true is not an acknowledgement', async () => {
    const s = await startReportScenario(cleanups);
    let answered = 0;
    s.client.answer((report) =>
      report.items.length > 0 && answered++ === 0 ? { status: 200, body: { ok: false } } : OK,
    );
    const { key } = await s.addTenant('acme', '/acme');
    await s.fx.post(key, [message('m-1')]);
    await s.client.waitFor(
      'the report, twice',
      (client) => client.reports.filter((r) => r.items.length > 0).length >= 2,
    );
    await expect.poll(async () => (await s.fx.detail('acme', 'm-1')).message.reported_ts).not.toBeNull();
    const [first, second] = s.client.reports.filter((r) => r.items.length > 0);
    expect(eventIds(second)).toEqual(eventIds(first));
  });

  it('a hanging endpoint: the request times out, the connection is dropped, and the items are sent again', async () => {
    const s = await startReportScenario(cleanups, { reports: { request_timeout_seconds: '0.5' } });
    let calls = 0;
    s.client.answer((report) => (report.items.length > 0 && calls++ === 0 ? 'hang' : OK));
    const { key } = await s.addTenant('acme', '/acme');
    await s.fx.post(key, [message('m-1')]);
    await s.client.waitFor('a hanging report', (client) => client.hanging() === 1);
    const hungAt = Date.now();
    await s.client.waitFor('the retry', (client) => client.reports.filter((r) => r.items.length > 0).length >= 2);
    expect(Date.now() - hungAt).toBeGreaterThanOrEqual(400);
    expect(s.client.hanging()).toBe(0);
    const [first, second] = s.client.reports.filter((r) => r.items.length > 0);
    expect(eventIds(second)).toEqual(eventIds(first));
    await expect.poll(async () => (await s.fx.detail('acme', 'm-1')).message.reported_ts).not.toBeNull();
    const status = await s.fx.admin('GET', '/tenant/acme/sync-status');
    expect(status.body.sync_status.last_error).toMatch(/^timeout/);
  });

  it('a refused connection is retried with a growing backoff', async () => {
    const s = await startReportScenario(cleanups, {
      reports: { retry_initial_seconds: '0.1', retry_max_seconds: '0.8' },
    });
    // A port nothing listens on: the peer is stopped before the tenant points at it.
    const closed = `http://127.0.0.1:${new URL(s.client.base).port}`;
    await s.client.stop();
    const created = await s.fx.admin('POST', '/tenant', { id: 'acme', client_base_url: closed });
    await s.fx.createAccount('acme', 'main', s.sink, { is_default: true });
    await s.fx.post(created.body.api_key, [message('m-1')]);
    await s.sink.waitForMessages(1);
    const failuresBefore = (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status
      .consecutive_failures as number;
    await expect
      .poll(async () => (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status.consecutive_failures, {
        timeout: 5000,
      })
      .toBeGreaterThanOrEqual(Math.max(3, failuresBefore + 2));
    const status = (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status;
    expect(status.last_error).toMatch(/^connection/);
    expect(status.backlog).toBe(1);
    const lane = s.fx.t.daemon.reports.lanes().get('acme');
    // 0.1 s doubled per failure, up to 0.8 s: the wait after the third is at least 0.4 s.
    expect((lane?.state.retryAt ?? 0) - (lane?.record.lastAttemptAt ?? 0)).toBe(
      Math.min(800, 100 * 2 ** ((lane?.state.failures ?? 1) - 1)),
    );
  });
});

describe('an operator need not wait out a backoff', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  const LONG_BACKOFF = { retry_initial_seconds: '600', retry_max_seconds: '600' };

  it('sync-now (with the tenant key) sends the backlog at once', async () => {
    const s = await startReportScenario(cleanups, { reports: LONG_BACKOFF });
    let healthy = false;
    s.client.answer(() => (healthy ? OK : { status: 503 }));
    const { key } = await s.addTenant('acme', '/acme');
    await s.client.waitFor('the refused first contact', (client) => client.reports.length >= 1);
    await s.fx.post(key, [message('m-1')]);
    await s.sink.waitForMessages(1);
    await expect
      .poll(async () => (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status.backlog)
      .toBe(1);
    // Ten minutes of backoff ahead.
    expect((await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status.next_due_ts).toBeGreaterThan(
      Math.floor(Date.now() / 1000) + 500,
    );

    healthy = true;
    const kicked = await api(s.fx.t.url, 'POST', '/tenant/acme/sync-now', { token: key });
    expect(kicked.status).toBe(202);
    await s.client.waitFor('the backlog', (client) => client.items().some((item) => item.id === 'm-1'));
    await expect.poll(async () => (await s.fx.detail('acme', 'm-1')).message.reported_ts).not.toBeNull();
    expect((await api(s.fx.t.url, 'POST', '/tenant/other/sync-now', { token: key })).status).toBe(404);
  });

  it('pointing the tenant at a working endpoint sends the backlog at once', async () => {
    const s = await startReportScenario(cleanups, { reports: LONG_BACKOFF });
    const created = await s.fx.admin('POST', '/tenant', { id: 'acme', client_base_url: 'http://127.0.0.1:9/nowhere' });
    await s.fx.createAccount('acme', 'main', s.sink, { is_default: true });
    await expect
      .poll(async () => (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status.consecutive_failures)
      .toBe(1);
    await s.fx.post(created.body.api_key, [message('m-1')]);
    await s.sink.waitForMessages(1);
    await expect
      .poll(async () => (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status.backlog)
      .toBe(1);

    expect((await s.fx.admin('PUT', '/tenant/acme', { client_base_url: `${s.client.base}/acme` })).status).toBe(200);
    await s.client.waitFor('the backlog', (client) => client.items().some((item) => item.id === 'm-1'));
  });
});

describe('the client steers the rounds', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('queued > 0 starts the next round at once, at most max_followup_rounds times in a row', async () => {
    const s = await startReportScenario(cleanups, { reports: { max_followup_rounds: '3' } });
    s.client.answer(() => ({ status: 200, body: { ok: true, queued: 7 } }));
    await s.addTenant('acme', '/acme');
    // The first contact is a heartbeat; each answer asks for more; three follow-ups are granted, then the normal interval.
    await s.client.waitFor('four rounds', (client) => client.reports.length >= 4);
    await expect
      .poll(() => {
        const lane = s.fx.t.daemon.reports.lanes().get('acme');
        return lane !== undefined && lane.round === null && lane.dueAt > s.fx.clock.now() + 200_000;
      })
      .toBe(true);
    expect(s.client.reports.length).toBe(4);
    expect(s.client.reports.every((report) => report.items.length === 0)).toBe(true);
  });

  it('next_sync_after holds heartbeats back, but not real reports beyond max_hold_seconds', async () => {
    const s = await startReportScenario(cleanups, { reports: { sync_interval_seconds: '1', max_hold_seconds: '1' } });
    const quietUntil = Math.floor(Date.now() / 1000) + 3600;
    s.client.answer(() => ({ status: 200, body: { ok: true, next_sync_after: quietUntil } }));
    const { key } = await s.addTenant('acme', '/acme');
    await s.client.waitFor('the first heartbeat', (client) => client.reports.length >= 1);
    await expect
      .poll(async () => (await s.fx.admin('GET', '/tenant/acme/sync-status')).body.sync_status.do_not_disturb_until_ts)
      .toBe(quietUntil);

    await s.fx.post(key, [message('m-1')]);
    await s.sink.waitForMessages(1);
    const sentAt = Date.now();
    await s.client.waitFor('the held report', (client) => client.items().some((item) => item.id === 'm-1'), 5000);
    const heldFor = Date.now() - sentAt;
    // Held for the maximum (1 s), not for the hour the client asked for.
    expect(heldFor).toBeGreaterThanOrEqual(700);
    expect(heldFor).toBeLessThan(3000);
    // With sync_interval 1 s a heartbeat would have gone meanwhile: none did.
    expect(s.client.reports.filter((report) => report.items.length === 0)).toHaveLength(1);
    // The next round waits for the end of the quiet.
    await expect
      .poll(() => {
        const lane = s.fx.t.daemon.reports.lanes().get('acme');
        return lane !== undefined && lane.round === null ? lane.dueAt : 0;
      })
      .toBeGreaterThanOrEqual(quietUntil * 1000);
  });

  it('without next_sync_after, heartbeats come every sync_interval', async () => {
    const s = await startReportScenario(cleanups, { reports: { sync_interval_seconds: '1' } });
    await s.addTenant('acme', '/acme');
    await s.client.waitFor('three heartbeats', (client) => client.reports.length >= 3, 5000);
    const [a, b, c] = s.client.reports;
    expect((b?.receivedAt ?? 0) - (a?.receivedAt ?? 0)).toBeGreaterThanOrEqual(900);
    expect((c?.receivedAt ?? 0) - (b?.receivedAt ?? 0)).toBeGreaterThanOrEqual(900);
    expect(JSON.parse(a?.raw ?? '')).toEqual({ delivery_report: [] });
  });
});
