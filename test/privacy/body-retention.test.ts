/**
 * Minimisation by default (issue 45): a final message's body is shredded (its data key destroyed)
 * `retention.body_retention_seconds` after its outcome was reported, never before; the message
 * stays with its status; resending it answers that its body is gone; the erased event is reported
 * to the client for a message erased while it waited.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OK } from '../peers/report-client.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { storedBody } from '../helpers/stored-body.js';
import { api } from '../helpers/test-daemon.js';

const HOUR_MS = 3_600_000;

describe('body retention', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let s: ReportScenario;
  let key: string;
  let answer: 'fail' | 'ok' = 'fail';

  beforeAll(async () => {
    s = await startReportScenario(cleanups, { extraToml: '[retention]\nbody_retention_seconds = 3600\n' });
    s.client.answer(() => (answer === 'ok' ? OK : { status: 500, body: { ok: false } }));
    ({ key } = await s.addTenant('acme', '/acme'));
    await s.fx.post(key, [message('kept-while-unreported', { body: 'the body of a message to keep' })]);
    await s.sink.waitForMessages(1);
    await s.client.waitFor('a refused report', (client) => client.items().some((item) => item.event === 'sent'));
  });
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  const body = (id: string): Buffer | null => {
    const db = new Database(join(s.fx.t.dataDir, 'mailproxy.db'), { readonly: true });
    try {
      return storedBody(db, { dataDir: s.fx.t.dataDir }, 'id = ?', id);
    } finally {
      db.close();
    }
  };
  const detail = async (id: string) => (await s.fx.detail('acme', id)).message;

  it('keeps the body of a message whose outcome the client has not acknowledged, however old', async () => {
    s.fx.clock.advance(5 * HOUR_MS);
    await s.fx.t.daemon.retention.tick();
    expect((await detail('kept-while-unreported')).body_shredded_ts).toBeNull();
    expect(body('kept-while-unreported')?.toString()).toContain('the body of a message to keep');
  });

  it('shreds it body_retention_seconds after the outcome was reported, and a resend then says the body is gone', async () => {
    answer = 'ok';
    await expect
      .poll(async () => (await detail('kept-while-unreported')).reported_ts, { timeout: 5000 })
      .not.toBeNull();
    await s.fx.t.daemon.retention.tick();
    expect((await detail('kept-while-unreported')).body_shredded_ts).toBeNull();

    s.fx.clock.advance(HOUR_MS + 60_000);
    await s.fx.t.daemon.retention.tick();
    const shredded = await detail('kept-while-unreported');
    expect(shredded).toMatchObject({ status: 'sent', id: 'kept-while-unreported' });
    expect(shredded.body_shredded_ts).toEqual(expect.any(Number));
    expect(body('kept-while-unreported')).toBeNull();
    const resend = await api(s.fx.t.url, 'POST', '/commands/resend', {
      token: key,
      body: { ids: ['kept-while-unreported'] },
    });
    expect(resend.body).toMatchObject({ ok: true, resent: [], not_final: [], body_erased: ['kept-while-unreported'] });
  });

  it('reports a message erased while it waited as erased, and never sends it', async () => {
    const later = Math.floor((s.fx.clock.now() + HOUR_MS) / 1000);
    await s.fx.post(key, [message('erased-waiting', { deferred_ts: later })]);
    const erased = await api(s.fx.t.url, 'POST', '/commands/erase', { token: key, body: { ids: ['erased-waiting'] } });
    expect(erased.body).toMatchObject({ erased_messages: 1, stopped_waiting: 1 });
    await s.client.waitFor('the erased item', (client) =>
      client.items().some((item) => item.event === 'erased' && item.id === 'erased-waiting'),
    );
    const item = s.client.items().find((reported) => reported.event === 'erased');
    expect(item).toMatchObject({ tenant_id: 'acme', was_waiting: true, erased_ts: expect.any(Number) });
    // Its report is its outcome's: the tombstone goes with retention like any reported message.
    await expect.poll(async () => (await detail('erased-waiting')).reported_ts, { timeout: 5000 }).not.toBeNull();
    s.fx.clock.advance(2 * HOUR_MS);
    await s.fx.settle();
    expect(s.sink.messages.filter((relayed) => relayed.raw.includes('erased-waiting'))).toEqual([]);
  });
});
