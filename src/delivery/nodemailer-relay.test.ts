/**
 * NodemailerRelay against a real smtp-server upstream (test/peers/smtp-sink.ts):
 * replies, refusals, broken conversations, pooling and account changes.
 */
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Account } from '../core/account/account.js';
import type { Logger } from '../core/logger.js';
import type { Relay, RelayReply } from '../core/delivery/relay.js';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../../test/peers/smtp-sink.js';
import { createNodemailerRelay, parseReply, type NodemailerRelayOptions } from './nodemailer-relay.js';

const RAW = Buffer.from('From: a@sender.test\r\nTo: b@rcpt.test\r\nSubject: hello\r\n\r\nbody\r\n');
const ENVELOPE = { mailFrom: 'a@sender.test', rcptTo: ['b@rcpt.test'] };

/** JSON lines in memory, the shape pino writes. */
function memoryLogger(lines: string[], bindings: Record<string, unknown> = {}): Logger {
  const at =
    (level: string) =>
    (fieldsOrMessage: Record<string, unknown> | string, message?: string): void => {
      const fields =
        typeof fieldsOrMessage === 'string' ? { msg: fieldsOrMessage } : { ...fieldsOrMessage, msg: message };
      lines.push(JSON.stringify({ level, ...bindings, ...fields }));
    };
  return {
    fatal: at('fatal'),
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    child: (more) => memoryLogger(lines, { ...bindings, ...more }),
  };
}

function accountFor(port: number, overrides: Partial<Account> = {}): Account {
  return {
    tenantId: 'tenant-1',
    id: 'account-1',
    host: '127.0.0.1',
    port,
    user: null,
    password: null,
    tlsMode: 'none',
    tlsRejectUnauthorized: true,
    limitPerMinute: null,
    limitPerHour: null,
    limitPerDay: null,
    limitBehavior: 'defer',
    fallbackAccounts: [],
    failoverAfterSeconds: 60,
    warmUp: null,
    destinationLimits: [],
    maxConnections: 2,
    maxMessagesPerConnection: 100,
    isDefault: true,
    isPec: false,
    provider: null,
    imap: null,
    pausedAt: null,
    pausedReason: null,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...overrides,
  };
}

const cleanups: Array<() => Promise<void>> = [];
let logLines: string[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  logLines = [];
});

async function sink(options?: SmtpSinkOptions): Promise<SmtpSink> {
  const started = await startSmtpSink(options);
  cleanups.push(() => started.stop());
  return started;
}

function relay(options: Partial<NodemailerRelayOptions> = {}): Relay {
  const created = createNodemailerRelay({ log: memoryLogger(logLines), ...options });
  cleanups.push(() => created.close());
  return created;
}

async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  return port;
}

function failure(reply: RelayReply): Extract<RelayReply, { ok: false }> {
  if (reply.ok) throw new Error(`expected a failure, got ${JSON.stringify(reply)}`);
  return reply;
}

describe('parseReply', () => {
  it('reads the reply code and the RFC 3463 enhanced status', () => {
    expect(parseReply('250 2.0.0 Ok: queued as X')).toEqual({ replyCode: 250, enhancedStatus: '2.0.0' });
    expect(parseReply('550-5.1.1 The email account does not exist\n550 5.1.1 try again')).toEqual({
      replyCode: 550,
      enhancedStatus: '5.1.1',
    });
    expect(parseReply('452 4.2.2 Mailbox full')).toEqual({ replyCode: 452, enhancedStatus: '4.2.2' });
  });

  it('leaves the enhanced status null when there is none', () => {
    expect(parseReply('421 Service not available')).toEqual({ replyCode: 421, enhancedStatus: null });
    expect(parseReply('250 2.0.0.1 odd')).toEqual({ replyCode: 250, enhancedStatus: null });
    expect(parseReply('Connection closed unexpectedly')).toEqual({ replyCode: null, enhancedStatus: null });
    expect(parseReply('')).toEqual({ replyCode: null, enhancedStatus: null });
  });
});

describe('NodemailerRelay replies', () => {
  it('reports the 250 reply with its enhanced status', async () => {
    const upstream = await sink();
    const reply = await relay().send(accountFor(upstream.port), ENVELOPE, RAW);
    expect(reply).toEqual({
      ok: true,
      replyCode: 250,
      enhancedStatus: '2.6.0',
      text: '250 2.6.0 OK: message queued',
      accepted: ['b@rcpt.test'],
      refused: [],
      transactionMs: expect.any(Number),
    });
    expect(upstream.messages).toMatchObject([{ mailFrom: 'a@sender.test', rcptTo: ['b@rcpt.test'] }]);
  });

  it('delivers the raw bytes unchanged, dot-stuffing and 8-bit included', async () => {
    const upstream = await sink();
    const raw = Buffer.concat([
      Buffer.from(
        'Subject: bytes\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n.leading dot\r\n..two dots\r\ncaffè ✓\r\n',
      ),
      Buffer.from([0xc3, 0xa9, 0x0d, 0x0a]),
    ]);
    await relay().send(accountFor(upstream.port), ENVELOPE, raw);
    await upstream.waitForMessages(1);
    const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
    expect(sha256(upstream.messages[0]?.raw ?? Buffer.alloc(0))).toBe(sha256(raw));
  });

  it('accepts the message and lists the refused recipient when one of two is refused with 550', async () => {
    const upstream = await sink({
      onRcpt: (address) => (address.startsWith('bad') ? { code: 550, message: 'No such user' } : null),
    });
    const reply = await relay().send(
      accountFor(upstream.port),
      { mailFrom: 'a@sender.test', rcptTo: ['good@rcpt.test', 'bad@rcpt.test'] },
      RAW,
    );
    expect(reply).toMatchObject({ ok: true, replyCode: 250, accepted: ['good@rcpt.test'] });
    expect(reply.refused).toEqual([
      { recipient: 'bad@rcpt.test', replyCode: 550, enhancedStatus: '5.1.1', text: '550 5.1.1 No such user' },
    ]);
    expect(upstream.messages[0]?.rcptTo).toEqual(['good@rcpt.test']);
  });

  it('fails at the envelope stage when every recipient is refused', async () => {
    const upstream = await sink({ onRcpt: () => ({ code: 550, message: 'No such user' }) });
    const reply = failure(
      await relay().send(
        accountFor(upstream.port),
        { mailFrom: 'a@sender.test', rcptTo: ['x@rcpt.test', 'y@rcpt.test'] },
        RAW,
      ),
    );
    expect(reply).toMatchObject({ stage: 'envelope', replyCode: 550, enhancedStatus: '5.1.1', errorCode: 'EENVELOPE' });
    expect(reply.refused.map((refusal) => [refusal.recipient, refusal.replyCode])).toEqual([
      ['x@rcpt.test', 550],
      ['y@rcpt.test', 550],
    ]);
    expect(upstream.messages).toHaveLength(0);
  });

  it('fails at the data stage with 451 when the relay defers the message', async () => {
    const upstream = await sink({ onData: () => ({ code: 451, message: 'Try again later' }) });
    const reply = failure(await relay().send(accountFor(upstream.port), ENVELOPE, RAW));
    expect(reply).toEqual({
      ok: false,
      stage: 'data',
      replyCode: 451,
      enhancedStatus: '4.3.0',
      text: '451 4.3.0 Try again later',
      errorCode: 'EMESSAGE',
      refused: [],
      transactionMs: expect.any(Number),
    });
  });

  it('fails at the data stage with 550 when the relay rejects the message', async () => {
    const upstream = await sink({ onData: () => ({ code: 550, message: 'Rejected by policy' }) });
    const reply = failure(await relay().send(accountFor(upstream.port), ENVELOPE, RAW));
    expect(reply).toMatchObject({ stage: 'data', replyCode: 550, text: '550 5.1.1 Rejected by policy' });
  });
});

describe('NodemailerRelay broken conversations', () => {
  it('fails at the connect stage with ECONNREFUSED when nobody listens', async () => {
    const reply = failure(await relay().send(accountFor(await unusedPort()), ENVELOPE, RAW));
    expect(reply).toMatchObject({ stage: 'connect', replyCode: null, enhancedStatus: null, errorCode: 'ECONNREFUSED' });
    expect(reply.text).toMatch(/ECONNREFUSED/);
  });

  it('fails at the timeout stage when the relay never answers after DATA', async () => {
    const upstream = await sink({ hangAfterData: true });
    const reply = failure(await relay({ socketTimeoutMs: 300 }).send(accountFor(upstream.port), ENVELOPE, RAW));
    expect(reply).toMatchObject({ stage: 'timeout', replyCode: null, errorCode: 'ETIMEDOUT' });
    expect(upstream.unanswered).toHaveLength(1);
  });

  it('fails at the connect stage when the relay drops the connection after DATA', async () => {
    const upstream = await sink({ hangAfterData: true });
    const pending = relay().send(accountFor(upstream.port), ENVELOPE, RAW);
    await upstream.waitForUnanswered(1);
    await upstream.stop();
    expect(failure(await pending)).toMatchObject({
      stage: 'connect',
      replyCode: null,
      errorCode: 'ECONNECTION',
      text: 'Connection closed unexpectedly',
    });
  });
});

describe('NodemailerRelay TLS and AUTH', () => {
  const credentials = { user: 'relay-user', pass: 'right-secret' };
  const starttlsAccount = (port: number, password: string): Account =>
    accountFor(port, { tlsMode: 'starttls', tlsRejectUnauthorized: false, user: credentials.user, password });

  it('sends over STARTTLS with AUTH and never logs the password', async () => {
    const upstream = await sink({ auth: credentials, tls: 'starttls' });
    const reply = await relay().send(starttlsAccount(upstream.port, credentials.pass), ENVELOPE, RAW);
    expect(reply).toMatchObject({ ok: true, replyCode: 250 });
    expect(logLines.join('\n')).not.toContain(credentials.pass);
  });

  it('fails at the auth stage when the credentials are wrong', async () => {
    const upstream = await sink({ auth: credentials, tls: 'starttls' });
    const reply = failure(await relay().send(starttlsAccount(upstream.port, 'wrong-secret'), ENVELOPE, RAW));
    expect(reply).toMatchObject({ stage: 'auth', replyCode: 535, enhancedStatus: '5.7.8', errorCode: 'EAUTH' });
    expect(logLines.join('\n')).not.toContain('wrong-secret');
  });

  it('fails at the tls stage when STARTTLS is required but the relay does not offer it', async () => {
    const upstream = await sink({ tls: 'none' });
    const reply = failure(await relay().send(accountFor(upstream.port, { tlsMode: 'starttls' }), ENVELOPE, RAW));
    expect(reply).toMatchObject({ stage: 'tls', errorCode: 'ETLS' });
    expect(upstream.messages).toHaveLength(0);
  });

  it('fails at the tls stage when the certificate is self-signed and the account verifies it', async () => {
    const upstream = await sink({ tls: 'starttls' });
    const reply = failure(
      await relay().send(
        accountFor(upstream.port, { tlsMode: 'starttls', tlsRejectUnauthorized: true }),
        ENVELOPE,
        RAW,
      ),
    );
    expect(reply).toMatchObject({ stage: 'tls', errorCode: 'ESOCKET', text: 'self-signed certificate' });
  });

  it('sends over implicit TLS', async () => {
    const upstream = await sink({ tls: 'implicit' });
    const reply = await relay().send(
      accountFor(upstream.port, { tlsMode: 'implicit', tlsRejectUnauthorized: false }),
      ENVELOPE,
      RAW,
    );
    expect(reply).toMatchObject({ ok: true, replyCode: 250 });
  });
});

describe('NodemailerRelay pooling', () => {
  it('uses at most maxConnections connections for concurrent sends', async () => {
    const upstream = await sink();
    const shared = relay();
    const account = accountFor(upstream.port, { maxConnections: 2 });
    const replies = await Promise.all(Array.from({ length: 10 }, () => shared.send(account, ENVELOPE, RAW)));
    expect(replies.every((reply) => reply.ok)).toBe(true);
    await upstream.waitForMessages(10);
    expect(upstream.messages).toHaveLength(10);
    expect(upstream.maxConcurrentSeen).toBe(2);
  });

  it('sends through the new relay once the account changes', async () => {
    const [before, after] = [await sink(), await sink()];
    const shared = relay();
    const account = accountFor(before.port);
    await shared.send(account, ENVELOPE, RAW);
    await shared.send({ ...account, port: after.port, updatedAt: account.updatedAt + 1 }, ENVELOPE, RAW);
    expect([before.messages.length, after.messages.length]).toEqual([1, 1]);
    await before.waitForConnections(0);
    expect(logLines.some((line) => JSON.parse(line).msg === 'relay transport replaced')).toBe(true);
  });

  it('closes the connections of a transport left idle', async () => {
    const upstream = await sink();
    await relay({ idleCloseMs: 50 }).send(accountFor(upstream.port), ENVELOPE, RAW);
    expect(upstream.connections()).toBe(1);
    await upstream.waitForConnections(0);
  });

  it('closes the connections of a forgotten account, and of every account on close', async () => {
    const [first, second] = [await sink(), await sink()];
    const shared = relay();
    await shared.send(accountFor(first.port), ENVELOPE, RAW);
    await shared.send(accountFor(second.port, { id: 'account-2' }), ENVELOPE, RAW);
    shared.forget('tenant-1', 'account-1');
    await first.waitForConnections(0);
    expect(second.connections()).toBe(1);
    await shared.close();
    await second.waitForConnections(0);
  });
});
