import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario, type QueueFixture } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';

const eventTypes = async (fx: QueueFixture, id: string): Promise<string[]> =>
  (await fx.detail('acme', id)).events.map((event) => event.event_type);

function auditOf(fx: QueueFixture): Array<{ actor: string; command: string; params: string }> {
  const db = new Database(join(fx.t.dataDir, 'mailproxy.db'), { readonly: true });
  try {
    return db
      .prepare(`SELECT actor, command, params FROM command_log WHERE command LIKE 'messages.%' ORDER BY seq`)
      .all() as never;
  } finally {
    db.close();
  }
}

describe('POST /commands/retry-now', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('sends a deferred message at once, without waiting for its retry instant', async () => {
    // The relay answers 451 to the first attempt; the test clock is never advanced, so only a retry now sends it.
    let attempts = 0;
    const { fx, sink, key } = await startSinkScenario(cleanups, {
      sink: { onData: () => (++attempts === 1 ? { code: 451, message: '4.7.1 try again later' } : null) },
    });
    // The test clock is real time: the failed attempt comes after this instant, however slow the machine.
    const posted = fx.clock.now();
    await fx.post(key, [message('slow')]);
    await fx.settle();
    const deferred = await fx.detail('acme', 'slow');
    expect(deferred.message.state).toBe('deferred');
    expect(deferred.message.next_attempt_ts).toBeGreaterThanOrEqual(Math.floor(posted / 1000) + 60);
    await fx.settle();
    expect(sink.messages).toHaveLength(0);

    const retried = await api(fx.t.url, 'POST', '/commands/retry-now', {
      token: key,
      body: { ids: ['slow', 'nobody'] },
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ ok: true, retried: ['slow'], not_found: ['nobody'], not_applicable: [] });

    await sink.waitForMessages(1);
    await fx.t.daemon.dispatcher.idle();
    expect((await fx.detail('acme', 'slow')).message.state).toBe('sent');
    expect(await eventTypes(fx, 'slow')).toEqual(['queued', 'sending', 'deferred', 'retry_now', 'sending', 'sent']);
    const audit = auditOf(fx).filter((row) => row.command === 'messages.retry_now');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'tenant:acme' });
    expect(JSON.parse(audit[0]?.params ?? '{}')).toMatchObject({ ids: ['slow'] });
  });

  it('brings a message scheduled by deferred_ts forward, and reports sent or unknown ones as not applicable', async () => {
    const { fx, sink, key } = await startSinkScenario(cleanups);
    const inAnHour = Math.floor(fx.clock.now() / 1000) + 3600;
    await fx.post(key, [message('done'), message('later', { deferred_ts: inAnHour })]);
    await fx.settle();
    await sink.waitForMessages(1);
    expect((await fx.detail('acme', 'later')).message.state).toBe('deferred');

    const retried = await fx.admin('POST', '/commands/retry-now', { tenant_id: 'acme', ids: ['done', 'later'] });
    expect(retried.body).toEqual({ ok: true, retried: ['later'], not_found: [], not_applicable: ['done'] });
    await sink.waitForMessages(2);
    // Once due, a second retry now has nothing to bring forward.
    const again = await fx.admin('POST', '/commands/retry-now', { tenant_id: 'acme', ids: 'later' });
    expect(again.body.not_applicable).toEqual(['later']);
    expect((await eventTypes(fx, 'done')).filter((type) => type === 'retry_now')).toEqual([]);
  });

  it('leaves a message held by a suspension alone', async () => {
    const { fx, key } = await startSinkScenario(cleanups);
    await fx.post(key, [message('held', { deferred_ts: Math.floor(fx.clock.now() / 1000) + 3600, batch_code: 'B' })]);
    await fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'B' });
    const retried = await fx.admin('POST', '/commands/retry-now', { tenant_id: 'acme', ids: ['held'] });
    expect(retried.body.not_applicable).toEqual(['held']);
    expect((await fx.detail('acme', 'held')).message.status).toBe('suspended');
  });

  it("does not reach another tenant's messages", async () => {
    const { fx, key } = await startSinkScenario(cleanups);
    const otherKey = await fx.createTenant('globex');
    await fx.post(key, [message('mine', { deferred_ts: Math.floor(fx.clock.now() / 1000) + 3600 })]);
    const named = await api(fx.t.url, 'POST', '/commands/retry-now', {
      token: otherKey,
      body: { tenant_id: 'acme', ids: ['mine'] },
    });
    expect(named.status).toBe(404);
    const own = await api(fx.t.url, 'POST', '/commands/retry-now', { token: otherKey, body: { ids: ['mine'] } });
    expect(own.body).toEqual({ ok: true, retried: [], not_found: ['mine'], not_applicable: [] });
    expect(await eventTypes(fx, 'mine')).toEqual(['queued']);
    const unnamed = await fx.admin('POST', '/commands/retry-now', { ids: ['mine'] });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.code).toBe('VALIDATION_FAILED');
    for (const ids of ['mine,bad id', '', [], ' , ']) {
      const bad = await fx.admin('POST', '/commands/retry-now', { tenant_id: 'acme', ids });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('VALIDATION_FAILED');
    }
  });
});
