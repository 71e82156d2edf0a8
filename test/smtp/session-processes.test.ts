/**
 * SMTP sessions in processes of their own (`[smtp] session_processes`): what
 * only this mode can get wrong. The rest of test/smtp runs in this mode too
 * (vitest.config.ts, project "smtp in session processes").
 * - Connections are counted per client over every process.
 * - A process that dies is replaced, and nothing of the message it was
 *   receiving is kept (no message, no spool).
 * - A large message crosses to the daemon part by part and is relayed byte for byte.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { beginData, openRawSmtp, openSession, replyText, type RawSmtp } from '../helpers/raw-smtp.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { spoolFiles, storedBody, storedPersonal } from '../helpers/stored-body.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const PROCESSES = 2;

/** This test process's children that run SMTP sessions (the daemon runs in this process). */
function sessionProcesses(): number[] {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .split(' ')
    .filter(Boolean)
    .map(Number);
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('sessions.process.js');
    } catch {
      return false;
    }
  });
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

describe('SMTP sessions in processes of their own', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let key: string;
  let port: number;

  beforeAll(async () => {
    sink = await startSmtpSink();
    fx = await startQueueFixture({
      env: {
        MAILPROXY_SMTP_SESSION_PROCESSES: String(PROCESSES),
        MAILPROXY_SMTP_MAX_CONNECTIONS_PER_CLIENT: '3',
      },
    });
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    port = fx.t.daemon.smtp?.plain?.port ?? 0;
  });
  afterAll(async () => {
    await fx?.stop();
    fx?.t.cleanup();
    await sink?.stop();
  });

  it('runs the configured number of processes, and says so in GET /status', async () => {
    expect(sessionProcesses()).toHaveLength(PROCESSES);
    const status = (await fx.admin('GET', '/status')).body;
    expect(status.threads).toEqual({ parser: true, smtp_sessions: { configured: PROCESSES, running: PROCESSES } });
    expect((await fx.admin('GET', '/ready')).body.checks).toMatchObject({ smtp_sessions: 'ok' });
  });

  it('relays a message larger than what a session holds in memory, byte for byte', async () => {
    // Past 512 KiB a message goes to the daemon's spool part by part as it arrives.
    const body = `${'0123456789abcdef'.repeat(63)}\r\n`.repeat(1500);
    const raw = `From: app@acme.example\r\nTo: someone@example.net\r\nSubject: large\r\nX-Genro-Mail-ID: large-1\r\n\r\n${body}`;
    const session = await openSubmission(port);
    await session.login('acme', key);
    const info = await session.send({ from: 'app@acme.example', to: ['someone@example.net'] }, raw);
    session.close();
    expect(info.response).toBe('250 2.0.0 Ok: queued as large-1');
    await fx.settle();
    await sink.waitForMessages(1, 10_000);
    const relayed = sink.messages.find((m) => m.raw.includes('X-Genro-Mail-ID: large-1'))?.raw ?? Buffer.alloc(0);
    expect(sha256(relayed.subarray(relayed.indexOf('\r\n\r\n') + 4))).toBe(sha256(body));
  });

  it('stores a message it received sealed where it was received: its bytes and envelope open, search finds it', async () => {
    // Under 512 KiB a message crosses whole: the session process seals it before it goes to the daemon.
    const raw =
      'From: app@acme.example\r\nTo: sealed-rcpt@example.net\r\nSubject: quarterly figures\r\n' +
      'X-Genro-Mail-ID: sealed-1\r\n\r\nthe figures are in\r\n';
    const session = await openSubmission(port);
    await session.login('acme', key);
    const info = await session.send({ from: 'app@acme.example', to: ['sealed-rcpt@example.net'] }, raw);
    session.close();
    expect(info.response).toBe('250 2.0.0 Ok: queued as sealed-1');
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    try {
      const row = db.prepare(`SELECT source, raw, payload FROM messages WHERE id = 'sealed-1'`).get();
      expect(row).toEqual({ source: 'smtp', raw: null, payload: null });
      // As received, under the Received line the daemon adds.
      const stored = storedBody(db, { dataDir: fx.t.dataDir }, `id = 'sealed-1'`)?.toString() ?? '';
      expect(stored.startsWith('Received: ')).toBe(true);
      expect(stored.endsWith(raw)).toBe(true);
      const envelope = storedPersonal(db, { dataDir: fx.t.dataDir }).find((fields) => fields.id === 'sealed-1');
      expect(envelope).toMatchObject({
        mailFrom: 'app@acme.example',
        rcptTo: ['sealed-rcpt@example.net'],
        subject: 'quarterly figures',
      });
    } finally {
      db.close();
    }
    await fx.settle();
    await fx.t.daemon.searchIndex.tick();
    const found = await fx.admin('GET', '/messages?tenant_id=acme&q=quarterly');
    expect(found.body.messages.map((message: { id: string }) => message.id)).toContain('sealed-1');
    await sink.waitForMessages(1, 10_000);
    const relayed = sink.messages.find((m) => m.raw.includes('X-Genro-Mail-ID: sealed-1'))?.raw;
    expect(relayed?.toString()).toContain('the figures are in\r\n');
  });

  it('replaces a process that dies, keeping nothing of the message it was receiving', async () => {
    const before = sessionProcesses();
    const sessions = await Promise.all([1, 2].map(() => openSession(port, { user: 'acme', password: key })));
    for (const session of sessions) {
      await beginData(session, 'app@acme.example', ['someone@example.net']);
      // More than a session holds in memory: parts of it are in the daemon's spool already.
      await session.write(`Subject: cut\r\nX-Genro-Mail-ID: cut-off\r\n\r\n${`${'x'.repeat(998)}\r\n`.repeat(700)}`);
    }
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    // Spools no message took: in the database, and beside the body store (which the daemon uses by default).
    const unclaimed = db.prepare(
      `SELECT count(*) FROM spools WHERE id NOT IN (SELECT spool_id FROM messages WHERE spool_id IS NOT NULL)`,
    );
    const abandoned = () => (unclaimed.pluck().get() as number) + spoolFiles(fx.t.dataDir);
    await expect.poll(abandoned).toBe(sessions.length);
    for (const pid of before) process.kill(pid, 'SIGKILL');
    for (const session of sessions) {
      const heard = await session.untilClosed(10_000).catch(() => []);
      expect(heard.map(replyText).filter((text) => text.startsWith('250'))).toEqual([]);
    }

    await expect.poll(() => sessionProcesses().filter((pid) => !before.includes(pid)).length).toBe(PROCESSES);
    const status = (await fx.admin('GET', '/status')).body;
    expect(status.threads.smtp_sessions).toEqual({ configured: PROCESSES, running: PROCESSES });
    const metrics = (await fx.admin('GET', '/metrics')).text;
    expect(metrics).toMatch(new RegExp(`^mailproxy_smtp_session_processes_lost_total ${before.length}$`, 'm'));
    const session = await openSubmission(port);
    await session.login('acme', key);
    const info = await session.send(
      { from: 'app@acme.example', to: ['someone@example.net'] },
      'From: app@acme.example\r\nSubject: after\r\nX-Genro-Mail-ID: after-1\r\n\r\nstill here\r\n',
    );
    session.close();
    expect(info.response).toBe('250 2.0.0 Ok: queued as after-1');

    try {
      expect(db.prepare(`SELECT count(*) FROM messages WHERE id = 'cut-off'`).pluck().get()).toBe(0);
      // The spools the dead processes had filled were discarded when the daemon saw them exit,
      // before it started the replacements; the relayed large message's went to the body store.
      expect(abandoned()).toBe(0);
      expect(db.prepare(`SELECT count(*) FROM spools`).pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });

  it('never accepts a message for an account deleted after the session last passed MAIL FROM', async () => {
    // A session process does not ask again at the next MAIL FROM of a session within a
    // second; the submission's own check after DATA still refuses what is no longer allowed.
    const betaKey = await fx.createTenant('beta');
    await fx.createAccount('beta', 'only', sink, { is_default: true });
    const session = await openSession(port, { user: 'beta', password: betaKey });
    let final;
    try {
      await beginData(session, 'app@beta.example', ['someone@example.net']);
      await session.write('Subject: first\r\nX-Genro-Mail-ID: beta-1\r\n\r\nfine\r\n.\r\n');
      expect(replyText(await session.reply())).toBe('250 2.0.0 Ok: queued as beta-1');
      // Sent first: an account with mail waiting cannot be deleted.
      await fx.settle();
      expect((await fx.admin('DELETE', '/account/only?tenant_id=beta')).status).toBe(200);

      final = await session.command('MAIL FROM:<app@beta.example>');
      if (final.code === 250) {
        expect((await session.command('RCPT TO:<someone@example.net>')).code).toBe(250);
        expect((await session.command('DATA')).code).toBe(354);
        await session.write('Subject: second\r\nX-Genro-Mail-ID: beta-2\r\n\r\ntoo late\r\n.\r\n');
        final = await session.reply();
      }
    } finally {
      session.destroy();
    }
    expect(replyText(final)).toMatch(/^550 5\.7\.1 No sending account/);
    expect((await fx.admin('GET', '/messages/beta-2?tenant_id=beta')).status).toBe(404);
  });

  // Last: the connections it leaves are uncounted only once their process has told the daemon.
  it('counts the connections of one client over every process', async () => {
    // The earlier tests' connections too are uncounted only once their process has told the daemon:
    // until then fewer than three are admitted, and those are closed for the next try.
    let open: RawSmtp[] = [];
    await expect
      .poll(async () => {
        const tries = await Promise.allSettled([1, 2, 3].map(() => openSession(port, { user: 'acme', password: key })));
        open = tries.flatMap((tried) => (tried.status === 'fulfilled' ? [tried.value] : []));
        if (open.length === 3) return true;
        for (const session of open) session.destroy();
        return false;
      })
      .toBe(true);
    const fourth = await openRawSmtp(port);
    expect(replyText(await fourth.reply())).toMatch(/^421 /);
    fourth.destroy();
    open[0]?.destroy();
    // The closed connection is uncounted once its process has told the daemon.
    await expect
      .poll(async () => {
        const again = await openRawSmtp(port);
        const greeting = await again.reply();
        again.destroy();
        return greeting.code;
      })
      .toBe(220);
    for (const session of open) session.destroy();
  });
});
