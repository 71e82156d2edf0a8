import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tearDownPeers } from '../helpers/peer-teardown.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

describe('with [nats] url empty', () => {
  let sink: SmtpSink;
  let fx: QueueFixture;
  afterAll(() => tearDownPeers({ fx, sink }));

  it('runs with no NATS at all, and the outbox shrinks with the messages instead of growing without bound', async () => {
    sink = await startSmtpSink();
    fx = await startQueueFixture({
      extraToml: '[retention]\nreport_retention_seconds = 3600\noutbox_retention_seconds = 86400\n',
    });
    expect((await fx.admin('GET', '/mirror/status')).body.mirror).toMatchObject({ enabled: false, state: 'off' });
    const key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    await fx.post(
      key,
      Array.from({ length: 200 }, (_, index) => message(`b-${index}`)),
    );
    await sink.waitForMessages(200);
    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    const count = (sql: string): unknown => db.prepare(sql).pluck().get();
    try {
      // No endpoint: outcomes are marked reported as they happen.
      await expect.poll(() => count(`SELECT count(*) FROM messages WHERE reported_at IS NOT NULL`)).toBe(200);
      expect(count(`SELECT count(*) FROM outbox WHERE message_pk IS NOT NULL`)).toBe(600);
      // An operator's deletion takes the message's events along, its own `deleted` event included.
      expect(
        (await fx.admin('POST', '/commands/delete-messages', { tenant_id: 'acme', ids: ['b-0'] })).body,
      ).toMatchObject({ deleted: ['b-0'] });
      expect(count(`SELECT count(*) FROM outbox WHERE message_pk IS NOT NULL`)).toBe(597);

      fx.clock.advance(2 * 3600_000);
      await fx.t.daemon.retention.tick();
      expect(count(`SELECT count(*) FROM messages`)).toBe(0);
      // A message's events went with it; the admin events (tenant, account, the deletion request) wait for their own retention.
      expect(count(`SELECT count(*) FROM outbox WHERE message_pk IS NOT NULL`)).toBe(0);
      expect(count(`SELECT event_type FROM outbox ORDER BY seq`)).toBe('tenant.created');
      expect(count(`SELECT count(*) FROM outbox`)).toBe(3);

      fx.clock.advance(2 * 86_400_000);
      await fx.t.daemon.retention.tick();
      expect(count(`SELECT count(*) FROM outbox`)).toBe(0);
    } finally {
      db.close();
    }
  });
});
