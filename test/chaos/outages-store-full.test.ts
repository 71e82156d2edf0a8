/**
 * The database full (the `max_database_mb` cap, SQLite's max_page_count, as a
 * full disk would be), then room made through the API, without a restart.
 * test/smtp/store-full.test.ts proves a refused SMTP message leaves no spooled
 * part, test/http/store-unavailable.test.ts that a locked store refuses a whole
 * commit group; here: intake refused only while nothing fits, and accepted
 * again once room is made, with nothing accepted lost. (Outcomes the store
 * refuses are kept and recorded later: src/delivery/outcome-batcher.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectEachOnce, expectServing } from '../helpers/outage-checks.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const withBody = (id: string, bytes: number) => message(id, { body: `${id} `.padEnd(bytes, 'x') });

async function fullStore(): Promise<{ fx: QueueFixture; sink: SmtpSink; key: string; fillerKey: string }> {
  const sink = await startSmtpSink();
  // Bodies kept in the database (no body store), so that the fillers fill it.
  const fx = await startQueueFixture({ extraToml: 'max_database_mb = 3\n[storage]\nbackend = "database"\n' });
  cleanups.push(
    async () => sink.stop(),
    async () => {
      await fx.stop();
      fx.t.cleanup();
    },
  );
  const key = await fx.createTenant('acme');
  await fx.createAccount('acme', 'main', sink, { is_default: true });
  // The filler's mail is held: it takes room and is never sent.
  const fillerKey = await fx.createTenant('filler');
  await fx.createAccount('filler', 'main', sink, { is_default: true });
  await fx.admin('POST', '/commands/suspend', { tenant_id: 'filler' });
  return { fx, sink, key, fillerKey };
}

/** Posts filler messages of each size until one is refused; answers the ids kept. */
async function fill(fx: QueueFixture, fillerKey: string, sizes: number[]): Promise<string[]> {
  const kept: string[] = [];
  for (const size of sizes) {
    for (let index = 0; index < 200; index += 1) {
      const id = `fill-${size}-${index}`;
      const answer = await fx.post(fillerKey, [withBody(id, size)]);
      if (answer.status === 200) {
        kept.push(id);
        continue;
      }
      expect(answer.status, answer.text).toBe(503);
      expect(answer.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE', details: { reason: 'SQLITE_FULL' } } });
      break;
    }
  }
  return kept;
}

async function smtpReply(fx: QueueFixture, key: string, id: string, bodyBytes: number): Promise<string> {
  const session = await openSubmission(fx.t.daemon.smtp?.plain?.port ?? 0);
  try {
    await session.login('acme', key);
    const raw = `From: sender@example.com\r\nTo: rcpt@example.net\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\n${'y'.repeat(bodyBytes)}\r\n`;
    return String((await session.send({ from: 'sender@example.com', to: ['rcpt@example.net'] }, raw)).response);
  } catch (error) {
    return replyOf(error);
  } finally {
    session.close();
  }
}

const deleteFiller = (fx: QueueFixture, ids: string[]) =>
  fx.admin('POST', '/commands/delete-messages', { tenant_id: 'filler', ids });

describe('the store full, then room made', () => {
  it('refuses intake (HTTP 503 STORE_UNAVAILABLE, SMTP 451 4.3.0) only while nothing fits, and accepts again once messages are deleted', async () => {
    const { fx, sink, key, fillerKey } = await fullStore();
    const kept = await fill(fx, fillerKey, [100 * 1024]);
    expect(kept.length).toBeGreaterThan(5);

    // Truly full for a message of that size: both doors refuse it, again and again, and keep nothing.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const refused = await fx.post(key, [withBody(`big-${attempt}`, 100 * 1024)]);
      expect(refused.status).toBe(503);
      expect(await smtpReply(fx, key, `smtp-big-${attempt}`, 100 * 1024)).toMatch(/^451 4\.3\.0 /);
    }
    await expectServing(fx.t.url, fx.t.adminToken);
    expect((await fx.admin('GET', '/messages?tenant_id=acme')).body.messages).toEqual([]);
    // /status says why: writes refused for want of room, the database at its cap.
    const full = (await fx.admin('GET', '/status')).body.store;
    expect(full).toMatchObject({
      state: 'refusing',
      last_error: { reason: 'SQLITE_FULL' },
      max_bytes: 3 * 1024 * 1024,
    });
    expect(full.used_bytes).toBeGreaterThan(0.9 * full.max_bytes);

    // Room made through the API, no restart: the same sizes are accepted over both doors.
    const deleted = await deleteFiller(fx, kept.slice(0, 4));
    expect(deleted.body.deleted).toHaveLength(4);
    expect((await fx.post(key, [withBody('big-after', 100 * 1024)])).body).toEqual({
      ok: true,
      queued: 1,
      rejected: [],
    });
    expect((await fx.admin('GET', '/status')).body.store.state).toBe('ok');
    expect(await smtpReply(fx, key, 'smtp-big-after', 100 * 1024)).toMatch(/^250 /);

    await sink.waitForMessages(2, 15_000);
    await expect
      .poll(async () => (await fx.admin('GET', '/messages?tenant_id=acme&status=sent')).body.messages.length)
      .toBe(2);
    expectEachOnce(sink.messages, ['big-after', 'smtp-big-after']);
    // The filler's kept messages are all still there, none lost to the full store.
    const held = (await fx.admin('GET', '/messages?tenant_id=filler&limit=500')).body.messages as Array<{ id: string }>;
    expect(held.map((row) => row.id).sort()).toEqual(kept.slice(4).sort());
  }, 60_000);
});
