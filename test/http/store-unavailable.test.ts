import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';

/**
 * Durability under a store that cannot write: another process holds SQLite's
 * write lock (a backup, an operator's CLI). Requests then wait the busy
 * timeout and fail as 503 STORE_UNAVAILABLE; none is answered 200, none of
 * their messages is kept, and the daemon goes on once the lock is released.
 */
describe('when the store cannot write', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let scenario: SinkScenario;
  beforeAll(async () => {
    scenario = await startSinkScenario(cleanups);
    // Held mail only: the dispatcher has nothing to send while the lock is held.
    await scenario.fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
  });
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('answers 503 STORE_UNAVAILABLE to every request of the group, keeps none of their messages, and recovers', async () => {
    const { fx, key } = scenario;
    const other = new Database(join(fx.t.dataDir, 'mailproxy.db'));
    other.exec('BEGIN IMMEDIATE');
    let answers;
    try {
      answers = await Promise.all([
        fx.post(key, [message('locked-1'), message('locked-2')]),
        fx.post(key, [message('locked-3')]),
      ]);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(503);
      expect(answer.body).toMatchObject({ error: { code: 'STORE_UNAVAILABLE' } });
    }
    for (const id of ['locked-1', 'locked-2', 'locked-3']) {
      expect((await api(fx.t.url, 'GET', `/messages/${id}?tenant_id=acme`, { token: fx.t.adminToken })).status).toBe(
        404,
      );
    }

    // The operator sees why in /status, not only in the refused requests.
    const during = (await api(fx.t.url, 'GET', '/status', { token: fx.t.adminToken })).body.store;
    expect(during).toMatchObject({
      state: 'refusing',
      last_error: { reason: 'SQLITE_BUSY', at_ts: expect.any(Number) },
    });
    expect(during.used_bytes).toBeGreaterThan(0);
    const metricsText = async (): Promise<string> =>
      (await fetch(`${fx.t.url}/metrics`, { headers: { authorization: `Bearer ${fx.t.adminToken}` } })).text();
    expect(await metricsText()).toMatch(/^mailproxy_store_refusing_writes 1$/m);
    expect(await metricsText()).toMatch(/^mailproxy_store_used_bytes [1-9]\d*$/m);

    const again = await fx.post(key, [message('after-1')]);
    expect(again.body).toEqual({ ok: true, queued: 1, rejected: [] });
    expect((await api(fx.t.url, 'GET', '/ready')).status).toBe(200);
    const after = (await api(fx.t.url, 'GET', '/status', { token: fx.t.adminToken })).body.store;
    expect(after).toMatchObject({ state: 'ok', last_error: { reason: 'SQLITE_BUSY', at_ts: during.last_error.at_ts } });
    expect(await metricsText()).toMatch(/^mailproxy_store_refusing_writes 0$/m);
  }, 30_000);
});
