/**
 * Who may submit over SMTP, as which tenant and account, and what the answers
 * are: never an open relay, enhanced status codes as documented, nothing stored
 * for a refused message.
 */
import { once } from 'node:events';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

function raw(headers: Record<string, string>, body = 'Hello.\r\n'): string {
  const lines = Object.entries({
    From: 'app@acme.example',
    To: 'someone@example.net',
    Subject: 'policy',
    ...headers,
  }).map(([name, value]) => `${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

const ENVELOPE = { from: 'app@acme.example', to: ['someone@example.net'] };

describe('SMTP submission policy', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let altSink: SmtpSink;
  let port: number;
  let acmeKey: string;
  let betaKey: string;

  const count = (sql: string): number => {
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    try {
      return (db.prepare(sql).get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  /** Logs in as `user` with `key`, sends one message, and answers the final reply (or the refusal). */
  const submit = async (user: string | null, key: string, message: string, envelope = ENVELOPE): Promise<string> => {
    const session = await openSubmission(port);
    try {
      if (user !== null) await session.login(user, key);
      const info = await session.send(envelope, message);
      return String(info.response);
    } catch (error) {
      return replyOf(error);
    } finally {
      session.close();
    }
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    altSink = await startSmtpSink();
    fx = await startQueueFixture({
      extraToml: '[smtp]\ntrusted_networks = [{ network = "127.0.0.2/32", tenant_id = "acme" }]\n',
    });
    port = fx.t.daemon.smtp?.plain?.port ?? 0;
    acmeKey = await fx.createTenant('acme');
    betaKey = await fx.createTenant('beta');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    await fx.createAccount('acme', 'alt', altSink);
    await fx.createAccount('beta', 'b-main', sink, { is_default: true });
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
    await sink.stop();
    await altSink.stop();
  });

  it('refuses MAIL before AUTH with 530 5.7.0', async () => {
    expect(await submit(null, '', raw({}))).toMatch(/^530 5\.7\.0 /);
  });

  it("refuses a wrong key, the admin token, and another tenant's key with 535 5.7.8", async () => {
    expect(await submit('acme', 'not-the-key', raw({}))).toMatch(/^535 5\.7\.8 /);
    expect(await submit('acme', fx.t.adminToken, raw({}))).toMatch(/^535 5\.7\.8 /);
    expect(await submit('acme', betaKey, raw({}))).toMatch(/^535 5\.7\.8 /);
    expect(await submit('/main', acmeKey, raw({}))).toMatch(/^535 5\.7\.8 /);
  });

  it('refuses an account the tenant does not own with 550 5.7.1, in the user name or in X-Mail-Proxy-Account, and stores nothing', async () => {
    const before = count('SELECT count(*) AS n FROM messages');
    expect(await submit('acme/b-main', acmeKey, raw({}))).toMatch(/^550 5\.7\.1 Account b-main /);
    expect(await submit('acme', acmeKey, raw({ 'X-Mail-Proxy-Account': 'b-main' }))).toMatch(
      /^550 5\.7\.1 Account b-main /,
    );
    expect(await submit('acme/nope', acmeKey, raw({}))).toMatch(/^550 5\.7\.1 /);
    expect(count('SELECT count(*) AS n FROM messages')).toBe(before);
  });

  it('answers 250 2.0.0 with the client id, and sends through the account named by the user, or by the header before it', async () => {
    const byUser = await submit('acme/alt', acmeKey, raw({ 'X-Genro-Mail-ID': 'by-user-1' }));
    expect(byUser).toBe('250 2.0.0 Ok: queued as by-user-1');
    const byHeader = await submit(
      'acme/alt',
      acmeKey,
      raw({ 'X-Genro-Mail-ID': 'by-header-1', 'X-Mail-Proxy-Account': 'main' }),
    );
    expect(byHeader).toBe('250 2.0.0 Ok: queued as by-header-1');
    await fx.settle();
    await altSink.waitForMessages(1);
    await sink.waitForMessages(1);
    expect(altSink.messages.map((m) => /X-Genro-Mail-ID: (\S+)/.exec(m.raw.toString())?.[1])).toEqual(['by-user-1']);
    expect(sink.messages.map((m) => /X-Genro-Mail-ID: (\S+)/.exec(m.raw.toString())?.[1])).toEqual(['by-header-1']);
    const { message } = await fx.detail('acme', 'by-header-1');
    expect(message).toMatchObject({ account_id: 'main', status: 'sent' });
  });

  it('takes a repeated X-Genro-Mail-ID of a message already sent as accepted, without sending it again', async () => {
    await submit('acme', acmeKey, raw({ 'X-Genro-Mail-ID': 'once-1' }));
    await fx.settle();
    const sent = sink.messages.length;
    expect(await submit('acme', acmeKey, raw({ 'X-Genro-Mail-ID': 'once-1' }))).toBe(
      '250 2.0.0 Ok: once-1 was accepted before and is not queued again',
    );
    await fx.settle();
    expect(sink.messages.length).toBe(sent);
  });

  it('refuses a bad control header with 554 5.6.0 and stores nothing', async () => {
    const before = count('SELECT count(*) AS n FROM messages');
    expect(await submit('acme', acmeKey, raw({ 'X-Mail-Proxy-Priority': 'urgent' }))).toMatch(
      /^554 5\.6\.0 X-Mail-Proxy-Priority/,
    );
    expect(await submit('acme', acmeKey, raw({ 'X-Mail-Proxy-Deferred-Ts': 'tomorrow' }))).toMatch(
      /^554 5\.6\.0 X-Mail-Proxy-Deferred-Ts/,
    );
    expect(await submit('acme', acmeKey, raw({ 'X-Mail-Proxy-Batch': '*' }))).toMatch(
      /^554 5\.6\.0 X-Mail-Proxy-Batch/,
    );
    expect(count('SELECT count(*) AS n FROM messages')).toBe(before);
  });

  it('refuses a suppressed recipient at RCPT with 550 5.1.1 and queues the message for the others', async () => {
    const added = await fx.admin('POST', '/suppression', {
      tenant_id: 'acme',
      address: 'gone@example.net',
      reason: 'hard bounce',
    });
    expect(added.status).toBe(201);
    const session = await openSubmission(port);
    await session.login('acme', acmeKey);
    const info = await session.send(
      { from: 'app@acme.example', to: ['Gone@Example.NET', 'here@example.net'] },
      raw({ 'X-Genro-Mail-ID': 'suppressed-1' }),
    );
    session.close();
    expect(info.rejected).toEqual(['Gone@Example.NET']);
    expect(String(info.rejectedErrors?.[0]?.response)).toMatch(/^550 5\.1\.1 /);
    expect(info.response).toBe('250 2.0.0 Ok: queued as suppressed-1');
    const { message } = await fx.detail('acme', 'suppressed-1');
    expect(message.rcpt_to).toEqual(['here@example.net']);
  });

  it("lets a client of a trusted network submit without AUTH, as the network's tenant", async () => {
    const session = await openSubmission(port, { localAddress: '127.0.0.2' });
    const info = await session.send(ENVELOPE, raw({ 'X-Genro-Mail-ID': 'trusted-1' }));
    session.close();
    expect(info.response).toBe('250 2.0.0 Ok: queued as trusted-1');
    expect((await fx.detail('acme', 'trusted-1')).message).toMatchObject({ account_id: 'main' });
    // 127.0.0.1 is not in the list: AUTH is required there.
    expect(await submit(null, '', raw({}))).toMatch(/^530 5\.7\.0 /);
  });
});

/** The machine's first non-loopback IPv4 address: a listener there is not a loopback listener. */
function lanAddress(): string {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && !entry.internal && entry.family === 'IPv4');
  if (address === undefined) throw new Error('this machine has no non-loopback IPv4 address to listen on');
  return address.address;
}

describe('SMTP submission on a non-loopback listener', () => {
  const cleanups: Array<() => Promise<void>> = [];
  const host = lanAddress();
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  const start = async (smtpToml: string, listenOn = host) => {
    const fx = await startQueueFixture({
      extraToml: `[smtp]\n${smtpToml}\n`,
      env: { MAILPROXY_SMTP_LISTEN: `${listenOn}:0` },
    });
    cleanups.push(async () => {
      await fx.stop();
      fx.t.cleanup();
    });
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', { port: 9 }, { is_default: true });
    return { fx, key, port: fx.t.daemon.smtp?.plain?.port ?? 0 };
  };

  it('refuses AUTH without TLS with 538 5.7.11, unless allow_insecure_auth is set', async () => {
    const strict = await start('');
    const session = await openSubmission(strict.port, { host });
    await expect(session.login('acme', strict.key)).rejects.toMatchObject({
      response: expect.stringMatching(/^538 5\.7\.11 /),
    });
    session.close();

    const lax = await start('allow_insecure_auth = true');
    const accepted = await openSubmission(lax.port, { host });
    await accepted.login('acme', lax.key);
    const info = await accepted.send(ENVELOPE, raw({ 'X-Genro-Mail-ID': 'insecure-ok' }));
    accepted.close();
    expect(info.response).toBe('250 2.0.0 Ok: queued as insecure-ok');
  });

  /** Milliseconds from connect to the first reply, and that reply; `early` is written before waiting. */
  const firstReply = async (address: string, port: number, early?: string): Promise<{ ms: number; text: string }> => {
    const socket = connect({ host: address, port });
    await once(socket, 'connect');
    const connectedAt = performance.now();
    if (early !== undefined) socket.write(early);
    const [reply] = (await once(socket, 'data')) as [Buffer];
    socket.destroy();
    return { ms: performance.now() - connectedAt, text: reply.toString() };
  };

  it('pauses the greeting for clients outside loopback and trusted networks, and refuses one that talks first', async () => {
    const { port } = await start('greeting_delay_ms = 1500');
    const polite = await firstReply(host, port);
    expect(polite.text).toMatch(/^220 /);
    expect(polite.ms).toBeGreaterThanOrEqual(1400);
    expect((await firstReply(host, port, 'EHLO early.example\r\n')).text).toMatch(/^421 .*talk too soon/);
  });

  it('greets a loopback client at once whatever the pause', async () => {
    const { port } = await start('greeting_delay_ms = 5000', '127.0.0.1');
    const greeting = await firstReply('127.0.0.1', port);
    expect(greeting.text).toMatch(/^220 \S+ ESMTP mailproxy/);
    // Far below the 5 s pause: loopback is never paused.
    expect(greeting.ms).toBeLessThan(2500);
  });
});
