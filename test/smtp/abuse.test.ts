/**
 * SMTP protocol abuse against the daemon's submission port, over raw sockets:
 * garbage, over-long lines, bare LF, deep pipelining, stalled and vanished DATA,
 * connection floods, limits and AUTH failures. Each case asserts the reply (or the
 * close), then that a fresh client still gets a message queued and relayed and that
 * the store holds exactly the accepted messages and no spool.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  beginData,
  openRawSmtp,
  openSession,
  plainAuth,
  replyText,
  type RawSmtp,
  type SmtpReplyLine,
} from '../helpers/raw-smtp.js';
import { spoolFiles, storedBodyBySubject } from '../helpers/stored-body.js';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../peers/smtp-sink.js';
import { eventually as eventuallyWithin } from '../helpers/eventually.js';

interface Scenario {
  fx: QueueFixture;
  sink: SmtpSink;
  key: string;
  port: number;
  counts(): { messages: number; spools: number };
  /** The stored bytes of the message with this subject. */
  rawOf(subject: string): Buffer;
  /** Log records of transfers the daemon dropped because the client went away (or was timed out) mid-DATA. */
  abandoned(): number;
  /** Log records at error or fatal level that are not such a dropped transfer. */
  unexpectedErrors(): string[];
  stop(): Promise<void>;
}

interface LogRecord {
  level: string;
  msg: string;
  err?: { message?: string };
}

const logRecords = (fx: QueueFixture): LogRecord[] => fx.t.logLines.map((line) => JSON.parse(line) as LogRecord);
const isAbandonedTransfer = (r: LogRecord & { reason?: string }): boolean =>
  r.msg === 'smtp transfer abandoned' && r.reason === 'Connection closed before the message was received in full';

/** A daemon with `smtpToml` in its [smtp] section, tenant `acme` and its default account on a sink. */
async function startScenario(smtpToml: string): Promise<Scenario> {
  const sink = await startSmtpSink();
  const fx = await startQueueFixture({ extraToml: `[smtp]\n${smtpToml}\n` });
  const key = await fx.createTenant('acme');
  await fx.createAccount('acme', 'main', sink, { is_default: true });
  const port = fx.t.daemon.smtp?.plain?.port;
  if (port === undefined) throw new Error('the daemon has no plain SMTP listener');
  const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true, fileMustExist: true });
  const count = (table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  return {
    fx,
    sink,
    key,
    port,
    // Spools in the database (no body store) and beside the body store.
    counts: () => ({ messages: count('messages'), spools: count('spools') + spoolFiles(fx.t.dataDir) }),
    rawOf: (subject) => storedBodyBySubject(db, { dataDir: fx.t.dataDir }, subject) ?? Buffer.alloc(0),
    abandoned: () => logRecords(fx).filter(isAbandonedTransfer).length,
    unexpectedErrors: () =>
      logRecords(fx)
        .filter((r) => (r.level === 'error' || r.level === 'fatal') && !isAbandonedTransfer(r))
        .map((r) => JSON.stringify(r)),
    async stop() {
      db.close();
      await fx.stop();
      fx.t.cleanup();
      await sink.stop();
    },
  };
}

/** Polls a condition the daemon reaches on its own (a spool written or removed). */
const eventually = (check: () => boolean, what: string, timeoutMs = 5000): Promise<void> =>
  eventuallyWithin(check, what, timeoutMs, 20);

/** A client of tenant `acme` (authenticated unless `anonymous`). */
const session = (s: Scenario, anonymous = false): Promise<RawSmtp> =>
  openSession(s.port, anonymous ? null : { user: 'acme', password: s.key });

function content(subject: string, body = `body of ${subject}\r\n`): string {
  return `From: sender@example.com\r\nTo: rcpt@example.net\r\nSubject: ${subject}\r\n\r\n${body}`;
}

/** DATA opened and `partial` written, without the final dot. */
async function openData(client: RawSmtp, partial: string | Buffer): Promise<void> {
  await beginData(client, 'sender@example.com', ['rcpt@example.net']);
  await client.write(partial);
}

/** A whole transaction: `data` (ending in CRLF) and the final dot; the reply to the dot. */
async function transaction(client: RawSmtp, data: string): Promise<string> {
  await openData(client, `${data}.\r\n`);
  return replyText(await client.reply());
}

const QUEUED = /^250 2\.0\.0 Ok: queued as \S+$/;

const subjectOf = (raw: Buffer): string | undefined => /\r\nSubject: (.*)\r\n/.exec(raw.toString())?.[1];

/** Dispatches and waits until the sink got the message with `subject`; exactly one such. */
async function relayedMessage(s: Scenario, subject: string): Promise<SinkMessage> {
  await s.fx.settle();
  const matching = () => s.sink.messages.filter((m) => subjectOf(m.raw) === subject);
  await eventually(() => matching().length > 0, `the sink to receive "${subject}"`);
  expect(matching()).toHaveLength(1);
  return matching()[0] as SinkMessage;
}

/**
 * The daemon still works: a fresh client gets a message queued and it reaches the
 * sink; the store then holds exactly `before + 1` messages and no spool.
 */
async function expectStillWorks(s: Scenario, subject: string): Promise<void> {
  const before = s.counts().messages;
  const client = await session(s);
  expect(await transaction(client, content(subject))).toMatch(QUEUED);
  expect(replyText(await client.command('QUIT'))).toBe('221 2.0.0 Bye');
  await relayedMessage(s, subject);
  expect(s.counts()).toEqual({ messages: before + 1, spools: 0 });
}

/** A body of `bytes` in 78-character lines: big enough to be spooled past 512 KiB. */
function bulk(bytes: number): string {
  const line = `${'x'.repeat(76)}\r\n`;
  return line.repeat(Math.ceil(bytes / line.length));
}

/** Sends `line` and returns the reply as one line of text. */
const say = async (client: RawSmtp, line: string): Promise<string> => replyText(await client.command(line));
const texts = (replies: SmtpReplyLine[]): string[] => replies.map(replyText);
const TOO_MANY = '421 Too many connections from your address; try again later';
const DATA_TIMEOUT = '421 4.4.2 Message transfer took too long; closing';
const IDLE_TIMEOUT = '421 4.4.2 Timeout - closing connection';

describe('SMTP protocol abuse', () => {
  let s: Scenario;
  beforeAll(async () => {
    s = await startScenario(
      'data_timeout_seconds = 2\nmax_connections_per_client = 1000\nmax_header_bytes = 2048\nmax_recipients = 3',
    );
  });
  afterEach(() => {
    expect(s.unexpectedErrors()).toEqual([]);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('answers 64 KB of random bytes with nine 500s, then 421 and a closed connection', async () => {
    const client = await openRawSmtp(s.port);
    expect((await client.reply()).code).toBe(220);
    await client.write(randomBytes(64 * 1024));
    // smtp-server gives up at the tenth unrecognized line (random lines average 256 bytes).
    expect(texts(await client.untilClosed())).toEqual([
      ...Array(9).fill('500 5.5.2 Error: command not recognized'),
      '421 4.4.2 Error: too many unrecognized commands',
    ]);
    await expectStillWorks(s, 'after random bytes');
  });

  it('answers 10 KB command lines with 501 and keeps the session; closes on a line past 16 KB with 421', async () => {
    const client = await session(s);
    expect(await say(client, `EHLO ${'h'.repeat(10 * 1024)}`)).toBe('501 Error: Bad hostname syntax');
    expect(await say(client, `MAIL FROM:<${'a'.repeat(10 * 1024)}@example.com>`)).toBe(
      '501 5.1.7 Error: Bad sender address syntax',
    );
    expect(await say(client, `RCPT TO:<${'b'.repeat(10 * 1024)}@example.net>`)).toBe(
      '501 5.1.3 Error: Bad recipient address syntax',
    );
    expect(await say(client, `NOOP ${'n'.repeat(10 * 1024)}`)).toBe('250 2.0.0 OK');
    // smtp-server's own limit is 16 KB per command line; past it the connection ends.
    await client.write(`NOOP ${'n'.repeat(20 * 1024)}\r\n`);
    expect(texts(await client.untilClosed())).toEqual(['421 4.4.2 Error: Command line too long']);
    await expectStillWorks(s, 'after long lines');
  });

  it('takes commands and DATA content with bare LF line endings, stores the content as sent and relays it with CRLF', async () => {
    const before = s.counts().messages;
    const client = await openRawSmtp(s.port);
    expect((await client.reply()).code).toBe(220);
    await client.write(
      `EHLO bare-lf.test\nAUTH PLAIN ${plainAuth('acme', s.key)}\nMAIL FROM:<sender@example.com>\nRCPT TO:<rcpt@example.net>\nDATA\n`,
    );
    const [ehlo, ...rest] = await client.replies(5);
    expect(ehlo?.code).toBe(250);
    expect(texts(rest)).toEqual([
      '235 2.7.0 Authentication successful',
      '250 2.1.0 Accepted',
      '250 2.1.5 Accepted',
      '354 End data with <CR><LF>.<CR><LF>',
    ]);
    // Bare LF inside the content is content; only CRLF.CRLF ends DATA (RFC 5321 §4.1.1.4).
    await client.write(
      'From: sender@example.com\nTo: rcpt@example.net\nSubject: bare lf\n\nline one\nline two\r\n.\r\n',
    );
    expect(replyText(await client.reply())).toMatch(QUEUED);
    expect(await say(client, 'QUIT')).toBe('221 2.0.0 Bye');
    expect(s.rawOf('bare lf').toString()).toMatch(
      /\r\nFrom: sender@example\.com\nTo: rcpt@example\.net\nSubject: bare lf\n\nline one\nline two\r\n$/,
    );
    const relayed = (await relayedMessage(s, 'bare lf')).raw.toString();
    // The relay client (nodemailer) writes CRLF on the wire (RFC 5321 §2.3.8).
    expect(relayed).toMatch(/\r\nSubject: bare lf\r\n\r\nline one\r\nline two\r\n$/);
    expect(s.counts()).toEqual({ messages: before + 1, spools: 0 });
  });

  it('does not end DATA on a bare LF dot: the transfer times out with 421 4.4.2 and nothing is stored', async () => {
    const before = s.counts();
    const abandoned = s.abandoned();
    const client = await session(s);
    await openData(client, `${content('bare lf dot').replace(/\r\n/g, '\n')}\n.\n`);
    expect(texts(await client.untilClosed())).toEqual([DATA_TIMEOUT]);
    await eventually(() => s.abandoned() === abandoned + 1, 'the daemon to drop the transfer');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after bare lf dot');
  });

  it('answers 1000 pipelined NOOPs in one write with 1000 replies', async () => {
    const client = await session(s);
    await client.write('NOOP\r\n'.repeat(1000));
    expect(texts(await client.replies(1000))).toEqual(Array(1000).fill('250 2.0.0 OK'));
    expect(await say(client, 'QUIT')).toBe('221 2.0.0 Bye');
  });

  it('answers 1000 pipelined MAIL/RCPT/bad RCPT/RSET commands in order, and stores nothing', async () => {
    const before = s.counts();
    const client = await session(s);
    const round = ['MAIL FROM:<sender@example.com>', 'RCPT TO:<rcpt@example.net>', 'RCPT TO:<not-a-mailbox>', 'RSET'];
    await client.write(
      round
        .map((line) => `${line}\r\n`)
        .join('')
        .repeat(250),
    );
    const expected = [
      '250 2.1.0 Accepted',
      '250 2.1.5 Accepted',
      '501 5.1.3 Error: Bad recipient address syntax',
      '250 2.0.0 Flushed',
    ];
    expect(texts(await client.replies(1000))).toEqual(Array.from({ length: 1000 }, (_, i) => expected[i % 4]));
    expect(await say(client, 'QUIT')).toBe('221 2.0.0 Bye');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after pipelining');
  });

  it('takes a whole transaction and QUIT pipelined in one write', async () => {
    const before = s.counts();
    const client = await session(s);
    await client.write(
      `MAIL FROM:<sender@example.com>\r\nRCPT TO:<rcpt@example.net>\r\nDATA\r\n${content('pipelined')}.\r\nQUIT\r\n`,
    );
    const replies = texts(await client.untilClosed());
    expect(replies).toEqual([
      '250 2.1.0 Accepted',
      '250 2.1.5 Accepted',
      '354 End data with <CR><LF>.<CR><LF>',
      expect.stringMatching(QUEUED),
      '221 2.0.0 Bye',
    ]);
    await relayedMessage(s, 'pipelined');
    expect(s.counts()).toEqual({ messages: before.messages + 1, spools: 0 });
  });

  it('answers a client that stalls in the middle of DATA with 421 4.4.2 after data_timeout and stores nothing', async () => {
    const before = s.counts();
    const abandoned = s.abandoned();
    const client = await session(s);
    await openData(client, content('stalled', 'half a bo'));
    expect(texts(await client.untilClosed())).toEqual([DATA_TIMEOUT]);
    await eventually(() => s.abandoned() === abandoned + 1, 'the daemon to drop the transfer');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after a stall');
  });

  it('removes the spool of a 600 KB message whose client stalls before the final dot', async () => {
    const before = s.counts();
    const abandoned = s.abandoned();
    const client = await session(s);
    await openData(client, content('stalled big', bulk(600 * 1024)));
    // Past 512 KiB the message is written to the spool while it arrives.
    await eventually(() => s.counts().spools === 1, 'the spool to be written');
    expect(texts(await client.untilClosed())).toEqual([DATA_TIMEOUT]);
    await eventually(() => s.abandoned() === abandoned + 1, 'the daemon to drop the transfer');
    await eventually(() => s.counts().spools === 0, 'the spool to be removed');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after a stalled big message');
  });

  it('stores nothing when the client disconnects in the middle of DATA', async () => {
    const before = s.counts();
    const abandoned = s.abandoned();
    const client = await session(s);
    await openData(client, content('vanished', 'half a bo'));
    client.destroy();
    await eventually(() => s.abandoned() === abandoned + 1, 'the daemon to drop the transfer');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after a disconnect');
  });

  it('removes the spool of a 600 KB message whose client disconnects before the final dot', async () => {
    const before = s.counts();
    const abandoned = s.abandoned();
    const client = await session(s);
    await openData(client, content('vanished big', bulk(600 * 1024)));
    await eventually(() => s.counts().spools === 1, 'the spool to be written');
    client.destroy();
    await eventually(() => s.abandoned() === abandoned + 1, 'the daemon to drop the transfer');
    await eventually(() => s.counts().spools === 0, 'the spool to be removed');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after a vanished big message');
  });

  it('refuses a header section larger than max_header_bytes that arrives in several chunks with 552 5.3.4', async () => {
    const before = s.counts();
    const client = await session(s);
    // 256 KB of header fields: the socket delivers them in several chunks, the first ones without the empty line.
    const bomb = Array.from({ length: 4096 }, (_, i) => `X-Bomb-${i}: ${'b'.repeat(52)}\r\n`).join('');
    expect(await transaction(client, `${bomb}${content('header bomb')}`)).toBe(
      '552 5.3.4 Header section exceeds 2048 bytes',
    );
    expect(s.counts()).toEqual(before);
    // The same session goes on: the next message is taken.
    expect(await transaction(client, content('after header bomb'))).toMatch(QUEUED);
    expect(s.counts()).toEqual({ messages: before.messages + 1, spools: 0 });
  });

  it('refuses a 7 KB header section (max_header_bytes 2048) that arrives in one write with 552 5.3.4', async () => {
    const before = s.counts();
    const client = await session(s);
    const bomb = Array.from({ length: 100 }, (_, i) => `X-Bomb-${i}: ${'b'.repeat(60)}\r\n`).join('');
    expect(await transaction(client, `${bomb}${content('small header bomb')}`)).toBe(
      '552 5.3.4 Header section exceeds 2048 bytes',
    );
    expect(s.counts()).toEqual(before);
  });

  it('answers 452 4.5.3 to the recipient past max_recipients and sends to the first three only', async () => {
    const client = await session(s);
    expect(await say(client, 'MAIL FROM:<sender@example.com>')).toBe('250 2.1.0 Accepted');
    for (const n of [1, 2, 3]) expect(await say(client, `RCPT TO:<r${n}@example.net>`)).toBe('250 2.1.5 Accepted');
    expect(await say(client, 'RCPT TO:<r4@example.net>')).toBe('452 4.5.3 Too many recipients (at most 3 per message)');
    expect(await say(client, 'DATA')).toBe('354 End data with <CR><LF>.<CR><LF>');
    await client.write(`${content('three recipients')}.\r\n`);
    expect(replyText(await client.reply())).toMatch(QUEUED);
    expect((await relayedMessage(s, 'three recipients')).rcptTo).toEqual([
      'r1@example.net',
      'r2@example.net',
      'r3@example.net',
    ]);
  });

  it('answers MAIL without AUTH with 530 5.7.0 and a wrong key with 535 5.7.8', async () => {
    const before = s.counts();
    const client = await session(s, true);
    expect(await say(client, 'MAIL FROM:<sender@example.com>')).toBe('530 5.7.0 Authentication required');
    expect(await say(client, 'RCPT TO:<rcpt@example.net>')).toBe('503 5.5.1 Error: need MAIL command');
    expect(await say(client, 'DATA')).toBe('503 5.5.1 Error: need RCPT command');
    expect(await say(client, `AUTH PLAIN ${plainAuth('acme', `${s.key}x`)}`)).toBe(
      '535 5.7.8 Authentication credentials invalid',
    );
    expect(await say(client, `AUTH PLAIN ${plainAuth('other-tenant', s.key)}`)).toBe(
      '535 5.7.8 Authentication credentials invalid',
    );
    expect(await say(client, 'AUTH PLAIN !!!not-base64')).toBe('501 5.5.4 Error: invalid userdata');
    expect(await say(client, 'MAIL FROM:<sender@example.com>')).toBe('530 5.7.0 Authentication required');
    expect(await say(client, 'QUIT')).toBe('221 2.0.0 Bye');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after failed auth');
  });

  it('greets 500 simultaneous connections, keeps taking mail meanwhile, and lets each QUIT', async () => {
    const clients = await Promise.all(Array.from({ length: 500 }, () => openRawSmtp(s.port)));
    const greetings = await Promise.all(clients.map((client) => client.reply(10_000)));
    expect(greetings.filter((reply) => reply.code === 220)).toHaveLength(500);
    await expectStillWorks(s, 'beside 500 connections');
    await Promise.all(clients.map((client) => client.write('QUIT\r\n')));
    const farewells = await Promise.all(clients.map((client) => client.untilClosed(10_000)));
    expect(farewells.map((replies) => texts(replies).join())).toEqual(Array(500).fill('221 2.0.0 Bye'));
    await expectStillWorks(s, 'after 500 connections');
  });
});

describe('SMTP protocol abuse: idle clients, per-client limit, AUTH throttle', () => {
  let s: Scenario;
  beforeAll(async () => {
    s = await startScenario('command_timeout_seconds = 2\nmax_connections_per_client = 5\nauth_max_failures = 3');
  });
  afterEach(() => {
    expect(s.unexpectedErrors()).toEqual([]);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('closes a client idle after the greeting with 421 4.4.2 after command_timeout', async () => {
    const client = await openRawSmtp(s.port);
    expect((await client.reply()).code).toBe(220);
    expect(texts(await client.untilClosed())).toEqual([IDLE_TIMEOUT]);
    await expectStillWorks(s, 'after an idle client');
  });

  it('closes a client idle in the middle of a 600 KB DATA with 421 4.4.2 and removes its spool', async () => {
    const before = s.counts();
    const abandoned = s.abandoned();
    const client = await session(s);
    await openData(client, content('idle big', bulk(600 * 1024)));
    await eventually(() => s.counts().spools === 1, 'the spool to be written');
    expect(texts(await client.untilClosed())).toEqual([IDLE_TIMEOUT]);
    await eventually(() => s.abandoned() === abandoned + 1, 'the daemon to drop the transfer');
    await eventually(() => s.counts().spools === 0, 'the spool to be removed');
    expect(s.counts()).toEqual(before);
    await expectStillWorks(s, 'after an idle big message');
  });

  it('refuses the 6th connection from one address with 421 and closes it; takes a new one once a slot is free', async () => {
    const clients = await Promise.all(Array.from({ length: 5 }, () => openRawSmtp(s.port)));
    expect((await Promise.all(clients.map((client) => client.reply()))).map((reply) => reply.code)).toEqual(
      Array(5).fill(220),
    );
    // Refused in place of the greeting, so without an enhanced status (RFC 2034: only after EHLO).
    expect(texts(await (await openRawSmtp(s.port)).untilClosed())).toEqual([TOO_MANY]);

    const [first, ...rest] = clients as [RawSmtp, ...RawSmtp[]];
    expect(await say(first, 'QUIT')).toBe('221 2.0.0 Bye');
    await first.untilClosed();
    // The daemon frees the slot once it has seen the close: retry until it has.
    let greeted: RawSmtp | undefined;
    for (let attempt = 0; greeted === undefined && attempt < 50; attempt += 1) {
      const next = await openRawSmtp(s.port);
      const reply = await next.reply();
      if (reply.code === 220) greeted = next;
      else expect(replyText(reply)).toBe(TOO_MANY);
    }
    if (greeted === undefined) throw new Error('no slot was freed after a QUIT');
    for (const client of [...rest, greeted]) expect(await say(client, 'QUIT')).toBe('221 2.0.0 Bye');
    await Promise.all([...rest, greeted].map((client) => client.untilClosed()));
    await expectStillWorks(s, 'after the per-client limit');
  });

  it('answers AUTH with 454 4.7.0 after auth_max_failures wrong keys, even with the right key, until the window passes', async () => {
    const client = await session(s, true);
    for (const attempt of [1, 2, 3]) {
      expect(await say(client, `AUTH PLAIN ${plainAuth('acme', `wrong-${attempt}`)}`)).toBe(
        '535 5.7.8 Authentication credentials invalid',
      );
    }
    const throttled = '454 4.7.0 Too many failed authentications from your address; try again in 300 s';
    expect(await say(client, `AUTH PLAIN ${plainAuth('acme', s.key)}`)).toBe(throttled);
    const other = await session(s, true);
    expect(await say(other, `AUTH PLAIN ${plainAuth('acme', s.key)}`)).toBe(throttled);
    s.fx.clock.advance(300_000);
    expect(await say(client, `AUTH PLAIN ${plainAuth('acme', s.key)}`)).toBe('235 2.7.0 Authentication successful');
    for (const c of [client, other]) expect(await say(c, 'QUIT')).toBe('221 2.0.0 Bye');
    await expectStillWorks(s, 'after the auth throttle');
  });
});
