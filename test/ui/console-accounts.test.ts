/**
 * The console's account pages, suppression forms and tenant page over real HTTP: the real
 * daemon, real smtp-server sinks as relays, a real report client; the session cookie and
 * CSRF token as a browser carries them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const cleanups: Array<() => Promise<void>> = [];
let s: ReportScenario;
let guarded: SmtpSink;
let acmeKey: string;

beforeAll(async () => {
  s = await startReportScenario(cleanups);
  guarded = await startSmtpSink({ auth: { user: 'u1', pass: 'right' } });
  cleanups.push(() => guarded.stop());
  acmeKey = (await s.addTenant('acme', '/acme')).key;
  await s.addTenant('beta', '/beta');
  await s.fx.createAccount('acme', 'guarded', guarded, { user: 'u1', password: 'wrong', limit_per_hour: 100 });
  await s.fx.post(acmeKey, [message('p-1', { account_id: 'guarded' })]);
  await s.fx.settle();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A signed-in console session: GET a page, POST a form with the CSRF token of the last page read. */
async function session(token: string) {
  const url = s.fx.t.url;
  const login = await fetch(`${url}/ui/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  let csrf = '';
  const read = async (response: Response) => {
    const html = await response.text();
    csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? csrf;
    return { status: response.status, html, location: response.headers.get('location') };
  };
  return {
    get: async (path: string) => read(await fetch(`${url}${path}`, { headers: { cookie } })),
    post: async (path: string, fields: Record<string, string>, withToken = true) =>
      read(
        await fetch(`${url}${path}`, {
          method: 'POST',
          body: new URLSearchParams({ ...fields, ...(withToken ? { _csrf: csrf } : {}) }),
          headers: { cookie },
          redirect: 'manual',
        }),
      ),
  };
}

const account = async (id: string) => (await s.fx.admin('GET', `/account/${id}?tenant_id=acme`)).body.account;

describe('console: accounts', () => {
  it('lists the accounts with the paused one and its reason, tests its connection step by step, and resumes it', async () => {
    const admin = await session(s.fx.t.adminToken);
    const list = await admin.get('/ui/accounts');
    expect(list.status).toBe(200);
    expect(list.html).toContain('href="/ui/accounts/acme/guarded"');
    expect(list.html).toMatch(/>paused<\/span><br\/?><span class="muted">AUTH: 535 /);
    expect(list.html).toMatch(/<td class="num">1<\/td><td>\d+ per minute, \d+\/100 per hour, \d+ per day<\/td>/);

    const page = await admin.get('/ui/accounts/acme/guarded');
    expect(page.html).toContain('>Resume</button>');
    const tested = await admin.post('/ui/accounts/acme/guarded/test', {});
    expect(tested.status).toBe(200);
    expect(tested.html).toContain('Connection test: failed at auth');
    expect(tested.html).toMatch(/role="alert">AUTH: 535 /);
    expect(tested.html).toMatch(/<td>auth<\/td><td><span class="badge bad">failed<\/span><\/td><td>535 /);
    expect(guarded.messages).toEqual([]);

    // Without the session's token the form is refused and nothing changes.
    expect((await admin.post('/ui/accounts/acme/guarded/resume', {}, false)).status).toBe(403);
    expect((await account('guarded')).state).toBe('paused');
    // The relay is gone meanwhile: the retry the resume wakes is deferred, the account stays active.
    await guarded.stop();
    const resumed = await admin.post('/ui/accounts/acme/guarded/resume', {});
    expect([resumed.status, resumed.location]).toEqual([303, '/ui/accounts/acme/guarded']);
    expect((await admin.get('/ui/accounts/acme/guarded')).html).toContain('Account guarded resumed');
    expect(await account('guarded')).toMatchObject({ state: 'active', paused_reason: null });
  });

  it('saves the edit form, keeping the stored password when the field is left empty', async () => {
    const admin = await session(s.fx.t.adminToken);
    const form = await admin.get('/ui/accounts/acme/main');
    expect(form.html).toContain('none stored');
    expect(form.html).not.toMatch(/name="password"[^>]*value="[^"]/);
    const fields = {
      host: '127.0.0.1',
      port: String(s.sink.port),
      tls_mode: 'none',
      user: 'relay-user',
      password: '',
      limit_per_minute: '7',
    };
    const saved = await admin.post('/ui/accounts/acme/main/save', {
      ...fields,
      limit_per_hour: '',
      limit_per_day: '',
      max_connections: '3',
    });
    expect(saved.status).toBe(303);
    expect(await account('main')).toMatchObject({
      user: 'relay-user',
      limit_per_minute: 7,
      limit_per_hour: null,
      max_connections: 3,
      has_password: false,
    });
    await admin.post('/ui/accounts/acme/main/save', {
      ...fields,
      password: 'secret',
      limit_per_hour: '',
      limit_per_day: '',
      max_connections: '3',
    });
    expect((await admin.get('/ui/accounts/acme/main')).html).toContain('stored; empty keeps it');
    await admin.post('/ui/accounts/acme/main/save', {
      ...fields,
      limit_per_minute: '8',
      limit_per_hour: '',
      limit_per_day: '',
      max_connections: '3',
    });
    expect(await account('main')).toMatchObject({ limit_per_minute: 8, has_password: true });

    const bad = await admin.post('/ui/accounts/acme/main/save', { ...fields, port: 'x', max_connections: '3' });
    expect(bad.status).toBe(400);
  });

  it("shows a tenant key its own accounts only: another tenant's account is not found", async () => {
    const acme = await session(acmeKey);
    const list = await acme.get('/ui/accounts');
    expect(list.html).toContain('/ui/accounts/acme/main');
    expect(list.html).not.toContain('/ui/accounts/beta/');
    expect((await acme.get('/ui/accounts/beta/main')).status).toBe(404);
    expect((await acme.post('/ui/accounts/beta/main/test', {})).status).toBe(404);
  });
});

describe('console: suppressions', () => {
  it('adds an address with a reason, and removes it after a confirmation page', async () => {
    const admin = await session(s.fx.t.adminToken);
    await admin.get('/ui/suppressions?tenant=acme');
    const added = await admin.post('/ui/suppressions/add', {
      tenant: 'acme',
      address: 'Gone@Example.org',
      reason: 'asked to stop',
    });
    expect([added.status, added.location]).toEqual([303, '/ui/suppressions?tenant=acme']);
    const listed = await admin.get('/ui/suppressions?tenant=acme');
    expect(listed.html).toContain('suppressed for tenant acme');
    expect(listed.html).toContain('asked to stop');
    const api = await s.fx.admin('GET', '/suppressions?tenant_id=acme');
    expect(api.body.suppressions).toEqual([expect.objectContaining({ reason: 'asked to stop', source: 'manual' })]);
    const address = api.body.suppressions[0].address as string;

    const confirm = await admin.get(`/ui/suppressions/remove?tenant=acme&address=${encodeURIComponent(address)}`);
    expect(confirm.html).toContain(`Remove ${address} from tenant acme`);
    expect((await s.fx.admin('GET', '/suppressions?tenant_id=acme')).body.suppressions).toHaveLength(1);
    expect((await admin.post('/ui/suppressions/remove', { tenant: 'acme', address }, false)).status).toBe(403);
    const removed = await admin.post('/ui/suppressions/remove', { tenant: 'acme', address });
    expect(removed.status).toBe(303);
    expect((await s.fx.admin('GET', '/suppressions?tenant_id=acme')).body.suppressions).toEqual([]);
  });

  it('refuses the forms to a tenant key and a malformed address', async () => {
    const acme = await session(acmeKey);
    await acme.get('/ui/accounts');
    expect((await acme.post('/ui/suppressions/add', { tenant: 'acme', address: 'x@example.org' })).status).toBe(403);
    const admin = await session(s.fx.t.adminToken);
    await admin.get('/ui/suppressions?tenant=acme');
    expect((await admin.post('/ui/suppressions/add', { tenant: 'acme', address: 'not an address' })).status).toBe(400);
  });
});

describe('console: tenant page', () => {
  it("shows the tenant's delivery-report log: the acknowledged posts with status, latency and items", async () => {
    await s.fx.post(acmeKey, [message('log-1')]);
    await s.client.waitFor('a report with items', (client) => client.reports.some((report) => report.items.length > 0));
    await expect
      .poll(async () => (await s.fx.admin('GET', '/tenant/acme/report-log')).body.report_log.length, { timeout: 5000 })
      .toBeGreaterThan(0);
    const admin = await session(s.fx.t.adminToken);
    expect((await admin.get('/ui/tenants')).html).toContain('href="/ui/tenants/acme"');
    const page = await admin.get('/ui/tenants/acme');
    expect(page.html).toContain('Delivery-report log');
    expect(page.html).toMatch(
      /<span class="badge ok">acknowledged<\/span><\/td><td>200<\/td><td><\/td><td class="num">\d+ ms<\/td><td class="num">(\d+|heartbeat)</,
    );
    // Tenant pages are the admin's, like the list of tenants.
    const acme = await session(acmeKey);
    expect((await acme.get('/ui/tenants/acme')).status).toBe(403);
  });
});
