/**
 * A session of a tenant with no account at all is refused at MAIL FROM, before the client
 * sends a body. A tenant with accounts but no default is not: its legacy clients name the
 * account in the X-Mail-Proxy-Account header, which only DATA carries; a message with
 * neither header nor default is refused after DATA. A named account, or a default, sends.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSession, replyText } from '../helpers/raw-smtp.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const NO_ACCOUNT =
  '550 5.7.1 No sending account: the tenant has no default account; log in as user <tenant>/<account>, name it in an X-Mail-Proxy-Account header, or give the tenant a default account';
const NO_ACCOUNT_AT_ALL =
  '550 5.7.1 No sending account: the tenant has no default account; log in as user <tenant>/<account> (the tenant has no account), name it in an X-Mail-Proxy-Account header, or give the tenant a default account';
const MESSAGE = 'From: app@nodef.example\r\nTo: someone@example.net\r\nSubject: default account\r\n\r\nHello.\r\n';
const ENVELOPE = { from: 'app@nodef.example', to: ['someone@example.net'] };

describe('SMTP submission without a default account', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let port: number;
  let key: string;
  let emptyKey: string;

  const storedMessages = (): number => {
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    try {
      return (db.prepare(`SELECT count(*) AS n FROM messages WHERE tenant_id = 'nodef'`).get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  /** Logs in as `user` with nodemailer's SMTP client and sends one message; answers the final reply or the refusal. */
  const submit = async (user: string, message = MESSAGE, password = key): Promise<string> => {
    const session = await openSubmission(port);
    try {
      await session.login(user, password);
      return String((await session.send(ENVELOPE, message)).response);
    } catch (error) {
      return replyOf(error);
    } finally {
      session.close();
    }
  };

  beforeAll(async () => {
    sink = await startSmtpSink();
    fx = await startQueueFixture();
    port = fx.t.daemon.smtp?.plain?.port ?? 0;
    key = await fx.createTenant('nodef');
    emptyKey = await fx.createTenant('noaccount');
    await fx.createAccount('nodef', 'a1', sink, { is_default: false });
    await fx.createAccount('nodef', 'a2', sink);
  });
  afterAll(async () => {
    await fx?.stop();
    fx?.t.cleanup();
    await sink?.stop();
  });

  it('refuses MAIL FROM of a tenant with no account at all, so a pipelining client is never asked for the body', async () => {
    const client = await openSession(port, { user: 'noaccount', password: emptyKey });
    try {
      // PIPELINING (RFC 2920): the whole envelope and DATA in one write, as a client in a hurry sends them.
      await client.write('MAIL FROM:<app@nodef.example>\r\nRCPT TO:<someone@example.net>\r\nDATA\r\n');
      const replies = await client.replies(3);
      expect(replyText(replies[0] ?? { code: 0, text: '', lines: [] })).toBe(NO_ACCOUNT_AT_ALL);
      // RCPT and DATA: 503, no MAIL transaction. No 354: the server never asks for the message.
      expect(replies.map((reply) => reply.code)).toEqual([550, 503, 503]);
    } finally {
      client.destroy();
    }
  });

  it('sends through the account an X-Mail-Proxy-Account header names when the tenant has no default', async () => {
    const reply = await submit('nodef', `X-Mail-Proxy-Account: a2\r\n${MESSAGE}`);
    expect(reply).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const id = /queued as (\S+)/.exec(reply)?.[1] ?? '';
    expect((await fx.detail('nodef', id)).message.account_id).toBe('a2');
    expect(storedMessages()).toBe(1);
  });

  it('refuses a message that names no account when the tenant has no default, and stores nothing', async () => {
    expect(await submit('nodef')).toBe(NO_ACCOUNT);
    expect(storedMessages()).toBe(1);
  });

  it('sends through the account the user names', async () => {
    expect(await submit('nodef/a2')).toMatch(/^250 2\.0\.0 Ok: queued as /);
    expect(storedMessages()).toBe(2);
  });

  it('sends through the default account once the tenant has one', async () => {
    const marked = await fx.admin('POST', '/account', {
      id: 'a1',
      tenant_id: 'nodef',
      host: '127.0.0.1',
      port: sink.port,
      tls_mode: 'none',
      is_default: true,
    });
    expect(marked.status, marked.text).toBe(200);
    const reply = await submit('nodef');
    expect(reply).toMatch(/^250 2\.0\.0 Ok: queued as /);
    const id = /queued as (\S+)/.exec(reply)?.[1] ?? '';
    expect((await fx.detail('nodef', id)).message.account_id).toBe('a1');
  });
});
