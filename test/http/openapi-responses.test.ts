import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { reportBody } from '../../src/ingress/http/delivery-report-doc.js';
import { ROUTE_CATALOG } from '../../src/ingress/http/route-catalog.js';
import { SIGNATURE_HEADER } from '../../src/security/report-signature.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { api, type ApiResponse } from '../helpers/test-daemon.js';

type Schema = Record<string, any>;

/** Keys of `value` the JSON Schema does not name, as paths; for a union, the variant that leaves the fewest out. */
function undocumentedKeys(value: unknown, schema: Schema, where = '$'): string[] {
  const variants: Schema[] = [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])];
  if (variants.length > 0)
    return (
      variants.map((variant) => undocumentedKeys(value, variant, where)).sort((a, b) => a.length - b.length)[0] ?? []
    );
  if (Array.isArray(value))
    return schema.items === undefined
      ? []
      : value.flatMap((item, index) => undocumentedKeys(item, schema.items, `${where}[${index}]`));
  if (value === null || typeof value !== 'object' || schema.properties === undefined) return [];
  return Object.entries(value).flatMap(([key, field]) =>
    key in schema.properties ? undocumentedKeys(field, schema.properties[key], `${where}.${key}`) : [`${where}.${key}`],
  );
}

describe('the documented responses are what the daemon answers', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let s: ReportScenario;
  let document: Schema;
  let key: string;

  beforeAll(async () => {
    s = await startReportScenario(cleanups, {
      sink: {
        onRcpt: (address) => (address.startsWith('reject') ? { code: 550, message: '5.1.1 no such user' } : null),
      },
    });
    document = (await api(s.fx.t.url, 'GET', '/openapi.json')).body;
    ({ key } = await s.addTenant('acme', '/acme', { client_auth: { method: 'bearer', token: 'client-token' } }));
    const posted = await s.fx.post(key, [
      message('ok-1', { batch_code: 'b1' }),
      message('bad-1', { to: 'reject@example.net' }),
      { id: 'no-rcpt', from: 'a@example.com' },
    ]);
    expect(posted.status).toBe(200);
    await s.client.waitFor('the outcomes of acme', (client) => client.items('/acme').length >= 2);
  });
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  /** The response matches its route's documented schema (zod) and has no field the document leaves out. */
  function expectDocumented(method: string, path: string, response: ApiResponse): void {
    const label = `${method} ${path} ${response.status}`;
    const doc = ROUTE_CATALOG.find((route) => route.method === method.toLowerCase() && route.path === path);
    const schema = doc?.responses[response.status]?.schema as z.ZodType | undefined;
    expect(schema, `${label}: no documented schema`).toBeDefined();
    const parsed = schema?.safeParse(response.body);
    expect(parsed?.error?.issues ?? [], `${label}: ${response.text}`).toEqual([]);
    const json =
      document.paths[path][method.toLowerCase()].responses[String(response.status)].content['application/json'].schema;
    expect(undocumentedKeys(response.body, json), label).toEqual([]);
  }

  const admin = (method: string, path: string, body?: unknown) => s.fx.admin(method, path, body);

  it('documents the tenant answers', async () => {
    expectDocumented('POST', '/tenant', await admin('POST', '/tenant', { id: 'spare' }));
    expectDocumented('GET', '/tenants', await admin('GET', '/tenants'));
    expectDocumented('GET', '/tenant/{id}', await admin('GET', '/tenant/acme'));
    expectDocumented(
      'PUT',
      '/tenant/{id}',
      await admin('PUT', '/tenant/spare', {
        name: 'Spare Ltd',
        client_auth: { method: 'basic', user: 'u', password: 'p' },
      }),
    );
    expectDocumented(
      'POST',
      '/tenant/{id}/api-key',
      await admin('POST', '/tenant/spare/api-key', { expires_in_seconds: 3600 }),
    );
    expectDocumented('POST', '/tenant/{id}/signing-secret', await admin('POST', '/tenant/spare/signing-secret'));
    expectDocumented('DELETE', '/tenant/{id}', await admin('DELETE', '/tenant/spare'));
  });

  it('documents the account answers, with and without what the account is doing', async () => {
    const body = {
      id: 'second',
      tenant_id: 'acme',
      host: '127.0.0.1',
      port: s.sink.port,
      tls_mode: 'none',
      limit_per_minute: 10,
    };
    expectDocumented('POST', '/account', await admin('POST', '/account', body));
    expectDocumented(
      'POST',
      '/account',
      await admin('POST', '/account', {
        ...body,
        is_pec: true,
        imap_host: 'imap.example.com',
        user: 'u',
        password: 'p',
      }),
    );
    expectDocumented('GET', '/accounts', await admin('GET', '/accounts'));
    expectDocumented('GET', '/account/{id}', await admin('GET', '/account/main?tenant_id=acme'));
    expectDocumented('DELETE', '/account/{id}', await admin('DELETE', '/account/second?tenant_id=acme'));
  });

  it('documents the message answers: submission, list, detail and the commands', async () => {
    const posted = await s.fx.post(key, [message('ok-2'), { id: 'no-rcpt', from: 'a@example.com' }]);
    expect(posted.body.rejected).toHaveLength(1);
    expectDocumented('POST', '/add-messages', posted);
    expectDocumented('GET', '/messages', await admin('GET', '/messages?tenant_id=acme&limit=1'));
    expectDocumented('GET', '/messages/{id}', await admin('GET', '/messages/ok-1?tenant_id=acme'));
    expectDocumented('GET', '/messages/{id}', await admin('GET', '/messages/bad-1?tenant_id=acme'));
    expectDocumented(
      'POST',
      '/commands/suspend',
      await admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'later' }),
    );
    expectDocumented(
      'POST',
      '/commands/add-messages',
      await api(s.fx.t.url, 'POST', '/commands/add-messages', {
        token: key,
        body: { messages: [message('held', { batch_code: 'later' })] },
      }),
    );
    expectDocumented('GET', '/messages/{id}', await admin('GET', '/messages/held?tenant_id=acme'));
    expectDocumented(
      'POST',
      '/commands/activate',
      await admin('POST', '/commands/activate', { tenant_id: 'acme', batch_code: 'later' }),
    );
    expectDocumented('POST', '/commands/run-now', await admin('POST', '/commands/run-now', { tenant_id: 'acme' }));
    expectDocumented(
      'POST',
      '/commands/resend',
      await admin('POST', '/commands/resend', { tenant_id: 'acme', ids: ['ok-1', 'nobody'] }),
    );
    expectDocumented(
      'POST',
      '/commands/delete-messages',
      await admin('POST', '/commands/delete-messages', { tenant_id: 'acme', ids: 'bad-1,nobody' }),
    );
    expectDocumented(
      'POST',
      '/commands/cleanup-messages',
      await admin('POST', '/commands/cleanup-messages', { tenant_id: 'acme', older_than_seconds: 0 }),
    );
  });

  it('documents the status, health and delivery report status answers', async () => {
    expectDocumented('GET', '/status', await admin('GET', '/status'));
    expectDocumented('GET', '/status', await api(s.fx.t.url, 'GET', '/status', { token: key }));
    expectDocumented('GET', '/health', await api(s.fx.t.url, 'GET', '/health'));
    expectDocumented('GET', '/ready', await api(s.fx.t.url, 'GET', '/ready'));
    expectDocumented('GET', '/tenants/sync-status', await admin('GET', '/tenants/sync-status'));
    expectDocumented('GET', '/tenant/{id}/sync-status', await admin('GET', '/tenant/acme/sync-status'));
    expectDocumented('POST', '/tenant/{id}/sync-now', await admin('POST', '/tenant/acme/sync-now'));
  });

  it('documents the suppression list and the PEC receipts answers', async () => {
    expectDocumented(
      'POST',
      '/suppression',
      await admin('POST', '/suppression', { tenant_id: 'acme', address: 'Ann@Example.net', reason: 'asked by phone' }),
    );
    expectDocumented('GET', '/suppressions', await admin('GET', '/suppressions?tenant_id=acme&limit=1'));
    expectDocumented(
      'DELETE',
      '/suppression/{address}',
      await admin('DELETE', '/suppression/ann%40example.net?tenant_id=acme'),
    );
    expectDocumented('GET', '/pec-receipts', await admin('GET', '/pec-receipts'));
  });

  it('documents the delivery report a client receives: its body, every item and its headers', () => {
    const webhook = document.webhooks.deliveryReport.post;
    const documentedHeaders = webhook.parameters.map((parameter: { name: string }) => parameter.name.toLowerCase());
    expect(documentedHeaders).toContain(SIGNATURE_HEADER);
    const items = s.client.reports
      .filter((report) => report.path.startsWith('/acme'))
      .flatMap((report) => report.items);
    expect(new Set(items.map((item) => item.event))).toEqual(new Set(['sent', 'error']));
    for (const report of s.client.reports.filter((received) => received.path.startsWith('/acme'))) {
      const body = JSON.parse(report.raw) as unknown;
      expect(reportBody.safeParse(body).error?.issues ?? []).toEqual([]);
      expect(undocumentedKeys(body, webhook.requestBody.content['application/json'].schema)).toEqual([]);
      const sent = Object.keys(report.headers).filter(
        (name) => name.startsWith('x-mailproxy-') || name === 'authorization' || name === 'user-agent',
      );
      expect(sent.filter((name) => !documentedHeaders.includes(name))).toEqual([]);
      for (const parameter of webhook.parameters.filter((header: { required: boolean }) => header.required))
        expect(Object.keys(report.headers), parameter.name).toContain(parameter.name.toLowerCase());
    }
  });
});
