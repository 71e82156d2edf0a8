/**
 * The suppression list over HTTP: list, add and remove, each tenant's own
 * only, expiry honoured, and new mail to a suppressed recipient refused with
 * reason `suppressed` (HTTP and SMTP share the rule).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { api, createTestClock, startTestDaemon, type TestDaemon } from '../helpers/test-daemon.js';

describe('suppression lists over HTTP', () => {
  let t: TestDaemon;
  const clock = createTestClock();
  let acme: string;
  let globex: string;
  const as = (token: string, method: string, path: string, body?: unknown) => api(t.url, method, path, { token, body });

  beforeAll(async () => {
    t = await startTestDaemon('', clock);
    for (const id of ['acme', 'globex']) {
      const created = await as(t.adminToken, 'POST', '/tenant', { id });
      const account = await as(t.adminToken, 'POST', '/account', {
        id: 'main',
        tenant_id: id,
        host: '127.0.0.1',
        port: 2525,
        tls_mode: 'none',
        is_default: true,
      });
      expect([created.status, account.status]).toEqual([201, 201]);
      if (id === 'acme') acme = created.body.api_key;
      else globex = created.body.api_key;
    }
  });
  afterAll(async () => {
    await t.stop();
    t.cleanup();
  });

  it('a tenant adds, lists and removes its own entries; addresses are normalised', async () => {
    const added = await as(acme, 'POST', '/suppression', { address: 'Ann@Example.NET', reason: 'asked to stop' });
    expect(added.status).toBe(201);
    expect(added.body.suppression).toMatchObject({
      address: 'ann@example.net',
      reason: 'asked to stop',
      source: 'manual',
      expires_ts: null,
    });
    expect(
      (await as(acme, 'GET', '/suppressions')).body.suppressions.map((entry: { address: string }) => entry.address),
    ).toEqual(['ann@example.net']);
    expect((await as(globex, 'GET', '/suppressions')).body.suppressions).toEqual([]);

    const refused = await as(acme, 'POST', '/add-messages', { messages: [message('s-1', { to: 'ann@example.net' })] });
    expect(JSON.stringify(refused.body)).toContain('suppressed');
    const elsewhere = await as(globex, 'POST', '/add-messages', {
      messages: [message('s-1', { to: 'ann@example.net' })],
    });
    expect(elsewhere.body).toMatchObject({ ok: true, queued: 1 });

    expect((await as(globex, 'DELETE', '/suppression/ann%40example.net')).status).toBe(404);
    expect((await as(acme, 'DELETE', '/suppression/ANN%40example.net')).status).toBe(200);
    expect((await as(acme, 'GET', '/suppressions')).body.suppressions).toEqual([]);
    // A `%` is valid in a local part: the path is decoded once (by the router), never twice.
    expect((await as(acme, 'POST', '/suppression', { address: 'a%zz@example.net' })).status).toBe(201);
    expect((await as(acme, 'DELETE', '/suppression/a%25zz%40example.net')).status).toBe(200);
    expect((await as(acme, 'GET', '/suppressions')).body.suppressions).toEqual([]);
    const accepted = await as(acme, 'POST', '/add-messages', { messages: [message('s-2', { to: 'ann@example.net' })] });
    expect(accepted.body).toMatchObject({ ok: true, queued: 1 });
  });

  it('pages in digest order, filters by exact address in any case (no prefix: addresses are sealed), and leaves expired entries out', async () => {
    const addresses = ['b1@example.net', 'b2@example.net', 'b3@example.net', 'zz@example.org'];
    for (const address of addresses) {
      expect((await as(t.adminToken, 'POST', '/suppression', { tenant_id: 'globex', address })).status).toBe(201);
    }
    const first = await as(t.adminToken, 'GET', '/suppressions?tenant_id=globex&limit=2');
    expect(first.body.suppressions).toHaveLength(2);
    expect(first.body.next).toBe(first.body.suppressions[1].digest);
    const second = await as(
      t.adminToken,
      'GET',
      `/suppressions?tenant_id=globex&limit=2&after=${encodeURIComponent(first.body.next)}`,
    );
    expect(second.body.next).toBeNull();
    const pages = [...first.body.suppressions, ...second.body.suppressions] as Array<{
      address: string;
      digest: string;
    }>;
    expect(pages.map((entry) => entry.address).sort()).toEqual(addresses);
    const digests = pages.map((entry) => entry.digest);
    expect(digests).toEqual([...digests].sort());

    const exact = await as(
      t.adminToken,
      'GET',
      `/suppressions?tenant_id=globex&address=${encodeURIComponent('B2@Example.NET')}`,
    );
    expect(exact.body.suppressions.map((entry: { address: string }) => entry.address)).toEqual(['b2@example.net']);
    const prefixed = await as(t.adminToken, 'GET', '/suppressions?tenant_id=globex&prefix=b');
    expect([prefixed.status, prefixed.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const byAddress = await as(t.adminToken, 'GET', '/suppressions?tenant_id=globex&after=b1%40example.net');
    expect(byAddress.status).toBe(400);

    const expiresTs = Math.floor(clock.now() / 1000) + 60;
    expect(
      (await as(acme, 'POST', '/suppression', { address: 'temp@example.net', expires_ts: expiresTs })).body.suppression
        .expires_ts,
    ).toBe(expiresTs);
    expect((await as(acme, 'GET', '/suppressions')).body.suppressions).toHaveLength(1);
    clock.advance(61_000);
    expect((await as(acme, 'GET', '/suppressions')).body.suppressions).toEqual([]);
  });

  it('refuses bad input with a stable code and keeps tenants apart', async () => {
    const bad = await as(acme, 'POST', '/suppression', { address: 'not an address' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const past = await as(acme, 'POST', '/suppression', { address: 'x@example.net', expires_ts: 1000 });
    expect([past.status, past.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    const unknownField = await as(acme, 'POST', '/suppression', { address: 'x@example.net', source: 'bounce' });
    expect(unknownField.status).toBe(400);
    const foreign = await as(acme, 'GET', '/suppressions?tenant_id=globex');
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await as(acme, 'GET', '/bounce/status')).status).toBe(403);
    expect((await api(t.url, 'GET', '/suppressions', {})).status).toBe(401);
  });
});
