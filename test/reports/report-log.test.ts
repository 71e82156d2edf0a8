/**
 * GET /tenant/{id}/report-log against a real client endpoint: each post with its time,
 * status (or network error), latency and items, newest first; kept across a restart and
 * bounded per tenant.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, runCli } from '../helpers/cli-process.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { api, startTestDaemon } from '../helpers/test-daemon.js';
import { OK } from '../peers/report-client.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('GET /tenant/{id}/report-log', () => {
  it('lists a refused post (HTTP 500) and the acknowledged one after it, newest first, and still after a restart', async () => {
    const s = await startReportScenario(cleanups);
    let refused = 0;
    s.client.answer((report) => (report.items.length > 0 && refused++ === 0 ? { status: 500, body: 'oops' } : OK));
    const { key } = await s.addTenant('acme', '/acme');
    await s.fx.post(key, [message('m-1')]);
    await s.client.waitFor(
      'the report, twice',
      (client) => client.reports.filter((r) => r.items.length > 0).length >= 2,
    );
    await expect
      .poll(async () => (await s.fx.detail('acme', 'm-1')).message.reported_ts, { timeout: 5000 })
      .not.toBeNull();

    const { status, body } = await api(s.fx.t.url, 'GET', '/tenant/acme/report-log', { token: key });
    expect(status).toBe(200);
    const withItems = body.report_log.filter((attempt: any) => attempt.items > 0);
    expect(withItems.slice(0, 2)).toEqual([
      {
        report_id: expect.any(String),
        at_ts: expect.any(Number),
        ok: true,
        http_status: 200,
        error_code: null,
        error: null,
        latency_ms: expect.any(Number),
        items: 1,
      },
      {
        report_id: expect.any(String),
        at_ts: expect.any(Number),
        ok: false,
        http_status: 500,
        error_code: 'http_status',
        error: 'the client answered HTTP 500',
        latency_ms: expect.any(Number),
        items: 1,
      },
    ]);
    const ids = s.client.reports
      .filter((report) => report.items.length > 0)
      .map((report) => report.headers['x-mailproxy-report-id']);
    expect(
      withItems
        .slice(0, 2)
        .map((attempt: any) => attempt.report_id)
        .reverse(),
    ).toEqual(ids.slice(0, 2));

    await s.fx.stop();
    const restarted = await startTestDaemon('', undefined, s.fx.t.dataDir);
    try {
      const after = await api(restarted.url, 'GET', '/tenant/acme/report-log?limit=2', { token: restarted.adminToken });
      expect(after.body.report_log.filter((attempt: any) => attempt.items > 0)[0]).toEqual(withItems[0]);
      expect(after.body.report_log.length).toBeLessThanOrEqual(2);
    } finally {
      await restarted.stop();
    }
  });

  it('tells a refused connection by its network error, with no status', async () => {
    const s = await startReportScenario(cleanups);
    const port = await closedPort();
    const created = await s.fx.admin('POST', '/tenant', { id: 'gone', client_base_url: `http://127.0.0.1:${port}` });
    expect(created.status).toBe(201);
    await s.fx.createAccount('gone', 'main', s.sink, { is_default: true });
    await s.fx.post(created.body.api_key, [message('g-1')]);
    await expect
      .poll(async () => (await s.fx.admin('GET', '/tenant/gone/report-log')).body.report_log.length, { timeout: 5000 })
      .toBeGreaterThan(0);
    const [last] = (await s.fx.admin('GET', '/tenant/gone/report-log')).body.report_log;
    expect(last).toMatchObject({
      ok: false,
      http_status: null,
      error_code: 'connection',
      error: expect.stringMatching(/ECONNREFUSED/),
    });

    // The same log from the built CLI.
    const env = { MAILPROXY_URL: s.fx.t.url, MAILPROXY_TOKEN: s.fx.t.adminToken };
    const run = await runCli(['tenants', 'report-log', 'gone', '--limit', '1'], { env });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(/^AT\s+RESULT\s+STATUS\s+ERROR\s+LATENCY\s+ITEMS\s+REPORT ID$/m);
    expect(run.stdout.trim().split('\n')).toHaveLength(2);
    expect(run.stdout).toMatch(/\sFAILED\s+-\s+ECONNREFUSED\s+\d+ ms\s+\d+\s+\S+$/m);
    const json = await runCli(['tenants', 'report-log', 'gone', '--json'], { env });
    // The lane keeps retrying meanwhile: every attempt is the same refusal.
    expect(
      JSON.parse(json.stdout).report_log.map((attempt: any) => [attempt.http_status, attempt.error_code]),
    ).toContainEqual([null, 'connection']);
    expect((await runCli(['tenants', 'report-log', 'nobody'], { env })).code).not.toBe(0);
  });

  it('keeps the newest 200 attempts per tenant, and answers 404 to another tenant and 400 to a bad limit', async () => {
    const s = await startReportScenario(cleanups);
    const acme = await s.addTenant('acme', '/acme');
    await s.addTenant('other', '/other');
    const reports = s.fx.t.daemon.store.reports;
    const record = reports.lane('acme')?.record;
    if (record === undefined) throw new Error('no lane');
    for (let n = 0; n < 205; n++) {
      reports.saveLane('acme', record, {
        reportId: `r-${n}`,
        at: 1_000 + n,
        ok: false,
        httpStatus: 503,
        errorCode: 'http_status',
        error: 'x',
        latencyMs: 1,
        items: n,
      });
    }
    const log = (await s.fx.admin('GET', '/tenant/acme/report-log?limit=200')).body.report_log;
    expect(log).toHaveLength(200);
    expect(log[0].report_id).toBe('r-204');
    expect(log.at(-1).report_id).toBe('r-5');

    expect((await api(s.fx.t.url, 'GET', '/tenant/other/report-log', { token: acme.key })).status).toBe(404);
    expect((await s.fx.admin('GET', '/tenant/nobody/report-log')).status).toBe(404);
    const bad = await s.fx.admin('GET', '/tenant/acme/report-log?limit=500');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });
});
