/**
 * GET /messages over 100,000 messages on the real daemon: every page of a
 * full walk, each filter, full text and the next-attempt order give exactly
 * the messages the corpus rule says, in order. (How fast each page is, is
 * measured by `npm run bench -- search`, never asserted here.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSinkScenario, type SinkScenario } from '../helpers/queue-fixture.js';
import { corpusFields, matches, postCorpus, type CorpusFields } from '../helpers/search-corpus.mjs';
import { api } from '../helpers/test-daemon.js';

const COUNT = 100_000;
const cleanups: Array<() => Promise<void>> = [];
let s: SinkScenario;
let holdUntil: number;
// Batch 3 is sent at once, batch 9 is suspended, the rest are deferred to a time spread over 1,000 seconds.
const isSent = (fields: CorpusFields) => fields.batch_code === 'batch-3';
const isSuspended = (fields: CorpusFields) => fields.batch_code === 'batch-9';
const deferredTsOf = (index: number) =>
  corpusFields(index).batch_code === 'batch-3' ? undefined : holdUntil + (index % 1000);

interface Page {
  status: number;
  ids: string[];
  next: string | null;
  code?: string | undefined;
}
const page = async (query: string): Promise<Page> => {
  const response = await api(s.fx.t.url, 'GET', `/messages?${query}`, { token: s.key });
  const body = response.body as {
    messages?: Array<{ id: string }>;
    next_cursor?: string | null;
    error?: { code: string };
  };
  return {
    status: response.status,
    ids: (body.messages ?? []).map((found) => found.id),
    next: body.next_cursor ?? null,
    code: body.error?.code,
  };
};
/** Every id the query finds, following the cursor page by page (each page checked for its size). */
const walk = async (query: string, limit = 500): Promise<string[]> => {
  const seen: string[] = [];
  let cursor: string | null = '';
  while (cursor !== null) {
    const found = await page(`${query}&limit=${limit}${cursor === '' ? '' : `&cursor=${cursor}`}`);
    expect(found.status).toBe(200);
    if (found.next !== null) expect(found.ids).toHaveLength(limit);
    seen.push(...found.ids);
    cursor = found.next;
  }
  return seen;
};
const expected = (predicate: (fields: CorpusFields, index: number) => boolean): string[] =>
  matches(COUNT, predicate).map((index) => corpusFields(index).id);

beforeAll(async () => {
  s = await startSinkScenario(cleanups);
  holdUntil = Math.floor(s.fx.clock.now() / 1000) + 86_400;
  await s.fx.admin('POST', '/commands/suspend', { tenant_id: 'acme', batch_code: 'batch-9' });
  // One request at a time: messages are stored in corpus order, so newest first is a known order.
  expect(await postCorpus({ url: s.fx.t.url, token: s.key, count: COUNT, deferredTsOf, concurrency: 1 })).toBe(COUNT);
  // Each tick indexes up to 20,000 messages; the last finds nothing left to do.
  for (let tick = 0; tick < COUNT / 20_000 + 1; tick += 1) await s.fx.t.daemon.searchIndex.tick();
  await s.fx.settle();
}, 180_000);
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('GET /messages over 100,000 messages', () => {
  it('walks every message newest first, each exactly once, a page at a time', async () => {
    const all = await walk('sort=newest');
    expect(all).toHaveLength(COUNT);
    expect(all).toEqual(expected(() => true));
  }, 60_000);

  it('finds exactly the messages of each status', async () => {
    expect(s.sink.messages.length).toBe(expected(isSent).length);
    expect(await walk('status=sent')).toEqual(expected(isSent));
    expect(await walk('status=suspended')).toEqual(expected(isSuspended));
    expect(await walk('status=deferred&batch_code=batch-10')).toEqual(expected((f) => f.batch_code === 'batch-10'));
    expect(await walk('status=deferred&batch_code=batch-9')).toEqual([]);
    expect(await walk('status=error')).toEqual([]);
  }, 60_000);

  it('finds exactly the messages of a recipient, a sender, a batch with a priority, a time range', async () => {
    expect(await walk('recipient=USER123@example4.net')).toEqual(expected((f) => f.to === 'user123@example4.net'));
    expect(await walk('sender=sender7@ACME.example')).toEqual(expected((f) => f.from === 'sender7@acme.example'));
    expect(await walk('batch_code=batch-42&priority=2')).toEqual(
      expected((f) => f.batch_code === 'batch-42' && f.priority === 2),
    );
    expect(await walk('recipient=nobody@example.net')).toEqual([]);
    const now = Math.floor(s.fx.clock.now() / 1000);
    expect(await walk(`to_ts=${now - 3600}`)).toEqual([]);
    expect(await walk(`from_ts=${now - 3600}&batch_code=batch-77`)).toEqual(
      expected((f) => f.batch_code === 'batch-77'),
    );
  }, 60_000);

  it('finds the words of the subject, alone and with filters', async () => {
    expect(await walk('q=overdue%20invoice')).toEqual(expected((f) => f.subject.startsWith('overdue invoice ')));
    expect((await page('q=12345')).ids).toEqual(['m-012345']);
    expect(await walk('q=refund&status=sent')).toEqual(expected((f) => isSent(f) && f.subject.includes(' refund ')));
    expect(await walk(`q=${encodeURIComponent('user4999@example1.net')}`)).toEqual(
      expected((f) => f.to === 'user4999@example1.net'),
    );
  }, 60_000);

  it('orders the waiting messages of a batch by next attempt, then by arrival', async () => {
    const waiting = matches(COUNT, (f) => f.batch_code === 'batch-42')
      .sort((a, b) => (a % 1000) - (b % 1000) || a - b)
      .map((index) => corpusFields(index).id);
    expect(await walk('sort=next_attempt&batch_code=batch-42', 7)).toEqual(waiting);
  }, 60_000);
});
