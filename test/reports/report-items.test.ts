import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReportSignature } from '../../src/security/report-signature.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';

const COMMON = ['account_id', 'batch_code', 'event', 'event_id', 'id', 'pk', 'tenant_id'];
const keysOf = (item: Record<string, unknown>): string[] => Object.keys(item).sort();
const expectedKeys = (...specific: string[]): string[] => [...COMMON, ...specific].sort();

describe('delivery report items: fields, authentication and signature', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let s: ReportScenario;
  let bearer: { key: string; secret: string };
  let basic: { key: string; secret: string };
  const nowSeconds = (): number => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    let laterRefused = false;
    s = await startReportScenario(cleanups, {
      sink: {
        onRcpt: (address) => {
          if (address.startsWith('reject')) return { code: 550, message: '5.1.1 no such user' };
          // later@ is refused once, then accepted.
          if (address.startsWith('later') && !laterRefused) {
            laterRefused = true;
            return { code: 451, message: '4.3.0 try again later' };
          }
          return null;
        },
      },
    });
    bearer = await s.addTenant('bearer-co', '/bearer', { client_auth: { method: 'bearer', token: 'tok-123' } });
    basic = await s.addTenant('basic-co', '/basic', {
      client_auth: { method: 'basic', user: 'ann', password: 'p:ss wörd' },
    });
    await s.fx.post(bearer.key, [
      message('ok-1', { batch_code: 'b1' }),
      message('bad-1', { to: 'reject@example.net' }),
      message('later-1', { to: 'later@example.net' }),
    ]);
    await s.fx.post(basic.key, [message('basic-1')]);
    await s.client.waitFor('the three outcomes of bearer-co', (client) => client.items('/bearer').length >= 3);
    await s.client.waitFor('the outcome of basic-co', (client) => client.items('/basic').length >= 1);
  });
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  const itemOf = (prefix: string, id: string, event: string): Record<string, unknown> => {
    const found = s.client.items(prefix).find((item) => item.id === id && item.event === event);
    if (found === undefined)
      throw new Error(`no ${event} item for ${id}; got ${JSON.stringify(s.client.items(prefix))}`);
    return found;
  };

  it('a sent item carries exactly id, tenant_id, account_id, pk, batch_code, event, event_id and sent_ts', async () => {
    const item = itemOf('/bearer', 'ok-1', 'sent');
    expect(keysOf(item)).toEqual(expectedKeys('sent_ts'));
    const { message: detail } = await s.fx.detail('bearer-co', 'ok-1');
    expect(item).toMatchObject({
      id: 'ok-1',
      tenant_id: 'bearer-co',
      account_id: 'main',
      pk: detail.pk,
      batch_code: 'b1',
      sent_ts: detail.sent_ts,
    });
    expect(typeof item.event_id).toBe('string');
    // Epoch seconds, not milliseconds.
    expect(Math.abs((item.sent_ts as number) - nowSeconds())).toBeLessThan(60);
  });

  it('an error item carries error_ts and error', async () => {
    const item = itemOf('/bearer', 'bad-1', 'error');
    expect(keysOf(item)).toEqual(expectedKeys('error_ts', 'error'));
    const { message: detail } = await s.fx.detail('bearer-co', 'bad-1');
    expect(item).toMatchObject({ error_ts: detail.error_ts, error: detail.error });
    expect(item.error).toMatch(/550/);
  });

  it('a deferred item carries deferred_ts, deferred_reason and next_attempt_ts', async () => {
    const item = itemOf('/bearer', 'later-1', 'deferred');
    expect(keysOf(item)).toEqual(expectedKeys('deferred_ts', 'deferred_reason', 'next_attempt_ts'));
    const { message: detail } = await s.fx.detail('bearer-co', 'later-1');
    expect(item.deferred_reason).toBe(detail.deferred_reason);
    expect(item.next_attempt_ts).toBe(detail.next_attempt_ts);
    expect(item.next_attempt_ts as number).toBeGreaterThan(item.deferred_ts as number);
  });

  it('a bounce item carries bounce_ts, bounce_type, bounce_code, bounce_reason and bounce_recipient, and marks bounce_reported_ts', async () => {
    const at = s.fx.clock.now();
    expect(
      s.fx.t.daemon.store.bounces.record({
        tenantId: 'bearer-co',
        clientId: 'ok-1',
        type: 'hard',
        code: '5.1.1',
        reason: 'user unknown',
        recipient: 'rcpt@example.net',
        at,
      }),
    ).toBe(true);
    await s.client.waitFor('the bounce item', () => s.client.items('/bearer').some((item) => item.event === 'bounced'));
    const item = itemOf('/bearer', 'ok-1', 'bounced');
    expect(keysOf(item)).toEqual(
      expectedKeys('bounce_ts', 'bounce_type', 'bounce_code', 'bounce_reason', 'bounce_recipient'),
    );
    expect(item).toMatchObject({
      bounce_ts: Math.floor(at / 1000),
      bounce_type: 'hard',
      bounce_code: '5.1.1',
      bounce_reason: 'user unknown',
      bounce_recipient: 'rcpt@example.net',
    });
    await expect.poll(async () => (await s.fx.detail('bearer-co', 'ok-1')).message.bounce_reported_ts).not.toBeNull();
  });

  it('items of one message arrive in event order: deferred, then sent', async () => {
    // The retry is due a minute later, and the sink accepts it.
    s.fx.clock.advance(61_000);
    await s.fx.settle();
    await s.client.waitFor('later-1 sent', () =>
      s.client.items('/bearer').some((item) => item.id === 'later-1' && item.event === 'sent'),
    );
    const events = s.client
      .items('/bearer')
      .filter((item) => item.id === 'later-1')
      .map((item) => item.event);
    expect(events).toEqual(['deferred', 'sent']);
  });

  it('acknowledged outcomes are marked reported_ts and recorded as a reported event', async () => {
    const { message: detail, events } = await s.fx.detail('bearer-co', 'bad-1');
    expect(detail.reported_ts).not.toBeNull();
    const reported = events.find((event) => event.event_type === 'reported');
    expect(reported?.data).toMatchObject({ events: ['error'] });
    expect(typeof reported?.data?.report_id).toBe('string');
  });

  it('sends the bearer token and the basic credentials of each tenant', () => {
    const bearerReports = s.client.reports.filter((report) => report.path === '/bearer/mail-proxy/sync');
    const basicReports = s.client.reports.filter((report) => report.path === '/basic/mail-proxy/sync');
    expect(bearerReports.length).toBeGreaterThan(0);
    expect(basicReports.length).toBeGreaterThan(0);
    for (const report of bearerReports) expect(report.headers.authorization).toBe('Bearer tok-123');
    const expected = `Basic ${Buffer.from('ann:p:ss wörd', 'utf8').toString('base64')}`;
    for (const report of basicReports) expect(report.headers.authorization).toBe(expected);
    expect(bearerReports[0]?.headers['content-type']).toBe('application/json');
  });

  it('the signature verifies with the tenant secret and fails with another, or on a changed body', () => {
    const report = s.client.reports.find((r) => r.path.startsWith('/bearer') && r.items.length > 0);
    if (report === undefined) throw new Error('no bearer report');
    const header = report.headers['x-mailproxy-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyReportSignature(bearer.secret, report.raw, header, nowSeconds())).toBe(true);
    expect(verifyReportSignature(basic.secret, report.raw, header, nowSeconds())).toBe(false);
    // One byte more is a changed body (replacing an id failed to change it when the first report with items held other ids).
    const changed = `${report.raw} `;
    expect(verifyReportSignature(bearer.secret, changed, header, nowSeconds())).toBe(false);
    // A captured report replayed an hour later is refused.
    expect(verifyReportSignature(bearer.secret, report.raw, header, nowSeconds() + 3600)).toBe(false);
    expect(typeof report.headers['x-mailproxy-report-id']).toBe('string');
  });

  it('a rotated signing secret signs the next reports', async () => {
    const rotated = await s.fx.admin('POST', '/tenant/basic-co/signing-secret');
    expect(rotated.status).toBe(200);
    const secret = rotated.body.client_signing_secret as string;
    expect(secret).not.toBe(basic.secret);
    const before = s.client.reports.length;
    await s.fx.post(basic.key, [message('basic-2')]);
    await s.client.waitFor('basic-2', () => s.client.items('/basic').some((item) => item.id === 'basic-2'));
    const report = s.client.reports.slice(before).find((r) => r.items.some((item) => item.id === 'basic-2'));
    const header = report?.headers['x-mailproxy-signature'] as string;
    expect(verifyReportSignature(secret, report?.raw ?? '', header, nowSeconds())).toBe(true);
    expect(verifyReportSignature(basic.secret, report?.raw ?? '', header, nowSeconds())).toBe(false);
    // The secret is never shown again.
    const tenant = await s.fx.admin('GET', '/tenant/basic-co');
    expect(tenant.text).not.toContain(secret);
    expect(tenant.body.tenant.client_signing_secret_set).toBe(true);
  });
});
