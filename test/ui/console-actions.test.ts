/**
 * The console's retry now and bulk actions over real HTTP (the daemon, an SMTP
 * sink as the relay, the session cookie and the forms' CSRF token as a browser
 * sends them): every action shows a confirmation with the count first and acts
 * only when that form is posted.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';

const cleanups: Array<() => Promise<void>> = [];
let s: SinkScenario;
let betaKey: string;
let slowAttempts = 0;

beforeAll(async () => {
  s = await startSinkScenario(cleanups, {
    sink: {
      onRcpt: (address) => (address.startsWith('fail') ? { code: 550, message: '5.1.1 no such user' } : null),
      onData: (raw) =>
        raw.includes('X-Genro-Mail-ID: slow') && ++slowAttempts === 1 ? { code: 451, message: '4.3.0 busy' } : null,
    },
  });
  betaKey = await s.fx.createTenant('beta');
  await s.fx.post(s.key, [
    message('slow'),
    message('fine'),
    message('f1', { to: 'fail@example.net' }),
    message('f2', { to: 'fail@example.net' }),
  ]);
  await s.fx.settle();
  await s.sink.waitForMessages(1);
  await s.fx.t.daemon.dispatcher.idle();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function signIn(token: string): Promise<string> {
  const login = await fetch(`${s.fx.t.url}/ui/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  expect(login.status).toBe(303);
  return (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}
const page = async (cookie: string, path: string) => {
  const response = await fetch(`${s.fx.t.url}${path}`, { headers: { cookie }, redirect: 'manual' });
  return { status: response.status, html: await response.text() };
};
/** Posts the page's action form (its hidden fields, CSRF token included; not the header's sign-out), as the browser would on a click. */
async function submit(cookie: string, html: string, fields: Record<string, string> = {}) {
  const form = /<form method="post" action="([^"]+)" class="panel">(.*?)<\/form>/s.exec(html);
  const action = form?.[1] ?? '';
  const hidden = Object.fromEntries(
    [...(form?.[2] ?? '').matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]),
  );
  return fetch(`${s.fx.t.url}${action.replaceAll('&amp;', '&')}`, {
    method: 'POST',
    body: new URLSearchParams({ ...hidden, ...fields }),
    headers: { cookie },
    redirect: 'manual',
  });
}
const audit = (): Array<{ actor: string; command: string }> => {
  const db = new Database(join(s.fx.t.dataDir, 'mailproxy.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare("SELECT actor, command FROM command_log WHERE actor LIKE '%@console' ORDER BY seq")
      .all() as never;
  } finally {
    db.close();
  }
};

describe('console: retry now and bulk actions', () => {
  it('retries a deferred message from its page, after a confirmation, and the relay gets it at once', async () => {
    const cookie = await signIn(s.key);
    expect((await s.fx.detail('acme', 'slow')).message.state).toBe('deferred');
    expect((await page(cookie, '/ui/messages/acme/fine')).html).not.toContain('Retry now…');
    const detail = await page(cookie, '/ui/messages/acme/slow');
    expect(detail.html).toContain('Retry now…');

    const confirm = await page(cookie, '/ui/messages/acme/slow/confirm/retry-now');
    expect(confirm.html).toContain('Attempt message slow now');
    expect(s.sink.messages).toHaveLength(1);
    const posted = await submit(cookie, confirm.html);
    expect(posted.status).toBe(303);
    await s.sink.waitForMessages(2);
    expect((await page(cookie, '/ui/messages/acme/slow')).html).toContain('Retrying now');
    expect(audit()).toContainEqual({ actor: 'tenant:acme@console', command: 'messages.retry_now' });
  });

  it('offers bulk actions over a search only, counts on the confirmation page and acts on confirm', async () => {
    const cookie = await signIn(s.key);
    expect((await page(cookie, '/ui/messages')).html).not.toContain('Resend all matching');
    const list = await page(cookie, '/ui/messages?status=error');
    expect(list.html).toContain('href="/ui/bulk/resend?status=error"');

    const confirm = await page(cookie, '/ui/bulk/resend?status=error');
    expect(confirm.status).toBe(200);
    expect(confirm.html).toMatch(/Resend 2 messages matching status error/);
    expect(confirm.html).toContain('>Resend 2 messages</button>');
    // Nothing happens on the way there, nor by a form without the session's token.
    expect((await s.fx.detail('acme', 'f1')).message.state).toBe('error');
    expect((await submit(cookie, confirm.html, { _csrf: 'guessed' })).status).toBe(403);
    expect((await s.fx.detail('acme', 'f1')).events.map((e) => e.event_type)).not.toContain('resent');

    const done = await submit(cookie, confirm.html);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/ui/messages?status=error');
    for (const id of ['f1', 'f2'])
      expect((await s.fx.detail('acme', id)).events.map((e) => e.event_type)).toContain('resent');
    expect((await page(cookie, '/ui/messages?status=error')).html).toContain('Resent 2 messages.');
    expect(audit()).toContainEqual({ actor: 'tenant:acme@console', command: 'messages.bulk_resend' });
  });

  it("keeps a tenant's session to its own messages, and has the admin act on every tenant only explicitly", async () => {
    const beta = await signIn(betaKey);
    expect((await page(beta, '/ui/bulk/delete?status=sent&tenant=acme')).status).toBe(404);
    const own = await page(beta, '/ui/bulk/delete?status=sent');
    expect(own.html).toMatch(/Delete 0 messages matching status sent/);
    expect(own.html).toContain('Nothing to do.');

    const admin = await signIn(s.fx.t.adminToken);
    const everyTenant = await page(admin, '/ui/bulk/delete?status=sent');
    expect(everyTenant.html).toMatch(/matching status sent in every tenant\?/);
    expect(everyTenant.html).toContain('name="all_tenants" value="1"');
    // The same form without that field names no tenant: refused, nothing deleted.
    const withoutAll = await submit(admin, everyTenant.html, { all_tenants: '' });
    expect(withoutAll.status).toBe(400);
    expect((await s.fx.detail('acme', 'fine')).message.state).toBe('sent');
  });
});
