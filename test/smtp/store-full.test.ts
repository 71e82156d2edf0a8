/**
 * A store that cannot take more (the database at its `max_database_mb` cap,
 * SQLite's max_page_count, as a full disk would be): SMTP answers 451 4.3.0,
 * keeps nothing of the refused message (not even spooled parts), and the
 * daemon stays up. Every message answered 250 before is still there.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';

const ENVELOPE = { from: 'app@acme.example', to: ['someone@example.net'] };
const message = (id: string, bodyBytes: number): string =>
  `From: app@acme.example\r\nTo: someone@example.net\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\n${`${'x'.repeat(76)}\r\n`.repeat(Math.ceil(bodyBytes / 78))}`;

describe('SMTP intake when the store is full', () => {
  let fx: QueueFixture;
  let key: string;
  let port: number;

  const rows = (): { messages: string[]; spools: number; parts: number } => {
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    try {
      return {
        messages: (db.prepare('SELECT id FROM messages ORDER BY pk').all() as Array<{ id: string }>).map(
          (row) => row.id,
        ),
        spools: (db.prepare('SELECT count(*) AS n FROM spools').get() as { n: number }).n,
        parts: (db.prepare('SELECT count(*) AS n FROM spool_parts').get() as { n: number }).n,
      };
    } finally {
      db.close();
    }
  };

  const submit = async (id: string, bodyBytes: number): Promise<string> => {
    const session = await openSubmission(port);
    try {
      await session.login('acme', key);
      return String((await session.send(ENVELOPE, message(id, bodyBytes))).response);
    } catch (error) {
      return replyOf(error);
    } finally {
      session.close();
    }
  };

  beforeAll(async () => {
    // Bodies kept in the database (no body store), so that they fill it.
    fx = await startQueueFixture({ extraToml: 'max_database_mb = 3\n[storage]\nbackend = "database"\n' });
    port = fx.t.daemon.smtp?.plain?.port ?? 0;
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', { port: 9 }, { is_default: true });
    // Held: nothing is sent (or written by sending) while the test fills the store.
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
  });

  it('refuses a spooled message that does not fit with 451 4.3.0 and keeps none of its parts', async () => {
    expect(await submit('too-big-for-the-store', 4 * 1024 * 1024)).toMatch(/^451 4\.3\.0 /);
    expect(rows()).toEqual({ messages: [], spools: 0, parts: 0 });
  });

  it('answers 250 until the store is full, then 451 4.3.0; every 250 is kept, no 451 is', async () => {
    const accepted: string[] = [];
    let refused: { id: string; reply: string } | null = null;
    for (let index = 0; index < 40 && refused === null; index += 1) {
      const id = `fill-${index}`;
      const reply = await submit(id, 200 * 1024);
      if (reply.startsWith('250 ')) accepted.push(id);
      else refused = { id, reply };
    }
    expect(refused, 'the 3 MiB cap was never reached').not.toBeNull();
    expect(refused?.reply).toMatch(/^451 4\.3\.0 /);
    expect(accepted.length).toBeGreaterThan(3);
    expect(rows().messages).toEqual(accepted);
    // Up, and saying why it refuses: HTTP intake gets 503 with the stable code.
    expect((await api(fx.t.url, 'GET', '/health')).status).toBe(200);
    const posted = await fx.post(key, [
      { id: 'http-1', from: 'app@acme.example', to: 'someone@example.net', subject: 's', body: 'x'.repeat(300_000) },
    ]);
    expect(posted.status).toBe(503);
    expect(posted.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE' } });
  }, 30_000);
});
