/**
 * The database full (the `max_database_mb` cap, SQLite's max_page_count, as a
 * full disk would be), then room made through the API without a restart.
 * test/smtp/store-full.test.ts already proves a refused SMTP message leaves no
 * spooled part behind, and test/http/store-unavailable.test.ts that a locked
 * store refuses a whole commit group; here: refused only while it truly cannot
 * store, accepted again once room is made, and nothing accepted lost or sent twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

const BODY_BYTES = 100 * 1024;
const big = (id: string) => message(id, { body: `${id} `.padEnd(BODY_BYTES, 'x') });

describe('the store full, then room made', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let key: string;

  beforeAll(async () => {
    sink = await startSmtpSink();
    fx = await startQueueFixture({ extraToml: 'max_database_mb = 3\n' });
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
    await sink.stop();
  });

  const smtpSubmit = async (id: string): Promise<string> => {
    const session = await openSubmission(fx.t.daemon.smtp?.plain?.port ?? 0);
    try {
      await session.login('acme', key);
      const raw = `From: sender@example.com\r\nTo: rcpt@example.net\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\n${'y'.repeat(BODY_BYTES)}\r\n`;
      return String((await session.send({ from: 'sender@example.com', to: ['rcpt@example.net'] }, raw)).response);
    } catch (error) {
      return replyOf(error);
    } finally {
      session.close();
    }
  };

  it('explore', async () => {
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    const accepted: string[] = [];
    let refused = null;
    for (let i = 0; i < 60 && refused === null; i++) {
      const r = await fx.post(key, [big(`fill-${i}`)]);
      if (r.status === 200) accepted.push(`fill-${i}`);
      else refused = r;
    }
    console.log(accepted.length, refused?.status, refused?.text);
    console.log(await smtpSubmit('smtp-1'));
    console.log((await api(fx.t.url, 'GET', '/ready')).text);
    console.log(JSON.stringify((await fx.admin('GET', '/status')).body).slice(0, 2000));
    const del = await fx.admin('POST', '/commands/delete-messages', { tenant_id: 'acme', ids: accepted.slice(0, 5) });
    console.log(del.status, del.text);
    const again = await fx.post(key, [big('after-1')]);
    console.log(again.status, again.text);
    const act = await fx.admin('POST', '/commands/activate', { tenant_id: 'acme' });
    console.log(act.status, act.text);
    await new Promise((r) => setTimeout(r, 3000));
    console.log(sink.messages.length);
    console.log(JSON.stringify((await fx.admin('GET', '/status')).body.queue));
    console.log(fx.t.logLines.filter((l) => /"level":(40|50|60)/.test(l)).slice(0, 10).join('\n'));
  }, 60_000);
});
