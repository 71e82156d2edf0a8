import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestClock, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';

const MAX_BODY = 8192;

interface Case {
  name: string;
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
  status: number;
  code: string;
}

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

/** For each route that takes a body: the same family of mistakes. */
function bodyCases(method: string, path: string, valid: Record<string, unknown>): Case[] {
  const label = `${method} ${path}`;
  return [
    { name: `${label}: malformed JSON`, method, path, body: '{"id": ', status: 400, code: 'INVALID_JSON' },
    { name: `${label}: JSON array`, method, path, body: '[1,2]', status: 400, code: 'VALIDATION_FAILED' },
    { name: `${label}: JSON null`, method, path, body: 'null', status: 400, code: 'VALIDATION_FAILED' },
    {
      name: `${label}: unknown field`,
      method,
      path,
      body: { ...valid, surprise: true },
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: `${label}: wrong types`,
      method,
      path,
      body: Object.fromEntries(Object.keys(valid).map((key) => [key, { nested: [1] }])),
      status: 400,
      code: 'VALIDATION_FAILED',
    },
    {
      name: `${label}: form encoded`,
      method,
      path,
      body: 'id=x',
      contentType: 'application/x-www-form-urlencoded',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: `${label}: oversized`,
      method,
      path,
      body: { ...valid, name: 'x'.repeat(MAX_BODY) },
      status: 413,
      code: 'PAYLOAD_TOO_LARGE',
    },
    { name: `${label}: deeply nested`, method, path, body: nested(3000), status: 400, code: 'VALIDATION_FAILED' },
  ];
}

const CASES: Case[] = [
  ...bodyCases('POST', '/tenant', { id: 'newco' }),
  {
    name: 'POST /tenant: invalid id',
    method: 'POST',
    path: '/tenant',
    body: { id: 'bad id!' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: id too long',
    method: 'POST',
    path: '/tenant',
    body: { id: 'a'.repeat(65) },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: id with a dot (a NATS token separator)',
    method: 'POST',
    path: '/tenant',
    body: { id: 'a.b' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: missing id',
    method: 'POST',
    path: '/tenant',
    body: {},
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: url with credentials',
    method: 'POST',
    path: '/tenant',
    body: { id: 'newco', client_base_url: 'https://u:p@x.example' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: ftp url',
    method: 'POST',
    path: '/tenant',
    body: { id: 'newco', client_base_url: 'ftp://x.example' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: unknown auth method',
    method: 'POST',
    path: '/tenant',
    body: { id: 'newco', client_auth: { method: 'digest' } },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: CR/LF in name',
    method: 'POST',
    path: '/tenant',
    body: { id: 'newco', name: 'a\r\nb' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: lone surrogate in name',
    method: 'POST',
    path: '/tenant',
    body: { id: 'newco', name: 'a\udc00' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /tenant: negative expiry',
    method: 'POST',
    path: '/tenant',
    body: { id: 'newco', api_key_expires_in_seconds: -1 },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  ...bodyCases('PUT', '/tenant/acme', { name: 'n' }),
  {
    name: 'PUT /tenant: invalid path id',
    method: 'PUT',
    path: '/tenant/bad%20id',
    body: {},
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'PUT /tenant: unknown tenant',
    method: 'PUT',
    path: '/tenant/nobody',
    body: { name: 'x' },
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'PUT /tenant: sync path without slash',
    method: 'PUT',
    path: '/tenant/acme',
    body: { client_sync_path: 'sync' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  ...bodyCases('POST', '/tenant/acme/api-key', { expires_in_seconds: 60 }),
  {
    name: 'POST api-key: unknown tenant',
    method: 'POST',
    path: '/tenant/nobody/api-key',
    status: 404,
    code: 'NOT_FOUND',
  },
  ...bodyCases('POST', '/account', { id: 'a1', tenant_id: 'acme', host: 'smtp.example.com' }),
  {
    name: 'POST /account: bad host',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'smtp example com' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: port out of range',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'h.example', port: 70000 },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: fractional limit',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'h.example', limit_per_minute: 1.5 },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: tls disagreement',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'h.example', use_tls: true, tls_mode: 'none' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: admin without tenant',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', host: 'h.example' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: unknown tenant',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'nobody', host: 'h.example' },
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'POST /account: SQL metacharacters in id',
    method: 'POST',
    path: '/account',
    body: { id: "x'; DROP TABLE accounts;--", tenant_id: 'acme', host: 'h.example' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: PEC without a mailbox host',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'h.example', user: 'u', password: 'p', is_pec: true },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: PEC without mailbox credentials',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'h.example', is_pec: true, imap_host: 'imap.example' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: unknown imap_tls_mode',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'h.example', imap_host: 'imap.example', imap_tls_mode: 'tls' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'POST /account: CR/LF in imap_folder',
    method: 'POST',
    path: '/account',
    body: { id: 'a1', tenant_id: 'acme', host: 'h.example', imap_host: 'imap.example', imap_folder: 'INBOX\r\nx' },
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'GET /tenant: invalid id',
    method: 'GET',
    path: '/tenant/' + 'x'.repeat(65),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  { name: 'GET /tenant: unknown', method: 'GET', path: '/tenant/nobody', status: 404, code: 'NOT_FOUND' },
  {
    name: 'GET /accounts: invalid tenant_id',
    method: 'GET',
    path: '/accounts?tenant_id=a%20b',
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'GET /accounts: unknown parameter',
    method: 'GET',
    path: '/accounts?tenant=acme',
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'GET /account: invalid id',
    method: 'GET',
    path: '/account/a.b?tenant_id=acme',
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'DELETE /account: bad force flag',
    method: 'DELETE',
    path: '/account/main?tenant_id=acme&force=maybe',
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'DELETE /tenant: bad force flag',
    method: 'DELETE',
    path: '/tenant/acme?force=yes',
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  { name: 'DELETE /tenant: unknown', method: 'DELETE', path: '/tenant/nobody', status: 404, code: 'NOT_FOUND' },
  { name: 'unknown route', method: 'GET', path: '/nope', status: 404, code: 'NOT_FOUND' },
  {
    name: 'wrong method on a known path',
    method: 'PATCH',
    path: '/tenant/acme',
    body: {},
    status: 404,
    code: 'NOT_FOUND',
  },
];

describe('bad input on every route', () => {
  let t: TestDaemon;

  beforeAll(async () => {
    t = await startTestDaemon(`[http]\nmax_body_bytes = ${MAX_BODY}\n`);
    expect((await api(t.url, 'POST', '/tenant', { token: t.adminToken, body: { id: 'acme' } })).status).toBe(201);
    expect(
      (
        await api(t.url, 'POST', '/account', {
          token: t.adminToken,
          body: { id: 'main', tenant_id: 'acme', host: 'smtp.example.com' },
        })
      ).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await t.stop();
    t.cleanup();
  });

  it.each(CASES)('$name → $status $code', async (testCase) => {
    const response = await api(t.url, testCase.method, testCase.path, {
      token: t.adminToken,
      body: testCase.body,
      headers: testCase.contentType === undefined ? {} : { 'content-type': testCase.contentType },
    });
    expect(response.status).toBe(testCase.status);
    expect(response.body).toMatchObject({ error: { code: testCase.code, message: expect.any(String) } });
    expect(Object.keys(response.body.error).sort()).toEqual(['code', 'details', 'message']);
  });

  it('names the offending fields in details', async () => {
    const response = await api(t.url, 'POST', '/account', {
      token: t.adminToken,
      body: { id: 'bad id', tenant_id: 'acme', host: 'h.example', port: 'x', extra: 1 },
    });
    const paths = response.body.error.details.map((problem: { path: string }) => problem.path).sort();
    expect(paths).toEqual(['extra', 'id', 'port']);
  });

  it('stored nothing from the rejected requests', async () => {
    const tenants = await api(t.url, 'GET', '/tenants', { token: t.adminToken });
    expect(tenants.body.tenants.map((tenant: { id: string }) => tenant.id)).toEqual(['acme']);
    const accounts = await api(t.url, 'GET', '/accounts', { token: t.adminToken });
    expect(accounts.body.accounts.map((account: { id: string }) => account.id)).toEqual(['main']);
    expect(accounts.body.accounts[0]).toMatchObject({ host: 'smtp.example.com', port: 587 });
    expect((await api(t.url, 'GET', '/health')).status).toBe(200);
    const { ready, checks, details } = (await api(t.url, 'GET', '/ready')).body;
    expect({ ready, checks }).toEqual({
      ready: true,
      checks: { store: 'ok', dispatcher: 'ok', parser: 'ok', body_store: 'ok' },
    });
    expect(details.mirror).toMatchObject({ enabled: false, state: 'off' });
  });
});

describe('authentication throttling', () => {
  let t: TestDaemon;
  const clock = createTestClock();
  beforeAll(async () => {
    t = await startTestDaemon(`[http]\nauth_max_failures = 3\nauth_failure_window_seconds = 60\n`, clock);
  });
  afterAll(async () => {
    await t.stop();
    t.cleanup();
  });

  it('answers 429 with Retry-After after repeated failures, even to a right token', async () => {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect((await api(t.url, 'GET', '/tenants', { token: `wrong-${attempt}` })).status).toBe(401);
    }
    const throttled = await api(t.url, 'GET', '/tenants', { token: 'wrong-again' });
    expect(throttled.status).toBe(429);
    expect(throttled.body.error.code).toBe('AUTH_THROTTLED');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api(t.url, 'GET', '/tenants', { token: t.adminToken })).status).toBe(429);
    expect((await api(t.url, 'GET', '/health')).status).toBe(200);

    clock.advance(Number(throttled.headers.get('retry-after')) * 1000);
    expect((await api(t.url, 'GET', '/tenants', { token: t.adminToken })).status).toBe(200);
  });
});

describe('readiness', () => {
  it('answers 503 naming the loop that is not running', async () => {
    const t = await startTestDaemon();
    try {
      expect((await api(t.url, 'GET', '/ready')).status).toBe(200);
      await t.daemon.dispatcher.stop(0);
      const response = await api(t.url, 'GET', '/ready');
      expect(response.status).toBe(503);
      expect({ ready: response.body.ready, checks: response.body.checks }).toEqual({
        ready: false,
        checks: { store: 'ok', dispatcher: 'not ready', parser: 'ok', body_store: 'ok' },
      });
    } finally {
      await t.stop();
      t.cleanup();
    }
  });
});
