/**
 * One-click unsubscribe (RFC 8058) on real peers: a tenant that asks for it has its mail to one
 * recipient relayed to a real sink with `List-Unsubscribe` and `List-Unsubscribe-Post`, covered
 * by its DKIM signature (verified against a real DNS server); the link's GET changes nothing, its
 * POST suppresses the recipient and reports an `unsubscribed` item to a real client endpoint,
 * once however often it is followed; a forged or altered link gets a 404 and changes nothing.
 */
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterEach, describe, expect, it } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { runCli } from '../helpers/cli-process.js';
import { startDnsServer, type TxtRecord } from '../peers/dns-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SETTING = { base_url: 'https://mail.example.com/', mailto: 'leave@example.com', scope: 'batches' };
const LINK =
  /^List-Unsubscribe: <https:\/\/mail\.example\.com\/unsubscribe\/([A-Za-z0-9._-]+)>, <mailto:leave@example\.com\?subject=unsubscribe%20\1>\r$/m;

/** The header section of a relayed message, unfolded. */
const headersOf = (raw: Buffer): string =>
  raw
    .toString('latin1')
    .split('\r\n\r\n')[0]!
    .replace(/\r\n[ \t]+/g, ' ');

async function scenario() {
  const s = await startReportScenario(cleanups);
  const { key } = await s.addTenant('acme', '/acme', { list_unsubscribe: SETTING });
  const relayed = (id: string): Buffer => {
    const found = s.sink.messages.find((mail) => mail.raw.includes(`X-Genro-Mail-ID: ${id}\r\n`));
    if (found === undefined) throw new Error(`${id} was not relayed`);
    return found.raw;
  };
  const link = (id: string): string => {
    const token = LINK.exec(headersOf(relayed(id)))?.[1];
    if (token === undefined) throw new Error(`${id} carries no unsubscribe link`);
    return `${s.fx.t.url}/unsubscribe/${token}`;
  };
  const suppressions = async () =>
    (await s.fx.admin('GET', '/suppressions?tenant_id=acme')).body.suppressions as Array<Record<string, unknown>>;
  return { ...s, key, relayed, link, suppressions };
}

const oneClick = (url: string, body = 'List-Unsubscribe=One-Click') =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });

describe('one-click unsubscribe', () => {
  it('puts a signed one-click link in single-recipient batch mail only, and keeps a link of the client', async () => {
    const s = await scenario();
    const added = await s.fx.admin('POST', '/domains', { tenant_id: 'acme', domain: 'example.com', selector: 'mp1' });
    expect(added.status, added.text).toBe(201);
    const dns = await startDnsServer(added.body.domain.dns_records as TxtRecord[]);
    cleanups.push(() => dns.stop());

    const posted = await s.fx.post(s.key, [
      message('news', { batch_code: 'newsletter-11' }),
      message('receipt'),
      message('group', { batch_code: 'newsletter-11', to: ['ann@example.net', 'bob@example.net'] }),
      message('own', { batch_code: 'newsletter-11', headers: { 'List-Unsubscribe': '<mailto:own@example.com>' } }),
    ]);
    expect(posted.status, posted.text).toBe(200);
    const session = await openSubmission(s.fx.t.daemon.smtp?.plain?.port ?? 0);
    try {
      await session.login('acme', s.key);
      await session.send(
        { from: 'news@example.com', to: ['carl@example.net'] },
        'From: news@example.com\r\nTo: carl@example.net\r\nSubject: smtp\r\nX-Mail-Proxy-Batch: weekly\r\nX-Genro-Mail-ID: smtp-news\r\n\r\nHello.\r\n',
      );
    } finally {
      session.close();
    }
    await s.fx.settle();
    expect(s.sink.messages).toHaveLength(5);

    for (const id of ['news', 'smtp-news']) {
      const headers = headersOf(s.relayed(id));
      expect(headers, id).toMatch(LINK);
      expect(headers, id).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
    }
    // The signature covers both headers, and verifies as a receiver would check it.
    const signed = s.relayed('news');
    const signedHeaders = /^DKIM-Signature: .*?\bh=([^;]+);/ms.exec(headersOf(signed))?.[1]?.toLowerCase() ?? '';
    expect(signedHeaders.split(':').map((name) => name.trim())).toEqual(
      expect.arrayContaining(['list-unsubscribe', 'list-unsubscribe-post']),
    );
    const resolver = async (name: string, type: string) => (type === 'TXT' ? dns.resolver.resolveTxt(name) : []);
    const verified = await dkimVerify(signed, { resolver } as unknown as Parameters<typeof dkimVerify>[1]);
    expect(verified.results.map((result) => result.status.result)).toEqual(['pass']);

    // No batch (scope `batches`), two recipients (a click could not say who): no link.
    for (const id of ['receipt', 'group']) expect(headersOf(s.relayed(id)), id).not.toMatch(/^List-Unsubscribe/im);
    // The client's own link is kept alone, never doubled.
    const own = headersOf(s.relayed('own'));
    expect(own.match(/^List-Unsubscribe:/gim)).toHaveLength(1);
    expect(own).toMatch(/^List-Unsubscribe: <mailto:own@example\.com>\r?$/m);
    expect(own).not.toMatch(/^List-Unsubscribe-Post/im);
  });

  it('unsubscribes by POST only, once, reported to the client; a forged link changes nothing', async () => {
    const s = await scenario();
    expect((await s.fx.post(s.key, [message('news', { batch_code: 'newsletter-11' })])).status).toBe(200);
    await s.fx.settle();
    const url = s.link('news');

    // A link scanner's GET: a page with a button, and nothing changed.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('…@example.net');
    expect(html).not.toContain('rcpt@example.net');
    expect(html).toMatch(/<form method="post">/);
    expect(await s.suppressions()).toEqual([]);

    // A forged token, and the real one altered: 404, nothing changed.
    const token = url.slice(url.lastIndexOf('/') + 1);
    // Its ciphertext's first character changed (all of its bits count; a last one's may be padding).
    const body = token.lastIndexOf('.') + 1;
    const altered = `${token.slice(0, body)}${token[body] === 'A' ? 'B' : 'A'}${token.slice(body + 1)}`;
    for (const forged of ['v1.AAAA.BBBB.CCCC', altered, 'not-a-token']) {
      const refused = await oneClick(`${s.fx.t.url}/unsubscribe/${forged}`);
      expect(refused.status, forged).toBe(404);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
      expect((await fetch(`${s.fx.t.url}/unsubscribe/${forged}`)).status).toBe(404);
    }
    expect(await s.suppressions()).toEqual([]);
    // The public route reads a small body only.
    expect((await oneClick(url, 'x'.repeat(10_000))).status).toBe(413);
    expect(await s.suppressions()).toEqual([]);

    // The mailbox provider's one click.
    const done = await oneClick(url);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain('No more mail will be sent');
    expect(await s.suppressions()).toMatchObject([
      { address: 'rcpt@example.net', source: 'unsubscribe', reason: 'unsubscribed from newsletter-11' },
    ]);
    await s.client.waitFor('the unsubscribed report item', (client) =>
      client.items().some((item) => item.event === 'unsubscribed'),
    );
    expect(s.client.items().filter((item) => item.event === 'unsubscribed')).toMatchObject([
      {
        id: 'news',
        tenant_id: 'acme',
        batch_code: 'newsletter-11',
        unsubscribe_recipient: 'rcpt@example.net',
        unsubscribe_list: 'newsletter-11',
      },
    ]);

    // Followed again (the button after the one click): still 200, recorded once.
    expect((await oneClick(url)).status).toBe(200);
    const timeline = (await s.fx.detail('acme', 'news')).events.filter((event) => event.event_type === 'unsubscribed');
    expect(timeline).toHaveLength(1);
    // And the recipient gets no more mail from the tenant.
    const again = await s.fx.post(s.key, [message('next', { batch_code: 'newsletter-12' })]);
    expect(again.body.rejected).toMatchObject([{ id: 'next', reason: 'suppressed' }]);
  });

  it('checks the setting and shows it on the tenant', async () => {
    const s = await scenario();
    const put = (setting: unknown) => s.fx.admin('PUT', '/tenant/acme', { list_unsubscribe: setting });
    expect((await put({ base_url: 'http://mail.example.com' })).status).toBe(400);
    expect((await put({ base_url: 'https://mail.example.com', mailto: 'not an address' })).status).toBe(400);
    expect((await put({ base_url: 'https://mail.example.com', scope: 'some' })).status).toBe(400);
    const shown = await s.fx.admin('GET', '/tenant/acme');
    expect(shown.body.tenant.list_unsubscribe).toEqual({ ...SETTING, base_url: 'https://mail.example.com/' });
    expect((await put(null)).status).toBe(200);
    expect((await s.fx.admin('GET', '/tenant/acme')).body.tenant.list_unsubscribe).toBeNull();

    // The same over the CLI.
    const env = { MAILPROXY_URL: s.fx.t.url, MAILPROXY_TOKEN: s.fx.t.adminToken };
    const set = await runCli(
      ['unsubscribe', 'set', '--tenant', 'acme', '--base-url', 'https://links.example.com', '--scope', 'batches'],
      { env },
    );
    expect(set.stderr).toBe('');
    expect(set.stdout).toMatch(/links under:\s+https:\/\/links\.example\.com\/unsubscribe\//);
    expect(set.stdout).toMatch(/in:\s+batch mail to one recipient/);
    const refused = await runCli(['unsubscribe', 'set', '--tenant', 'acme', '--base-url', 'http://plain.example'], {
      env,
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('https');
    expect((await runCli(['unsubscribe', 'off', '--tenant', 'acme'], { env })).stdout).toContain(
      'no unsubscribe link is added',
    );
  });
});
