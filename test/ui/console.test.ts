/**
 * The web console end to end: the real daemon (an SMTP sink as the relay) and
 * a real headless Chromium. A support engineer signs in, finds a message by
 * its recipient, reads its timeline, resends it, suspends and activates its
 * batch and signs out; a tenant key sees nothing of another tenant; forms
 * without the session's token are refused. Screenshots go to test-artifacts/ui/.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { launchChromium, screenshot, signIn } from './console-browser.js';

let fx: QueueFixture;
let sink: SmtpSink;
let browser: Browser;
let acmeKey: string;
let betaKey: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [sink, fx, browser] = await Promise.all([startSmtpSink(), startQueueFixture(), launchChromium()]);
  acmeKey = await fx.createTenant('acme');
  betaKey = await fx.createTenant('beta');
  await fx.createAccount('acme', 'main', sink, { is_default: true, limit_per_hour: 100 });
  await fx.createAccount('beta', 'main', sink, { is_default: true });
  await fx.post(acmeKey, [
    message('inv-1001', { to: 'customer@example.org', subject: 'Invoice 1001', batch_code: 'november' }),
    message('inv-1002', { to: 'other@example.org', subject: 'Invoice 1002', batch_code: 'november' }),
  ]);
  await fx.post(betaKey, [message('beta-secret', { to: 'customer@example.org', subject: 'Beta only' })]);
  await fx.settle();
  await sink.waitForMessages(3);
});

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await fx?.stop();
  fx?.t.cleanup();
  await sink?.stop();
});

const newPage = async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  // Playwright waits for each element on its own; a broken page fails in seconds, not at the test's timeout.
  context.setDefaultTimeout(8000);
  return { context, page: await context.newPage() };
};

const auditActors = (): Array<{ actor: string; command: string }> => {
  const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare("SELECT actor, command FROM command_log WHERE actor LIKE '%@console' ORDER BY seq")
      .all() as Array<{ actor: string; command: string }>;
  } finally {
    db.close();
  }
};

describe('the web console', () => {
  it('finds a message by recipient, shows its timeline, resends it, suspends and activates its batch, and signs out', async () => {
    const { context, page } = await newPage();
    await signIn(page, fx.t.url, acmeKey);
    await screenshot(page, 'overview');
    expect(await page.getByRole('heading', { name: 'Accounts' }).isVisible()).toBe(true);

    await page.getByRole('link', { name: 'Messages', exact: true }).click();
    await page.getByLabel('Recipient (whole address)').fill('customer@example.org');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'inv-1001' }).waitFor();
    expect(await page.getByRole('link', { name: 'inv-1002' }).count()).toBe(0);
    await screenshot(page, 'messages');

    await page.getByRole('link', { name: 'inv-1001' }).click();
    await page.getByRole('heading', { name: 'Message inv-1001' }).waitFor();
    const timeline = page.locator('section', { has: page.getByRole('heading', { name: 'Timeline' }) });
    expect(await timeline.getByRole('cell', { name: /^(message\.)?sent$/ }).count()).toBe(1);
    expect(await page.locator('pre.headers').textContent()).toContain('Subject: Invoice 1001');
    await screenshot(page, 'message');

    await page.getByRole('link', { name: 'Resend…' }).click();
    await page.getByRole('heading', { name: 'Resend: confirm' }).waitFor();
    await screenshot(page, 'confirm-resend');
    await page.getByRole('button', { name: 'Resend' }).click();
    await page.getByRole('status').filter({ hasText: 'Resent' }).waitFor();
    await fx.settle();
    await sink.waitForMessages(4);
    await page.reload();
    expect(await timeline.getByRole('cell', { name: /^(message\.)?sent$/ }).count()).toBe(2);
    expect(await timeline.getByRole('cell', { name: '2', exact: true }).count()).toBeGreaterThan(0);

    await page.getByRole('link', { name: 'Suspend batch november…' }).click();
    await page.getByRole('button', { name: 'Suspend batch' }).click();
    await page.getByRole('status').filter({ hasText: 'Batch november suspended' }).waitFor();
    await page.getByRole('link', { name: 'Activate batch november…' }).click();
    await page.getByRole('button', { name: 'Activate batch' }).click();
    await page.getByRole('status').filter({ hasText: 'Batch november activated' }).waitFor();
    expect(auditActors()).toEqual([
      { actor: 'tenant:acme@console', command: 'messages.resend' },
      { actor: 'tenant:acme@console', command: 'messages.suspend' },
      { actor: 'tenant:acme@console', command: 'messages.activate' },
    ]);

    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'mailproxy_console', httpOnly: true, sameSite: 'Strict', path: '/ui' });
    expect(cookie?.value).not.toContain(acmeKey);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await context.cookies()).toEqual([]);
    // The old session id is dead on the server too, not just forgotten by the browser.
    const replay = await fetch(`${fx.t.url}/ui/overview`, {
      headers: { cookie: `mailproxy_console=${cookie?.value}` },
      redirect: 'manual',
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe('/ui/sign-in');
    expect(fx.t.logLines.some((line) => line.includes(acmeKey))).toBe(false);
  });

  it("shows a tenant key none of another tenant's data, on pages or by direct URL", async () => {
    const { page } = await newPage();
    await signIn(page, fx.t.url, acmeKey);
    expect(await page.content()).not.toContain('beta');
    await page.goto(`${fx.t.url}/ui/messages?recipient=customer%40example.org`);
    await page.getByRole('link', { name: 'inv-1001' }).waitFor();
    expect(await page.content()).not.toContain('beta-secret');
    for (const path of [
      '/ui/messages/beta/beta-secret',
      '/ui/messages/acme/beta-secret',
      '/ui/messages/beta/beta-secret/confirm/delete',
    ]) {
      const response = await page.goto(`${fx.t.url}${path}`);
      expect(response?.status(), path).toBe(404);
      expect(await page.content()).not.toContain('Beta only');
    }
    await page.goto(`${fx.t.url}/ui/messages?tenant=beta`);
    expect(await page.content()).not.toContain('beta-secret');
    expect((await page.goto(`${fx.t.url}/ui/tenants`))?.status()).toBe(403);
  });

  it('shows the admin every tenant, the tenants page and the suppression lists', async () => {
    const { page } = await newPage();
    await signIn(page, fx.t.url, fx.t.adminToken);
    // The chart counts from the stored timeline: both tenants' sends, the resend included.
    expect(await page.locator('figcaption').textContent()).toContain('sent: 4');
    await screenshot(page, 'overview-admin');
    await page.getByRole('link', { name: 'Tenants', exact: true }).click();
    await page.getByRole('cell', { name: 'beta' }).waitFor();
    await screenshot(page, 'tenants');
    await page.getByRole('link', { name: 'Suppressions', exact: true }).click();
    await page.getByRole('heading', { name: 'Suppression lists' }).waitFor();
    await screenshot(page, 'suppressions');
    await page.goto(`${fx.t.url}/ui/messages/beta/beta-secret`);
    await page.getByRole('heading', { name: 'Message beta-secret' }).waitFor();
    const narrow = await browser.newContext({ viewport: { width: 375, height: 800 } });
    contexts.push(narrow);
    const phone = await narrow.newPage();
    await signIn(phone, fx.t.url, fx.t.adminToken);
    await phone.goto(`${fx.t.url}/ui/messages`);
    await screenshot(phone, 'messages-narrow');
    // Nothing wider than the screen but the tables' own scrolling boxes.
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
  });

  it('refuses a form without the session token, a form from another origin, and answers with strict headers', async () => {
    const signInPage = await fetch(`${fx.t.url}/ui/sign-in`);
    expect(signInPage.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(signInPage.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(signInPage.headers.get('x-content-type-options')).toBe('nosniff');
    expect(signInPage.headers.get('cache-control')).toBe('no-store');

    const login = await fetch(`${fx.t.url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: acmeKey }),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(login.headers.get('set-cookie')).toMatch(/HttpOnly/i);
    const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${fx.t.url}/ui/messages/acme/inv-1002/delete`, {
        method: 'POST',
        body: new URLSearchParams(body),
        headers: { cookie, ...headers },
        redirect: 'manual',
      });
    expect((await post({})).status).toBe(403);
    expect((await post({ _csrf: 'guessed' })).status).toBe(403);
    const page = await (
      await fetch(`${fx.t.url}/ui/messages/acme/inv-1002/confirm/delete`, { headers: { cookie } })
    ).text();
    const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
    expect((await post({ _csrf: token }, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await fx.detail('acme', 'inv-1002')).message.id).toBe('inv-1002');
    expect((await post({ _csrf: token })).status).toBe(303);
    expect((await fx.admin('GET', '/messages/inv-1002?tenant_id=acme')).status).toBe(404);

    const document = await fx.admin('GET', '/openapi.json');
    expect(Object.keys(document.body.paths).some((path) => path.startsWith('/ui'))).toBe(false);
  });

  it("erases a message's personal data after its confirmation page, and offers it no more", async () => {
    expect((await fx.post(acmeKey, [message('erase-me', { to: 'carla@example.net' })])).body.queued).toBe(1);
    const login = await fetch(`${fx.t.url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: acmeKey }),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await (
      await fetch(`${fx.t.url}/ui/messages/acme/erase-me/confirm/erase`, { headers: { cookie } })
    ).text();
    expect(page).toContain('cannot be undone');
    const token = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const erased = await fetch(`${fx.t.url}/ui/messages/acme/erase-me/erase`, {
      method: 'POST',
      body: new URLSearchParams({ _csrf: token }),
      headers: { cookie },
      redirect: 'manual',
    });
    expect(erased.status).toBe(303);
    const detail = await fx.detail('acme', 'erase-me');
    expect(detail.message).toMatchObject({ rcpt_to: [], erased_ts: expect.any(Number) });
    const after = await (await fetch(`${fx.t.url}/ui/messages/acme/erase-me`, { headers: { cookie } })).text();
    expect(after).not.toContain('confirm/erase');
    expect(after).not.toContain('carla@example.net');
    // Handed to the relay before it was erased (or not): it ends either way, and leaves the counts below alone.
    await expect
      .poll(async () => (await fx.detail('acme', 'erase-me')).message.status, { timeout: 10_000 })
      .not.toBe('sending');
  });

  it('counts the waiting messages beside the list, by status', async () => {
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'held' });
    expect(
      (await fx.post(acmeKey, [message('held-1', { batch_code: 'held' }), message('held-2', { batch_code: 'held' })]))
        .body.queued,
    ).toBe(2);
    const login = await fetch(`${fx.t.url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: acmeKey }),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const html = await (await fetch(`${fx.t.url}/ui/messages`, { headers: { cookie } })).text();
    expect(html).toContain('Waiting now: 2');
    expect(html).toMatch(/>suspended: 2</);
  });

  it('marks a PEC account on the overview and shows its mailbox, never the mailbox password', async () => {
    const created = await fx.admin('POST', '/account', {
      id: 'certified',
      tenant_id: 'acme',
      host: '127.0.0.1',
      port: 9,
      tls_mode: 'none',
      user: 'studio@pec.example',
      password: 'console-relay-pw',
      is_pec: true,
      imap_host: 'imaps.pec.example',
      imap_password: 'console-imap-pw',
      imap_folder: 'Ricevute',
    });
    expect(created.status).toBe(201);
    const login = await fetch(`${fx.t.url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: acmeKey }),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const html = await (await fetch(`${fx.t.url}/ui/overview`, { headers: { cookie } })).text();
    const row = (id: string): string => new RegExp(`<tr><td>acme/${id}.*?</tr>`).exec(html)?.[0] ?? '';
    expect(row('certified')).toMatch(/<span class="badge"[^>]*>PEC<\/span>/);
    expect(row('certified')).toContain('mailbox imaps.pec.example:993 Ricevute');
    expect(row('main')).not.toContain('PEC');
    expect(row('main')).not.toContain('mailbox');
    expect(html).not.toContain('console-imap-pw');
  });

  it('ends the sessions of a key the moment it is rotated', async () => {
    const login = await fetch(`${fx.t.url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: betaKey }),
      redirect: 'manual',
    });
    expect(login.status).toBe(303);
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const overview = () => fetch(`${fx.t.url}/ui/overview`, { headers: { cookie }, redirect: 'manual' });
    expect((await overview()).status).toBe(200);

    const rotated = await fx.admin('POST', '/tenant/beta/api-key');
    expect(rotated.status).toBe(200);
    const after = await overview();
    expect(after.status).toBe(303);
    expect(after.headers.get('location')).toBe('/ui/sign-in');
    betaKey = rotated.body.api_key;
  });
});
