import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';

const commandsLogged = (s: SinkScenario, command: string): number => {
  const db = new Database(join(s.fx.t.dataDir, 'mailproxy.db'), { readonly: true });
  try {
    return db.prepare(`SELECT count(*) FROM command_log WHERE command = ?`).pluck().get(command) as number;
  } finally {
    db.close();
  }
};

describe('POST /commands/bulk', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * acme: three messages the relay refuses for good (error), one sent, two scheduled an hour
   * ahead (waiting); globex: one refused. All on real sinks.
   */
  async function world(): Promise<SinkScenario & { globexKey: string; later: number }> {
    const s = await startSinkScenario(cleanups, {
      sink: { onRcpt: (address) => (address.startsWith('fail') ? { code: 550, message: '5.1.1 no such user' } : null) },
    });
    const globexKey = await s.fx.createTenant('globex');
    await s.fx.createAccount('globex', 'gmain', s.sink, { is_default: true });
    const later = Math.floor(s.fx.clock.now() / 1000) + 3600;
    const failing = (id: string) => message(id, { to: 'fail@example.net', batch_code: 'june' });
    await s.fx.post(s.key, [
      failing('f1'),
      failing('f2'),
      failing('f3'),
      message('ok1'),
      message('w1', { deferred_ts: later }),
      message('w2', { deferred_ts: later }),
    ]);
    await s.fx.post(globexKey, [failing('g1')]);
    await s.fx.settle();
    await s.sink.waitForMessages(1);
    await s.fx.t.daemon.dispatcher.idle();
    return { ...s, globexKey, later };
  }

  it('counts in a dry run what the filter finds and what the action applies to, changing nothing', async () => {
    const s = await world();
    const all = await api(s.fx.t.url, 'POST', '/commands/bulk', {
      token: s.key,
      body: { action: 'resend', dry_run: true },
    });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ ok: true, action: 'resend', dry_run: true, matching: 6, applicable: 4 });
    expect(all.body.sample.map((m: { id: string }) => m.id).sort()).toEqual(['f1', 'f2', 'f3', 'ok1']);

    const errors = await api(
      s.fx.t.url,
      'POST',
      '/commands/bulk?action=resend&status=error&recipient=FAIL@example.net&dry_run=true',
      { token: s.key },
    );
    expect(errors.body).toMatchObject({ matching: 3, applicable: 3 });
    const retry = await s.fx.admin('POST', '/commands/bulk', { action: 'retry-now', tenant_id: 'acme', dry_run: true });
    expect(retry.body).toMatchObject({ matching: 6, applicable: 2 });
    expect(retry.body.sample).toEqual([
      { tenant_id: 'acme', id: 'w2' },
      { tenant_id: 'acme', id: 'w1' },
    ]);
    expect((await s.fx.detail('acme', 'f1')).message.state).toBe('error');
    expect(commandsLogged(s, 'messages.bulk_resend')).toBe(0);
  });

  it('resends by filter and answers counts by outcome, audited and in each timeline', async () => {
    const s = await world();
    const run = await s.fx.admin('POST', '/commands/bulk', { action: 'resend', tenant_id: 'acme', batch_code: 'june' });
    expect(run.body).toEqual({
      ok: true,
      action: 'resend',
      dry_run: false,
      matching: 3,
      done: 3,
      not_applicable: 0,
      remaining: 0,
    });
    for (const id of ['f1', 'f2', 'f3'])
      expect((await s.fx.detail('acme', id)).events.map((e) => e.event_type)).toContain('resent');
    expect((await s.fx.detail('globex', 'g1')).message.state).toBe('error');
    expect(commandsLogged(s, 'messages.bulk_resend')).toBe(1);

    // Bounded: `max` stops the run, and what it left is counted.
    const until = Math.floor(s.fx.clock.now() / 1000) + 1;
    const bounded = await s.fx.admin('POST', '/commands/bulk', {
      action: 'delete',
      tenant_id: 'acme',
      recipient: 'rcpt@example.net',
      to_ts: until,
      max: 2,
    });
    expect(bounded.body).toMatchObject({ matching: 3, done: 2, not_applicable: 0, remaining: 1 });
  });

  it('retries now every waiting message the filter finds, and the relay gets them at once', async () => {
    const s = await world();
    const run = await api(s.fx.t.url, 'POST', '/commands/bulk', { token: s.key, body: { action: 'retry-now' } });
    expect(run.body).toMatchObject({ matching: 6, done: 2, not_applicable: 4, remaining: 0 });
    await s.sink.waitForMessages(3);
    expect(s.sink.messages).toHaveLength(3);
  });

  it('works in chunks of one transaction each over a large selection', async () => {
    const s = await startSinkScenario(cleanups);
    await s.fx.admin('POST', '/commands/suspend', { tenant_id: 'acme' });
    for (let round = 0; round < 3; round += 1) {
      const posted = await s.fx.post(
        s.key,
        Array.from({ length: 400 }, (_, index) => message(`m-${round}-${index}`)),
      );
      expect(posted.body.queued).toBe(400);
    }
    const dry = await s.fx.admin('POST', '/commands/bulk', { action: 'delete', tenant_id: 'acme', dry_run: true });
    expect(dry.body).toMatchObject({ matching: 1200, applicable: 1200 });
    expect(dry.body.sample).toHaveLength(20);
    const run = await s.fx.admin('POST', '/commands/bulk', { action: 'delete', tenant_id: 'acme' });
    expect(run.body).toMatchObject({ matching: 1200, done: 1200, remaining: 0 });
    // 500 + 500 + 200: one audit record per chunk, each written with its chunk's changes.
    expect(commandsLogged(s, 'messages.bulk_delete')).toBe(3);
    expect((await s.fx.admin('GET', '/messages?tenant_id=acme')).body.messages).toEqual([]);
  });

  it('keeps tenant keys to their own tenant and makes the admin name a tenant or all of them', async () => {
    const s = await world();
    const foreign = await api(s.fx.t.url, 'POST', '/commands/bulk', {
      token: s.globexKey,
      body: { action: 'resend', tenant_id: 'acme', dry_run: true },
    });
    expect(foreign.status).toBe(404);
    const everyone = await api(s.fx.t.url, 'POST', '/commands/bulk', {
      token: s.globexKey,
      body: { action: 'resend', all_tenants: true, dry_run: true },
    });
    expect(everyone.status).toBe(403);
    expect(everyone.body.error.code).toBe('FORBIDDEN');
    const own = await api(s.fx.t.url, 'POST', '/commands/bulk', {
      token: s.globexKey,
      body: { action: 'resend', dry_run: true },
    });
    expect(own.body).toMatchObject({ matching: 1, applicable: 1, sample: [{ tenant_id: 'globex', id: 'g1' }] });

    const unnamed = await s.fx.admin('POST', '/commands/bulk', { action: 'resend', dry_run: true });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'tenant_id' }] });
    const allOfThem = await s.fx.admin('POST', '/commands/bulk', {
      action: 'resend',
      status: 'error',
      all_tenants: true,
      dry_run: true,
    });
    expect(allOfThem.body).toMatchObject({ matching: 4, applicable: 4 });
  });

  it('suspends and activates a batch (the unit of suspension), refusing filters it cannot honour', async () => {
    const s = await world();
    await s.fx.post(s.key, [
      message('b1', { batch_code: 'autumn', deferred_ts: s.later }),
      message('b2', { batch_code: 'autumn', deferred_ts: s.later }),
    ]);
    const narrowed = await s.fx.admin('POST', '/commands/bulk', {
      action: 'suspend',
      tenant_id: 'acme',
      batch_code: 'autumn',
      status: 'queued',
    });
    expect(narrowed.status).toBe(400);
    expect(narrowed.body.error.code).toBe('VALIDATION_FAILED');
    const dry = await s.fx.admin('POST', '/commands/bulk', {
      action: 'suspend',
      tenant_id: 'acme',
      batch_code: 'autumn',
      dry_run: true,
    });
    expect(dry.body).toMatchObject({ matching: 2, applicable: 2 });
    const run = await s.fx.admin('POST', '/commands/bulk', {
      action: 'suspend',
      tenant_id: 'acme',
      batch_code: 'autumn',
    });
    expect(run.body).toMatchObject({ done: 2, suspensions: ['autumn'] });
    expect((await s.fx.detail('acme', 'b1')).message.status).toBe('suspended');
    const back = await s.fx.admin('POST', '/commands/bulk', {
      action: 'activate',
      tenant_id: 'acme',
      batch_code: 'autumn',
    });
    expect(back.body).toMatchObject({ done: 2, suspensions: [] });
  });

  it('answers bad input with 400 and a stable code', async () => {
    const s = await startSinkScenario(cleanups);
    for (const body of [
      { action: 'explode', tenant_id: 'acme' },
      { action: 'resend', tenant_id: 'acme', max: 0 },
      { action: 'resend', tenant_id: 'acme', colour: 'red' },
    ]) {
      const answer = await s.fx.admin('POST', '/commands/bulk', body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('VALIDATION_FAILED');
    }
    const both = await s.fx.admin('POST', '/commands/bulk', { action: 'resend', tenant_id: 'acme', all_tenants: true });
    expect(both.status).toBe(400);
    const missing = await s.fx.admin('POST', '/commands/bulk', { action: 'resend', tenant_id: 'nobody' });
    expect(missing.status).toBe(404);
  });
});
