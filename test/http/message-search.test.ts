/**
 * GET /messages on the real daemon: newest first with a stable cursor, each
 * filter, full text over subject, sender and recipients, order by next
 * attempt, tenant isolation, and bad input refused with a stable code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { message, startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';

const cleanups: Array<() => Promise<void>> = [];
let s: SinkScenario;
let globexKey: string;
const list = async (token: string, query: string) => api(s.fx.t.url, 'GET', `/messages?${query}`, { token });
const ids = (body: { messages: Array<{ id: string }> }) => body.messages.map((found) => found.id);

beforeAll(async () => {
  s = await startSinkScenario(cleanups);
  globexKey = await s.fx.createTenant('globex');
  await s.fx.createAccount('globex', 'main', s.sink, { is_default: true });
  await s.fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'held' });
  const later = Math.floor(s.fx.clock.now() / 1000) + 3600;
  // 100 plain messages, then a few that stand out: the filters must find exactly those.
  const plain = Array.from({ length: 100 }, (_, index) =>
    message(`plain-${String(index).padStart(3, '0')}`, { to: `user${index}@example.net` }),
  );
  expect((await s.fx.post(s.key, plain)).body).toMatchObject({ queued: 100 });
  await s.fx.settle();
  await s.fx.post(s.key, [
    message('invoice-1', {
      subject: 'Your invoice 2026-11',
      to: 'Ann@Example.NET',
      from: 'billing@acme.example',
      priority: 'high',
    }),
    message('held-1', { batch_code: 'held', subject: 'Spring sale' }),
    message('held-2', { batch_code: 'held', subject: 'Spring sale again' }),
    message('later-2', { deferred_ts: later + 60 }),
    message('later-1', { deferred_ts: later }),
  ]);
  await s.fx.post(globexKey, [message('globex-1', { subject: 'Your invoice from Globex' })]);
  await s.fx.t.daemon.searchIndex.tick();
}, 60_000);
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('GET /messages', () => {
  it('pages newest first with a cursor that resumes exactly where a page ended', async () => {
    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const page = await list(s.key, `limit=40${cursor === '' ? '' : `&cursor=${cursor}`}`);
      expect(page.status).toBe(200);
      seen.push(...ids(page.body));
      cursor = page.body.next_cursor;
      pages += 1;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(105);
    expect(new Set(seen).size).toBe(105);
    expect(seen.slice(0, 2)).toEqual(['later-1', 'later-2']);
    expect(seen.at(-1)).toBe('plain-000');
  });

  it('filters by status, batch, recipient and sender (any case), priority and time', async () => {
    expect(ids((await list(s.key, 'status=suspended')).body).sort()).toEqual(['held-1', 'held-2']);
    expect(ids((await list(s.key, 'batch_code=held&status=queued')).body)).toEqual([]);
    expect(ids((await list(s.key, 'recipient=ann@example.net')).body)).toEqual(['invoice-1']);
    expect(ids((await list(s.key, 'sender=BILLING@acme.example')).body)).toEqual(['invoice-1']);
    expect(ids((await list(s.key, 'priority=high')).body)).toEqual(['invoice-1']);
    expect(ids((await list(s.key, 'priority=1')).body)).toEqual(['invoice-1']);
    // The plain ones were sent before the rest came; invoice-1 may have followed them by now.
    const sent = (await list(s.key, 'status=sent&limit=500')).body.messages as Array<{ id: string; status: string }>;
    expect(sent.filter((found) => found.id.startsWith('plain-'))).toHaveLength(100);
    expect(
      sent.every((found) => found.status === 'sent' && !['held-1', 'held-2', 'later-1', 'later-2'].includes(found.id)),
    ).toBe(true);
    const future = Math.floor(s.fx.clock.now() / 1000) + 86_400;
    expect(ids((await list(s.key, `from_ts=${future}`)).body)).toEqual([]);
  });

  it('finds words of the subject, sender and recipients, the last word as a prefix', async () => {
    expect(ids((await list(s.key, 'q=invoice')).body)).toEqual(['invoice-1']);
    expect(ids((await list(s.key, 'q=invo')).body)).toEqual(['invoice-1']);
    expect(ids((await list(s.key, `q=${encodeURIComponent('ann@example.net')}`)).body)).toEqual(['invoice-1']);
    expect(ids((await list(s.key, 'q=spring%20sale')).body).sort()).toEqual(['held-1', 'held-2']);
    expect(ids((await list(s.key, 'q=user42')).body)).toEqual(['plain-042']);
    // FTS syntax in the words is only text.
    expect((await list(s.key, `q=${encodeURIComponent('"spring" OR NEAR(* -)')}`)).status).toBe(200);
  });

  it('indexes new messages a moment after intake, and a waiting message replaced by its client anew', async () => {
    await s.fx.post(s.key, [
      message('late-1', {
        subject: 'Quarterly statement',
        to: 'Zed@example.org',
        deferred_ts: Math.floor(s.fx.clock.now() / 1000) + 7200,
      }),
    ]);
    // Addresses are found whether or not the indexer has reached the message yet.
    expect(ids((await list(s.key, 'recipient=zed@EXAMPLE.org')).body)).toEqual(['late-1']);
    // The indexer runs every half second; a tick is the moment it has surely passed.
    await s.fx.t.daemon.searchIndex.tick();
    expect(ids((await list(s.key, 'q=quarterly')).body)).toEqual(['late-1']);
    expect(ids((await list(s.key, 'recipient=zed@example.org')).body)).toEqual(['late-1']);

    await s.fx.post(s.key, [
      message('late-1', {
        subject: 'Annual statement',
        to: 'Zed@example.org',
        deferred_ts: Math.floor(s.fx.clock.now() / 1000) + 7200,
      }),
    ]);
    expect(ids((await list(s.key, 'q=quarterly')).body)).toEqual([]);
    expect(ids((await list(s.key, 'q=annual')).body)).toEqual(['late-1']);
    await s.fx.admin('POST', '/commands/delete-messages', { tenant_id: 'acme', ids: ['late-1'] });
  });

  it('orders waiting messages by next attempt', async () => {
    const waiting = ids((await list(s.key, 'sort=next_attempt')).body);
    expect(waiting.indexOf('later-1')).toBeLessThan(waiting.indexOf('later-2'));
    expect(waiting).not.toContain('plain-000');
  });

  it('keeps tenants apart; the admin sees every tenant unless it names one', async () => {
    expect(ids((await list(globexKey, 'q=invoice')).body)).toEqual(['globex-1']);
    expect((await list(globexKey, 'tenant_id=acme')).status).toBe(404);
    expect(ids((await list(s.fx.t.adminToken, 'q=invoice')).body).sort()).toEqual(['globex-1', 'invoice-1']);
    expect(ids((await list(s.fx.t.adminToken, 'q=invoice&tenant_id=globex')).body)).toEqual(['globex-1']);
  });

  it('a deleted message is no longer found, and bad input is refused with a stable code', async () => {
    await s.fx.admin('POST', '/commands/delete-messages', { tenant_id: 'acme', ids: ['held-2'] });
    expect(ids((await list(s.key, 'q=spring')).body)).toEqual(['held-1']);
    for (const query of ['cursor=not-a-cursor', 'status=lost', 'limit=0', 'limit=501', 'colour=red']) {
      const refused = await list(s.key, query);
      expect([query, refused.status, refused.body.error.code]).toEqual([query, 400, 'VALIDATION_FAILED']);
    }
  });
});
