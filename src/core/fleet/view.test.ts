import { describe, expect, it } from 'vitest';
import { mergeCommandOutcomes, mergePages, pageRequest, type FleetCursor, type NodePage } from './view.js';
import type { MessageOrder, MessageSummary } from '../message/search.js';

/** A node's queue as the store would list it: `n` messages, pks 1..n, one created per second. */
function queue(node: string, n: number, startTs: number): MessageSummary[] {
  return Array.from({ length: n }, (_, index) => ({
    pk: index + 1,
    clientId: `${node}-${index + 1}`,
    tenantId: 'acme',
    accountId: 'main',
    status: 'queued',
    state: 'queued',
    priority: 2,
    batchCode: null,
    subject: null,
    mailFrom: 'a@acme.example',
    rcptTo: ['b@example.net'],
    attempts: 0,
    createdAt: (startTs + index) * 1000,
    nextAttemptAt: (startTs + ((index * 7) % 5)) * 1000,
    sentAt: null,
    errorAt: null,
    error: null,
    bounceType: null,
  }));
}

/** The store's page: newest by pk descending; by next attempt ascending, then pk (its cursor exact at the page's end only). */
function storePage(
  all: MessageSummary[],
  order: MessageOrder,
  request: ReturnType<typeof pageRequest>,
): Omit<NodePage, 'nodeId'> {
  const sorted =
    order === 'newest'
      ? [...all].sort((a, b) => b.pk - a.pk)
      : [...all].sort((a, b) => a.nextAttemptAt! - b.nextAttemptAt! || a.pk - b.pk);
  const after = request.after;
  const rest =
    after === null
      ? sorted
      : sorted.filter((m) =>
          order === 'newest'
            ? m.pk < after.pk
            : m.nextAttemptAt! > after.nextAttemptAt! || (m.nextAttemptAt! === after.nextAttemptAt && m.pk > after.pk),
        );
  const rows = rest.slice(0, request.limit + 1);
  const page = rows.slice(0, request.limit);
  const last = rows.length > request.limit ? page[page.length - 1]! : undefined;
  return {
    messages: page.slice(request.skip),
    next:
      last === undefined
        ? null
        : order === 'newest'
          ? { pk: last.pk }
          : { pk: last.pk, nextAttemptAt: last.nextAttemptAt! },
  };
}

function walk(
  order: MessageOrder,
  queues: Record<string, MessageSummary[]>,
  limit: number,
  silent: string[] = [],
): string[] {
  const seen: string[] = [];
  let cursor: FleetCursor | null = null;
  for (let round = 0; round < 100; round += 1) {
    const pages = Object.entries(queues)
      .filter(([node]) => !silent.includes(node) && cursor?.nodes[node] !== 'done')
      .map(([node, all]) => ({ nodeId: node, ...storePage(all, order, pageRequest(cursor?.nodes[node], limit)) }));
    const merged = mergePages(order, cursor, pages, limit);
    expect(merged.messages.length).toBeLessThanOrEqual(limit);
    seen.push(...merged.messages.map((m) => m.clientId));
    if (merged.cursor === null) return seen;
    cursor = merged.cursor;
  }
  throw new Error('did not end');
}

describe('fleet search merge', () => {
  const queues = { n1: queue('n1', 7, 100), n2: queue('n2', 11, 103), n3: queue('n3', 2, 90) };
  const everyId = Object.values(queues)
    .flat()
    .map((m) => m.clientId)
    .sort();

  for (const order of ['newest', 'next_attempt'] as const)
    for (const limit of [1, 3, 4, 50])
      it(`pages ${order} over every node without gaps or duplicates, ${limit} at a time`, () => {
        const ids = walk(order, queues, limit);
        expect(ids.length).toBe(everyId.length);
        expect([...ids].sort()).toEqual(everyId);
      });

  it('lists newest first across nodes', () => {
    const ids = walk('newest', queues, 5);
    expect(ids.slice(0, 3)).toEqual(['n2-11', 'n2-10', 'n2-9']);
  });

  it('ends the listing without a node that does not answer', () => {
    const ids = walk('newest', queues, 4, ['n2']);
    expect(ids.some((id) => id.startsWith('n2-'))).toBe(false);
    expect(ids.length).toBe(9);
  });
});

describe('fleet command merge', () => {
  it('takes an id found on any node as found, and names only the ids no node found', () => {
    const merged = mergeCommandOutcomes(
      'delete',
      {
        n1: { deleted: ['a'], not_found: ['b', 'c'], in_flight: [] },
        n2: { deleted: [], not_found: ['a', 'c'], in_flight: ['b'] },
      },
      ['a', 'b', 'c'],
    );
    expect(merged).toEqual({ deleted: ['a'], in_flight: ['b'], not_found: ['c'] });
  });
});
