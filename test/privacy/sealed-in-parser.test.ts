/**
 * A large /add-messages body is parsed in a parser thread, which seals each payload under a data
 * key of the message's tenant (issue 45): the tenant of the key that sent it, or the one an admin's
 * item names, and its envelope and subject, with their search terms, under another. Stored, each
 * opens to what was sent, bound to its tenant.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { message, startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { storedBody, storedPersonal } from '../helpers/stored-body.js';

describe('payloads sealed in the parser threads', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let key: string;
  beforeAll(async () => {
    sink = await startSmtpSink();
    fx = await startQueueFixture();
    key = await fx.createTenant('acme');
    await fx.createTenant('beta');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    await fx.createAccount('beta', 'main', sink, { is_default: true });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'beta' });
  });
  afterAll(async () => {
    await fx?.stop();
    await sink?.stop();
    fx?.t.cleanup();
  });

  it('stores every message of a large request sealed for its tenant, by a tenant key and by the admin', async () => {
    const filler = 'x'.repeat(1500);
    const byKey = Array.from({ length: 20 }, (_, index) => message(`key-${index}`, { body: `key ${index} ${filler}` }));
    expect((await fx.post(key, byKey)).body.queued).toBe(20);
    const byAdmin = Array.from({ length: 20 }, (_, index) =>
      message(`admin-${index}`, { tenant_id: 'beta', body: `admin ${index} ${filler}` }),
    );
    expect((await fx.post(fx.t.adminToken, byAdmin)).body.queued).toBe(20);

    const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    try {
      for (const [tenant, prefix] of [
        ['acme', 'key'],
        ['beta', 'admin'],
      ] as const)
        for (let index = 0; index < 20; index += 1) {
          const opened = storedBody(
            db,
            { dataDir: fx.t.dataDir },
            'tenant_id = ? AND id = ?',
            tenant,
            `${prefix}-${index}`,
          );
          expect(JSON.parse(opened?.toString() ?? 'null')).toMatchObject({ body: `${prefix} ${index} ${filler}` });
        }
      const keys = db
        .prepare(
          `SELECT tenant_id, count(body_key) AS bodies, count(personal_key) AS envelopes,
             count((SELECT 1 FROM message_bodies b WHERE b.pk = messages.pk)) AS sealed
           FROM messages GROUP BY tenant_id ORDER BY tenant_id`,
        )
        .all();
      // A key for each body, one for each message's envelope and subject, and each body sealed beside its row.
      expect(keys).toEqual([
        { tenant_id: 'acme', bodies: 20, envelopes: 20, sealed: 20 },
        { tenant_id: 'beta', bodies: 20, envelopes: 20, sealed: 20 },
      ]);
      const clear = db
        .prepare(`SELECT count(*) FROM messages WHERE payload IS NOT NULL OR raw IS NOT NULL`)
        .pluck()
        .get();
      expect(clear).toBe(0);
      // Each envelope and subject, sealed in the thread too, opens to what was sent, and search finds it.
      const envelopes = storedPersonal(db, { dataDir: fx.t.dataDir });
      expect(envelopes).toHaveLength(40);
      for (const envelope of envelopes)
        expect(envelope).toMatchObject({
          mailFrom: 'sender@example.com',
          rcptTo: ['rcpt@example.net'],
          subject: `subject ${envelope.id}`,
        });
      await expect
        .poll(
          async () =>
            ((await fx.admin('GET', '/messages?q=subject%20admin-7')).body as { messages: unknown[] }).messages,
        )
        .toEqual([expect.objectContaining({ id: 'admin-7' })]);
    } finally {
      db.close();
    }
  });
});
