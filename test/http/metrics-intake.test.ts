/**
 * The intake counters and the instance gauges of GET /metrics, read as
 * Prometheus reads them after real traffic: SMTP sessions on the daemon's
 * listener (a wrong password, refused recipients), HTTP requests on its socket,
 * and an account paused by a real relay refusing its credentials. Labels are
 * route templates and reply codes, never what a client wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText, type MetricFamily } from '../helpers/prometheus-text.js';
import { message, startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';
import { openRawSmtp, openSession, plainAuth, type RawSmtp, type SmtpReplyLine } from '../helpers/raw-smtp.js';
import { api } from '../helpers/test-daemon.js';

describe('GET /metrics intake counters and instance gauges', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let s: SinkScenario;
  let before: Map<string, MetricFamily>;
  let after: Map<string, MetricFamily>;
  /** Every refusal the SMTP clients read: its code and the enhanced status its text began with. */
  const refusals: Array<{ code: number; status: string }> = [];
  const refused = async (client: RawSmtp, line: string, code: number): Promise<SmtpReplyLine> => {
    const reply = await client.command(line);
    expect(reply.code, line).toBe(code);
    refusals.push({ code, status: /^\d\.\d+\.\d+/.exec(reply.text)?.[0] ?? '' });
    return reply;
  };

  const scrape = async (): Promise<Map<string, MetricFamily>> => {
    const response = await s.fx.admin('GET', '/metrics');
    expect(response.status).toBe(200);
    return parsePrometheusText(response.text);
  };
  const valueOf = (families: Map<string, MetricFamily>, name: string, labels: Record<string, string>): number =>
    families
      .get(name)
      ?.samples.find(
        (sample) =>
          JSON.stringify(Object.entries(sample.labels).sort()) === JSON.stringify(Object.entries(labels).sort()),
      )?.value ?? 0;
  const grew = (name: string, labels: Record<string, string>): number =>
    valueOf(after, name, labels) - valueOf(before, name, labels);

  beforeAll(async () => {
    // The relay wants other credentials than the account has: the first send pauses the account.
    s = await startSinkScenario(cleanups, {
      sink: { auth: { user: 'mailer', pass: 'right-password' } },
      account: { user: 'mailer', password: 'wrong' },
    });
    const port = s.fx.t.daemon.smtp?.plain?.port ?? 0;
    before = await scrape();

    // SMTP: three connections. A wrong password (535 5.7.8) then a MAIL without AUTH (530 5.7.0);
    // a good session with a recipient smtp-server cannot parse (501) and a suppressed one (550 5.1.1).
    const wrong = await openRawSmtp(port);
    await wrong.reply();
    await wrong.command('EHLO counters.test');
    await refused(wrong, `AUTH PLAIN ${plainAuth('acme', 'not-the-key')}`, 535);
    await refused(wrong, 'MAIL FROM:<app@example.com>', 530);
    wrong.destroy();
    expect(
      (await s.fx.admin('POST', '/suppression', { tenant_id: 'acme', address: 'gone@example.net' })).status,
    ).toBeLessThan(300);
    const good = await openSession(port, { user: 'acme', password: s.key });
    expect((await good.command('MAIL FROM:<app@example.com>')).code).toBe(250);
    await refused(good, 'RCPT TO:<not an address>', 501);
    await refused(good, 'RCPT TO:<gone@example.net>', 550);
    good.destroy();
    const third = await openSession(port, null);
    third.destroy();

    // HTTP: a tenant read twice (two ids, one template), a missing tenant, an unknown path, a wrong token.
    await s.fx.admin('GET', '/tenant/acme');
    await s.fx.admin('GET', '/tenant/acme');
    await s.fx.admin('GET', '/tenant/no-such-tenant-7f3a');
    await s.fx.admin('GET', '/wp-admin/scanner-probe-91c2.php');
    await api(s.fx.t.url, 'GET', '/tenants', { token: 'wrong-token-0123456789' });

    // An account paused by the relay refusing its credentials.
    await s.fx.post(s.key, [message('held-1')]);
    await s.fx.settle();
    await s.fx.settle();
    expect((await s.fx.admin('GET', '/accounts?tenant_id=acme')).body.accounts[0].state).toBe('paused');
    after = await scrape();
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('counts SMTP connections by listener, from zero', () => {
    expect(valueOf(before, 'mailproxy_smtp_connections_total', { listener: 'plain' })).toBe(0);
    expect(
      before
        .get('mailproxy_smtp_connections_total')
        ?.samples.map((sample) => sample.labels.listener)
        .sort(),
    ).toEqual(['implicit-tls', 'plain']);
    expect(grew('mailproxy_smtp_connections_total', { listener: 'plain' })).toBe(3);
    expect(grew('mailproxy_smtp_connections_total', { listener: 'implicit-tls' })).toBe(0);
  });

  it('counts the failed AUTH by reason', () => {
    expect(grew('mailproxy_smtp_auth_failures_total', { reason: 'invalid' })).toBe(1);
    expect(grew('mailproxy_smtp_auth_failures_total', { reason: 'throttled' })).toBe(0);
  });

  it('counts each refusal the clients read by its reply code and enhanced status class', () => {
    expect(after.get('mailproxy_smtp_rejections_total')?.type).toBe('counter');
    // Ours (replies.ts) and smtp-server's own (the 501) alike.
    expect(refusals.map((refusal) => `${refusal.code} ${refusal.status}`)).toEqual([
      '535 5.7.8',
      '530 5.7.0',
      expect.stringMatching(/^501 5\.\d\.\d+$/),
      '550 5.1.1',
    ]);
    for (const { code, status } of refusals) {
      const statusClass = status.split('.').slice(0, 2).join('.');
      const sameLabels = refusals.filter(
        (other) => other.code === code && other.status.startsWith(`${statusClass}.`),
      ).length;
      expect(
        grew('mailproxy_smtp_rejections_total', { reply_code: String(code), status_class: statusClass }),
        `${code} ${status}`,
      ).toBe(sameLabels);
    }
    const total = after.get('mailproxy_smtp_rejections_total')?.samples.reduce((sum, sample) => sum + sample.value, 0);
    expect(total).toBe(4);
  });

  it('counts HTTP requests by route template, method and status, never by the raw path', () => {
    const requests = (labels: Record<string, string>) => grew('mailproxy_http_requests_total', labels);
    expect(requests({ route: '/tenant/:id', method: 'GET', status: '200' })).toBe(2);
    expect(requests({ route: '/tenant/:id', method: 'GET', status: '404' })).toBe(1);
    expect(requests({ route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    // Refused before the route ran, still counted under the route's template.
    expect(requests({ route: '/tenants', method: 'GET', status: '401' })).toBe(1);
    // The scrape before this one counted itself once answered.
    expect(requests({ route: '/metrics', method: 'GET', status: '200' })).toBe(1);
    const values =
      after.get('mailproxy_http_requests_total')?.samples.flatMap((sample) => Object.values(sample.labels)) ?? [];
    expect(values.some((value) => /no-such-tenant|scanner-probe|acme/.test(value))).toBe(false);
  });

  it('shows the paused accounts per tenant', () => {
    expect(after.get('mailproxy_accounts_paused')?.type).toBe('gauge');
    expect(valueOf(before, 'mailproxy_accounts_paused', { tenant_id: 'acme' })).toBe(0);
    expect(before.get('mailproxy_accounts_paused')?.samples).toHaveLength(1);
    expect(valueOf(after, 'mailproxy_accounts_paused', { tenant_id: 'acme' })).toBe(1);
  });

  it('says which version runs on which Node.js, always 1, and keeps the gmp_* names', () => {
    const build = after.get('mailproxy_build_info');
    expect(build?.type).toBe('gauge');
    expect(build?.samples).toEqual([
      { name: 'mailproxy_build_info', labels: { version: expect.any(String), node: process.version }, value: 1 },
    ]);
    for (const name of [
      'gmp_sent_total',
      'gmp_errors_total',
      'gmp_deferred_total',
      'gmp_rate_limited_total',
      'gmp_pending_messages',
    ]) {
      expect(after.has(name), name).toBe(true);
    }
  });
});
