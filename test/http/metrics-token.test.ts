/**
 * The metrics token (`[http] metrics_token`, here from MAILPROXY_HTTP_METRICS_TOKEN):
 * what Prometheus holds instead of the admin token. It reads GET /metrics and
 * nothing else: every other route answers it 403, the console and SMTP AUTH
 * take it for a wrong password. The admin token still reads /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openRawSmtp, plainAuth } from '../helpers/raw-smtp.js';
import { api } from '../helpers/test-daemon.js';

const METRICS_TOKEN = 'prometheus-scrape-token-0123456789';

describe('the metrics token', () => {
  let fx: QueueFixture;
  let tenantKey: string;

  beforeAll(async () => {
    fx = await startQueueFixture({ env: { MAILPROXY_HTTP_METRICS_TOKEN: METRICS_TOKEN } });
    tenantKey = await fx.createTenant('acme');
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
  });

  it('reads GET /metrics, as a bearer token or X-API-Token, and so does the admin token', async () => {
    for (const options of [
      { token: METRICS_TOKEN },
      { headers: { 'x-api-token': METRICS_TOKEN } },
      { token: fx.t.adminToken },
    ]) {
      const response = await api(fx.t.url, 'GET', '/metrics', options);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(parsePrometheusText(response.text).get('gmp_sent_total')?.type).toBe('counter');
    }
  });

  it('is refused with 403 FORBIDDEN on every other route, reads and writes alike, and changes nothing', async () => {
    for (const [method, path, body] of [
      ['GET', '/tenants', undefined],
      ['GET', '/tenant/acme', undefined],
      ['GET', '/status', undefined],
      ['GET', '/mirror/status', undefined],
      ['POST', '/tenant', { id: 'intruder' }],
      ['POST', '/add-messages', { messages: [] }],
      ['DELETE', '/tenant/acme', undefined],
      ['POST', '/metrics', undefined],
    ] as const) {
      const response = await api(fx.t.url, method, path, { token: METRICS_TOKEN, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.error.code, `${method} ${path}`).toBe('FORBIDDEN');
    }
    const tenants = await fx.admin('GET', '/tenants');
    expect(tenants.body.tenants.map((tenant: { id: string }) => tenant.id)).toEqual(['acme']);
  });

  it('does not make a tenant key, a wrong token or no token a reader of /metrics', async () => {
    expect((await api(fx.t.url, 'GET', '/metrics', { token: tenantKey })).body.error.code).toBe('FORBIDDEN');
    const wrong = await api(fx.t.url, 'GET', '/metrics', { token: `${METRICS_TOKEN}x` });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect((await api(fx.t.url, 'GET', '/metrics')).status).toBe(401);
  });

  it('logs the scrape with the actor "metrics"', async () => {
    await api(fx.t.url, 'GET', '/metrics', { token: METRICS_TOKEN, headers: { 'x-request-id': 'scrape-actor-1' } });
    const line = fx.t.logLines
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.requestId === 'scrape-actor-1');
    expect(line).toMatchObject({ msg: 'http request', path: '/metrics', status: 200, actor: 'metrics' });
  });

  it('is a wrong password for SMTP AUTH', async () => {
    const client = await openRawSmtp(fx.t.daemon.smtp?.plain?.port ?? 0);
    expect((await client.reply()).code).toBe(220);
    expect((await client.command('EHLO metrics.test')).code).toBe(250);
    expect((await client.command(`AUTH PLAIN ${plainAuth('acme', METRICS_TOKEN)}`)).code).toBe(535);
    client.destroy();
  });
});
