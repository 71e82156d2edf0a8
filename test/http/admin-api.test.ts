import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestClock, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';

const ACCOUNT_PASSWORD = 'relay-password-7f3a9c1e5b';
const CLIENT_TOKEN = 'client-bearer-token-2d8e4f6a';
const BASIC_PASSWORD = 'client-basic-password-9b1c3d';

describe('tenants and accounts over HTTP', () => {
  let t: TestDaemon;
  const clock = createTestClock();
  let acmeKey: string;
  let globexKey: string;
  const issuedKeys: string[] = [];

  beforeAll(async () => {
    t = await startTestDaemon('', clock);
  });
  afterAll(async () => {
    await t.stop();
    t.cleanup();
  });

  it('creates a tenant and returns its API key once', async () => {
    const created = await api(t.url, 'POST', '/tenant', {
      token: t.adminToken,
      body: {
        id: 'acme',
        name: 'ACME',
        client_base_url: 'https://acme.example',
        client_auth: { method: 'bearer', token: CLIENT_TOKEN },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.api_key).toMatch(/^mpk_[A-Za-z0-9_-]{43}$/);
    expect(created.body.tenant).toMatchObject({
      id: 'acme',
      name: 'ACME',
      client_sync_path: '/mail-proxy/sync',
      client_auth: { method: 'bearer' },
      active: true,
    });
    acmeKey = created.body.api_key;
    issuedKeys.push(acmeKey);

    const other = await api(t.url, 'POST', '/tenant', {
      token: t.adminToken,
      body: { id: 'globex', client_auth: { method: 'basic', user: 'gx', password: BASIC_PASSWORD } },
    });
    expect(other.status).toBe(201);
    globexKey = other.body.api_key;
    issuedKeys.push(globexKey);
    expect(globexKey).not.toBe(acmeKey);
  });

  it('refuses a second tenant with the same id', async () => {
    const again = await api(t.url, 'POST', '/tenant', { token: t.adminToken, body: { id: 'acme' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  it('lists, reads and updates tenants', async () => {
    const list = await api(t.url, 'GET', '/tenants', { token: t.adminToken });
    expect(list.status).toBe(200);
    expect(list.body.tenants.map((tenant: { id: string }) => tenant.id)).toEqual(['acme', 'globex']);

    const updated = await api(t.url, 'PUT', '/tenant/globex', {
      token: t.adminToken,
      body: { name: 'Globex Corp', active: false },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.tenant).toMatchObject({
      id: 'globex',
      name: 'Globex Corp',
      active: false,
      client_auth: { method: 'basic', user: 'gx' },
    });

    const read = await api(t.url, 'GET', '/tenant/globex', { token: t.adminToken });
    expect(read.body.tenant).toMatchObject({ name: 'Globex Corp', active: false });

    const mismatched = await api(t.url, 'PUT', '/tenant/globex', { token: t.adminToken, body: { id: 'acme' } });
    expect(mismatched.status).toBe(400);
  });

  it('lets a tenant key manage its own accounts', async () => {
    const created = await api(t.url, 'POST', '/account', {
      token: acmeKey,
      body: {
        id: 'main',
        host: 'smtp.acme.example',
        port: 587,
        user: 'mailer',
        password: ACCOUNT_PASSWORD,
        limit_per_minute: 60,
        is_default: true,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.account).toMatchObject({
      id: 'main',
      tenant_id: 'acme',
      has_password: true,
      tls_mode: 'starttls',
      is_default: true,
      limit_per_minute: 60,
    });

    // genro's use_tls on the stored port 587: STARTTLS, not implicit TLS.
    const updated = await api(t.url, 'POST', '/account', {
      token: acmeKey,
      body: { id: 'main', host: 'smtp2.acme.example', use_tls: true, tls_mode: 'none' },
    });
    expect(updated.status).toBe(400);
    const plain = await api(t.url, 'POST', '/account', {
      token: acmeKey,
      body: { id: 'main', host: 'smtp2.acme.example', use_tls: false },
    });
    expect(plain.body).toMatchObject({ created: false, account: { tls_mode: 'none', use_tls: false, port: 587 } });
    const tls = await api(t.url, 'POST', '/account', {
      token: acmeKey,
      body: { id: 'main', host: 'smtp2.acme.example', use_tls: true },
    });
    expect(tls.status).toBe(200);
    expect(tls.body).toMatchObject({
      created: false,
      account: {
        host: 'smtp2.acme.example',
        tls_mode: 'starttls',
        use_tls: true,
        has_password: true,
        port: 587,
        limit_per_minute: 60,
      },
    });

    const second = await api(t.url, 'POST', '/account', {
      token: t.adminToken,
      body: { id: 'bulk', tenant_id: 'acme', host: '192.0.2.10', is_default: true },
    });
    expect(second.status).toBe(201);

    const list = await api(t.url, 'GET', '/accounts', { token: acmeKey });
    expect(
      list.body.accounts.map((account: { id: string; is_default: boolean }) => [account.id, account.is_default]),
    ).toEqual([
      ['bulk', true],
      ['main', false],
    ]);
  });

  it('answers 404 when a tenant key reaches for another tenant', async () => {
    await api(t.url, 'POST', '/account', { token: globexKey, body: { id: 'gx-relay', host: 'relay.globex.example' } });
    const cases = [
      await api(t.url, 'GET', '/accounts?tenant_id=globex', { token: acmeKey }),
      await api(t.url, 'GET', '/account/gx-relay?tenant_id=globex', { token: acmeKey }),
      await api(t.url, 'GET', '/account/gx-relay', { token: acmeKey }),
      await api(t.url, 'DELETE', '/account/gx-relay?tenant_id=globex', { token: acmeKey }),
      await api(t.url, 'POST', '/account', {
        token: acmeKey,
        body: { id: 'hijack', tenant_id: 'globex', host: 'evil.example' },
      }),
    ];
    for (const response of cases) {
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
    const still = await api(t.url, 'GET', '/accounts?tenant_id=globex', { token: t.adminToken });
    expect(still.body.accounts.map((account: { id: string }) => account.id)).toEqual(['gx-relay']);
  });

  it('answers 403 when a tenant key uses an admin route', async () => {
    for (const [method, path] of [
      ['GET', '/tenants'],
      ['GET', '/tenant/acme'],
      ['POST', '/tenant'],
      ['PUT', '/tenant/acme'],
      ['DELETE', '/tenant/globex'],
      ['POST', '/tenant/acme/api-key'],
    ] as const) {
      const response = await api(t.url, method, path, { token: acmeKey, body: method === 'GET' ? undefined : {} });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.error.code).toBe('FORBIDDEN');
    }
  });

  it('answers 401 without a token or with a wrong one', async () => {
    const none = await api(t.url, 'GET', '/accounts');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    const wrong = await api(t.url, 'GET', '/accounts', { token: 'mpk_not-a-real-key' });
    expect(wrong.status).toBe(401);
    const viaHeader = await api(t.url, 'GET', '/accounts', { headers: { 'x-api-token': acmeKey } });
    expect(viaHeader.status).toBe(200);
  });

  it('rotating a key invalidates the old one', async () => {
    const rotated = await api(t.url, 'POST', '/tenant/acme/api-key', { token: t.adminToken });
    expect(rotated.status).toBe(200);
    const newKey: string = rotated.body.api_key;
    issuedKeys.push(newKey);
    expect(newKey).not.toBe(acmeKey);
    expect((await api(t.url, 'GET', '/accounts', { token: acmeKey })).status).toBe(401);
    expect((await api(t.url, 'GET', '/accounts', { token: newKey })).status).toBe(200);
    acmeKey = newKey;
  });

  it('refuses an expired key', async () => {
    const rotated = await api(t.url, 'POST', '/tenant/globex/api-key', {
      token: t.adminToken,
      body: { expires_in_seconds: 3600 },
    });
    expect(rotated.status).toBe(200);
    issuedKeys.push(rotated.body.api_key);
    expect(rotated.body.api_key_expires_at).toEqual(expect.any(String));
    expect(Date.parse(rotated.body.api_key_expires_at) - clock.now()).toBeGreaterThan(3590_000);
    expect((await api(t.url, 'GET', '/accounts', { token: rotated.body.api_key })).status).toBe(200);
    clock.advance(3600_000);
    const after = await api(t.url, 'GET', '/accounts', { token: rotated.body.api_key });
    expect(after.status).toBe(401);
    expect(after.body.error.message).toBe('API key expired');
  });

  it('deletes accounts and tenants', async () => {
    expect((await api(t.url, 'DELETE', '/account/bulk', { token: acmeKey })).status).toBe(200);
    expect((await api(t.url, 'GET', '/account/bulk', { token: acmeKey })).status).toBe(404);
    const globexKey: string = (await api(t.url, 'POST', '/tenant/globex/api-key', { token: t.adminToken })).body
      .api_key;
    issuedKeys.push(globexKey);
    expect((await api(t.url, 'GET', '/accounts', { token: globexKey })).status).toBe(200);
    expect((await api(t.url, 'DELETE', '/tenant/globex', { token: t.adminToken })).status).toBe(200);
    expect((await api(t.url, 'GET', '/tenant/globex', { token: t.adminToken })).status).toBe(404);
    // The key worked a moment ago (and was looked up): a deleted tenant's key opens nothing.
    expect((await api(t.url, 'GET', '/accounts', { token: globexKey })).status).toBe(401);
    expect((await api(t.url, 'GET', '/accounts?tenant_id=globex', { token: t.adminToken })).status).toBe(404);
  });

  it('never shows a secret in a response body or a log line', async () => {
    const bodies = [
      await api(t.url, 'GET', '/tenants', { token: t.adminToken }),
      await api(t.url, 'GET', '/tenant/acme', { token: t.adminToken }),
      await api(t.url, 'GET', '/accounts', { token: t.adminToken }),
      await api(t.url, 'GET', '/account/main', { token: acmeKey }),
    ].map((response) => response.text);
    for (const text of bodies) {
      for (const secret of [ACCOUNT_PASSWORD, CLIENT_TOKEN, BASIC_PASSWORD, t.adminToken, ...issuedKeys]) {
        expect(text).not.toContain(secret);
      }
    }
    const logs = t.logLines.join('');
    expect(t.logLines.length).toBeGreaterThan(20);
    for (const line of t.logLines) expect(() => JSON.parse(line)).not.toThrow();
    for (const secret of [ACCOUNT_PASSWORD, CLIENT_TOKEN, BASIC_PASSWORD, t.adminToken, ...issuedKeys]) {
      expect(logs).not.toContain(secret);
    }
  });

  it('keeps secrets out of the SQLite files', async () => {
    await t.stop();
    const files = readdirSync(t.dataDir).filter((name) => name.startsWith('mailproxy.db'));
    expect(files).toContain('mailproxy.db');
    const bytes = Buffer.concat(files.map((name) => readFileSync(join(t.dataDir, name))));
    expect(bytes.includes(Buffer.from('smtp2.acme.example'))).toBe(true); // the data is there, in the clear
    for (const secret of [ACCOUNT_PASSWORD, CLIENT_TOKEN, BASIC_PASSWORD, ...issuedKeys]) {
      expect(bytes.includes(Buffer.from(secret)), 'secret found in the database bytes').toBe(false);
    }
  });
});
