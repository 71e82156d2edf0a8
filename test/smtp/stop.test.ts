/**
 * Stopping the daemon with SMTP sessions open: a message in the middle of DATA
 * is finished and committed (its client hears 250, then 421); an idle session
 * hears 421 4.3.2 at once; nobody connects any more.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startQueueFixture } from '../helpers/queue-fixture.js';
import { beginData, openRawSmtp, openSession, replyText } from '../helpers/raw-smtp.js';
import { storedBody } from '../helpers/stored-body.js';

describe('stopping with SMTP sessions open', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('finishes the message being received, says 421 to the idle, and refuses new connections', async () => {
    const fx = await startQueueFixture();
    cleanups.push(() => fx.t.cleanup());
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', { port: 9 }, { is_default: true });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    const port = fx.t.daemon.smtp?.plain?.port ?? 0;

    const idle = await openSession(port, { user: 'acme', password: key });
    const busy = await openSession(port, { user: 'acme', password: key });
    await beginData(busy, 'app@acme.example', ['someone@example.net']);
    await busy.write(
      'From: app@acme.example\r\nSubject: in flight\r\nX-Genro-Mail-ID: in-flight-1\r\n\r\nfirst half\r\n',
    );

    const stopped = fx.t.stop();
    expect(replyText(await idle.reply())).toMatch(/^421 4\.3\.2 /);
    await busy.write('second half\r\n.\r\n');
    expect(replyText(await busy.reply())).toBe('250 2.0.0 Ok: queued as in-flight-1');
    expect(replyText(await busy.reply())).toMatch(/^421 4\.3\.2 /);
    await stopped;

    await expect(openRawSmtp(port)).rejects.toThrow(/ECONNREFUSED/);
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    const stored = db.prepare(`SELECT id FROM messages`).pluck().all();
    const body = storedBody(db, { dataDir: fx.t.dataDir }, `id = 'in-flight-1'`);
    db.close();
    expect(stored).toEqual(['in-flight-1']);
    expect(body?.toString()).toMatch(/first half\r\nsecond half\r\n$/);
  });
});
