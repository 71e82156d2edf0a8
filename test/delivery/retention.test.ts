import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

describe('retention and cleanup remove only what was reported', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let db: Database.Database;
  const DAY_MS = 86_400_000;

  beforeAll(async () => {
    sink = await startSmtpSink();
    fx = await startQueueFixture({ extraToml: '[retention]\nreport_retention_seconds = 86400\n' });
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    await fx.post(key, ['reported-old', 'reported-new', 'unreported', 'bounce-unreported'].map((id) => message(id)));
    await sink.waitForMessages(4);
    await fx.settle();
    // Reporting to the client arrives with its own issue; here the store is told directly what was reported when.
    db = new Database(join(fx.t.dataDir, 'mailproxy.db'));
    const now = fx.clock.now();
    const mark = db.prepare(`UPDATE messages SET reported_at = ?, bounce_at = ?, bounce_reported_at = ? WHERE id = ?`);
    mark.run(now - 2 * DAY_MS, null, null, 'reported-old');
    mark.run(now - 1000, null, null, 'reported-new');
    mark.run(now - 2 * DAY_MS, now - DAY_MS, null, 'bounce-unreported');
  });
  afterAll(async () => {
    db.close();
    await fx.stop();
    fx.t.cleanup();
    await sink.stop();
  });

  const exists = async (id: string): Promise<boolean> =>
    (await fx.admin('GET', `/messages/${id}?tenant_id=acme`)).status === 200;

  it('the retention loop removes reported messages older than report_retention_seconds', async () => {
    await fx.t.daemon.retention.tick();
    expect(await exists('reported-old')).toBe(false);
    expect(await exists('reported-new')).toBe(true);
    expect(await exists('unreported')).toBe(true);
    // A bounce not yet reported keeps its message, whatever its age.
    expect(await exists('bounce-unreported')).toBe(true);
  });

  it('cleanup-messages removes reported messages older than asked, for one tenant', async () => {
    const response = await fx.admin('POST', '/commands/cleanup-messages?tenant_id=acme&older_than_seconds=0');
    expect(response.body).toMatchObject({ ok: true, removed: 1 });
    expect(await exists('reported-new')).toBe(false);
    expect(await exists('unreported')).toBe(true);
  });
});
