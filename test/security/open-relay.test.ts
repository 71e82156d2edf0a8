/**
 * SMTP is not an open relay from any angle. Without AUTH, with wrong
 * credentials, or with one tenant's key for another tenant's name or account,
 * no MAIL, RCPT or DATA is taken, whatever the address looks like (source
 * routes, the percent hack, bang paths, quoted local parts holding an @, IP
 * literals, trailing dots, mixed case, IDN), pipelined or not. Authenticated,
 * the same addresses are either refused or relayed exactly as accepted,
 * through the tenant's own account only: the two upstream sinks receive
 * nothing else.
 */
import { domainToASCII } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openRawSmtp, plainAuth, replyText, type RawSmtp } from '../helpers/raw-smtp.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const ADDRESSES: readonly string[] = [
  'victim@external.example',
  '@relay-a.example,@relay-b.example:victim@external.example',
  'victim%external.example@proxy.example',
  'victim%external.example',
  'external.example!victim',
  'external.example!victim@proxy.example',
  '"victim@external.example"@proxy.example',
  '"victim%external.example"@proxy.example',
  'victim@[127.0.0.1]',
  'victim@[IPv6:::1]',
  'victim@external.example.',
  'victim@external.example..',
  'VICTIM@EXTERNAL.EXAMPLE',
  'Victim@ExTeRnAl.Example',
  'victim@bücher.example',
  'victim@xn--bcher-kva.example',
  'postmaster',
  'postmaster@localhost',
  'victim@localhost',
];

const message = (id: string, rcpt: string, extra = ''): string =>
  `From: app@acme.example\r\nTo: <${rcpt}>\r\nSubject: relay ${id}\r\nX-Genro-Mail-ID: ${id}\r\n${extra}\r\nHello.\r\n.\r\n`;

describe('SMTP is not an open relay', () => {
  let fx: QueueFixture;
  let acmeSink: SmtpSink;
  let betaSink: SmtpSink;
  let port: number;
  let acmeKey: string;
  let betaKey: string;
  /** Message ids accepted with 250 after DATA in authenticated sessions, with the recipient accepted. */
  const accepted = new Map<string, string>();
  const outcomes: string[] = [];

  const session = async (
    auth: { user: string; password: string } | null,
  ): Promise<{ client: RawSmtp; authReply: string | null }> => {
    const client = await openRawSmtp(port);
    expect((await client.reply()).code).toBe(220);
    expect((await client.command('EHLO relay-probe.example')).code).toBe(250);
    const authReply =
      auth === null ? null : replyText(await client.command(`AUTH PLAIN ${plainAuth(auth.user, auth.password)}`));
    return { client, authReply };
  };

  /** One transaction, step by step; every reply from MAIL on. */
  const transaction = async (
    client: RawSmtp,
    from: string,
    rcpt: string,
    id: string,
    extra = '',
  ): Promise<string[]> => {
    const replies = [
      replyText(await client.command(`MAIL FROM:<${from}>`)),
      replyText(await client.command(`RCPT TO:<${rcpt}>`)),
    ];
    const data = await client.command('DATA');
    replies.push(replyText(data));
    if (data.code === 354) replies.push(replyText(await client.command(message(id, rcpt, extra).replace(/\r\n$/, ''))));
    else await client.command('RSET');
    return replies;
  };

  beforeAll(async () => {
    acmeSink = await startSmtpSink();
    betaSink = await startSmtpSink();
    fx = await startQueueFixture({
      extraToml: '[http]\nauth_max_failures = 100000\n[smtp]\nauth_max_failures = 100000\n',
    });
    port = fx.t.daemon.smtp?.plain?.port ?? 0;
    acmeKey = await fx.createTenant('acme');
    betaKey = await fx.createTenant('beta');
    await fx.createAccount('acme', 'main', acmeSink, { is_default: true });
    await fx.createAccount('beta', 'b-main', betaSink, { is_default: true });
  });
  afterAll(async () => {
    console.info(`open relay: ${outcomes.length} transactions tried; authenticated outcomes:\n${outcomes.join('\n')}`);
    await fx.stop();
    fx.t.cleanup();
    await acmeSink.stop();
    await betaSink.stop();
  });

  const refusedAngles: Array<
    [string, { user: string; password: string } | null | (() => { user: string; password: string })]
  > = [
    ['no AUTH', null],
    ['a wrong key', { user: 'acme', password: 'mpk_not-a-key' }],
    ["acme's key for beta", () => ({ user: 'beta', password: acmeKey })],
    ["beta's key for acme's account", () => ({ user: 'acme/main', password: betaKey })],
    ['an empty user', () => ({ user: '', password: acmeKey })],
  ];

  it.each(refusedAngles)('takes no MAIL, RCPT or DATA with %s, for any address form', async (_angle, auth) => {
    const credentials = typeof auth === 'function' ? auth() : auth;
    const { client, authReply } = await session(credentials);
    if (authReply !== null) expect(authReply).toMatch(/^535 5\.7\.8 /);
    for (const [index, address] of ADDRESSES.entries()) {
      for (const [from, rcpt] of [
        ['app@acme.example', address],
        [address, 'someone@example.net'],
      ]) {
        const replies = await transaction(client, from as string, rcpt as string, `refused-${index}`);
        outcomes.push(`  refused angle: ${replies.join(' | ')}`);
        expect(
          replies.filter((reply) => /^[23]/.test(reply)),
          `${from} -> ${rcpt}`,
        ).toEqual([]);
      }
    }
    client.destroy();
  });

  it('takes nothing from a whole transaction pipelined in one write without AUTH', async () => {
    const { client } = await session(null);
    const lines = ADDRESSES.map((address) => `RCPT TO:<${address}>\r\n`).join('');
    await client.write(
      `MAIL FROM:<app@acme.example>\r\n${lines}DATA\r\n${message('pipelined', 'victim@external.example')}QUIT\r\n`,
    );
    const replies = await client.untilClosed();
    expect(replies.filter((reply) => reply.code < 400 && reply.code !== 221).map(replyText)).toEqual([]);
  });

  it("refuses another tenant's account named in X-Mail-Proxy-Account", async () => {
    const { client } = await session({ user: 'acme', password: acmeKey });
    const replies = await transaction(
      client,
      'app@acme.example',
      'someone@example.net',
      'cross-header',
      'X-Mail-Proxy-Account: b-main\r\n',
    );
    expect(replies.at(-1)).toMatch(/^550 5\.7\.1 /);
    client.destroy();
  });

  it("relays an authenticated tenant's accepted recipients exactly as accepted, over SMTP and HTTP, through its own account only", async () => {
    const { client } = await session({ user: 'acme', password: acmeKey });
    for (const [index, address] of ADDRESSES.entries()) {
      const id = `smtp-${index}`;
      const replies = await transaction(client, 'app@acme.example', address, id);
      outcomes.push(`  SMTP ${address}: ${replies.join(' | ')}`);
      if (replies.length === 4 && /^250 /.test(replies[3] as string)) accepted.set(id, address);
      else
        expect(
          replies.some((reply) => /^5\d\d /.test(reply)),
          `${address}: refused with 5yz`,
        ).toBe(true);
    }
    client.destroy();
    const posted = await fx.post(
      acmeKey,
      ADDRESSES.map((address, index) => ({
        id: `http-${index}`,
        from: 'app@acme.example',
        to: address,
        subject: 'relay',
        body: 'Hello.',
      })),
    );
    expect(posted.status).toBe(200);
    const rejected = new Set((posted.body.rejected as Array<{ id: string }>).map((r) => r.id));
    for (const [index, address] of ADDRESSES.entries()) {
      outcomes.push(`  HTTP ${address}: ${rejected.has(`http-${index}`) ? 'rejected' : 'queued'}`);
      if (!rejected.has(`http-${index}`)) accepted.set(`http-${index}`, address);
    }
    expect(accepted.size).toBeGreaterThan(10);

    await fx.settle();
    const relayed = acmeSink.messages.map((m) => ({
      id: /X-Genro-Mail-ID: (\S+)/.exec(m.raw.toString('utf8'))?.[1] ?? '?',
      rcptTo: m.rcptTo,
    }));
    // Each accepted message went to the upstream: it took it, or refused the mailbox there (its call, not ours).
    for (const id of accepted.keys()) {
      if (relayed.some((m) => m.id === id)) continue;
      const { message } = await fx.detail('acme', id);
      outcomes.push(
        `  ${id} (${accepted.get(id)}) not taken by the upstream: ${message.state} ${message.last_reply_code} ${message.error ?? message.deferred_reason}`,
      );
      expect({ id, state: message.state, upstreamRefused: message.last_reply_code >= 500 }).toEqual({
        id,
        state: 'error',
        upstreamRefused: true,
      });
    }
    expect(relayed.filter((m) => !accepted.has(m.id))).toEqual([]);
    for (const { id, rcptTo } of relayed) {
      // What the daemon stored at acceptance (a source route is dropped there, RFC 5321 §4.1.1.3) is what the relay is given.
      const stored = (await fx.detail('acme', id)).message.rcpt_to as string[];
      expect(rcptTo.map(comparable), `${id} (${accepted.get(id)})`).toEqual(stored.map(comparable));
      expect(stored.map(comparable), `${id}: the mailbox accepted`).toEqual([
        comparable(finalMailbox(accepted.get(id) as string)),
      ]);
    }
    expect(betaSink.messages).toEqual([]);
    // Nothing from the refused sessions was stored either.
    const stored = await fx.admin('GET', '/messages?limit=500');
    expect(stored.body.messages.map((m: { id: string }) => m.id).filter((id: string) => !accepted.has(id))).toEqual([]);
  });
});

/** The mailbox of a path: a source route's hosts dropped. */
const finalMailbox = (path: string): string => path.replace(/^@[^:]+:/, '');

/** An address with its domain in the one form relays compare (case-insensitive, IDN as A-labels); the local part as is. */
function comparable(address: string): string {
  const at = address.lastIndexOf('@');
  const domain = address.slice(at + 1);
  return `${address.slice(0, at)}@${domain.startsWith('[') ? domain.toLowerCase() : domainToASCII(domain)}`;
}
