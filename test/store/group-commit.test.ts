/**
 * The intake group commit against the real SQLite store: the group is written
 * without savepoints, and when one request throws, written again with one per
 * request, so that only that request fails and nothing of it is kept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageContent } from '../../src/core/message/message.js';
import { createSubmissionService, type SubmissionItem } from '../../src/core/message/submission-service.js';
import { openTestStore } from '../helpers/sqlite-store.js';

describe('intake group commit on SQLite', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  });

  const setup = () => {
    // The default account, set up through a connection of its own as an operator's tool would.
    const { store, ids, read } = openTestStore(cleanups, (admin) =>
      admin
        .prepare(
          `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, is_default, created_at, updated_at) VALUES ('acme', 'main', '127.0.0.1', 25, 'none', 1, 0, 0)`,
        )
        .run(),
    );
    const turn: Array<() => void> = [];
    const submissions = createSubmissionService({
      store,
      queue: store.queue,
      messages: store.messages,
      clock: { now: () => 1_000 },
      ids,
      wake: () => undefined,
      defer: (fn) => turn.push(fn),
    });
    const rows = () => read<{ id: string; state: string }>(`SELECT id, state FROM messages ORDER BY pk`);
    const events = () =>
      read<{ e: string }>(
        `SELECT message_id || ':' || event_type AS e FROM outbox WHERE message_id IS NOT NULL ORDER BY seq`,
      ).map((row) => row.e);
    return { submissions, turn, rows, events };
  };

  const item = (
    id: string,
    index: number,
    content: MessageContent = { kind: 'raw', bytes: Buffer.from(`Subject: ${id}\r\n\r\nbody\r\n`) },
  ): SubmissionItem => ({
    index,
    id,
    message: {
      id,
      batchCode: null,
      deferredUntil: null,
      content,
      subject: id,
      messageId: `<${id}@acme.example>`,
      mailFrom: 'a@acme.example',
      rcptTo: ['b@example.net'],
      sizeBytes: 20,
    },
  });
  const principal = { kind: 'tenant', tenantId: 'acme' } as const;

  it('commits the other requests of the group when one throws, and keeps nothing of that one', async () => {
    const s = setup();
    const first = s.submissions.enqueue(principal, [item('a-1', 0)], undefined, 'req-a');
    // Content no store column takes: the insert throws, as a bug in the middle of a request would.
    const broken = s.submissions.enqueue(
      principal,
      [item('b-1', 0), item('b-2', 1, { kind: 'unknown' } as unknown as MessageContent)],
      undefined,
      'req-b',
    );
    const third = s.submissions.enqueue(principal, [item('c-1', 0)], undefined, 'req-c');
    expect(s.turn).toHaveLength(1);
    s.turn[0]?.();

    await expect(first).resolves.toEqual({ queued: 1, rejected: [] });
    await expect(broken).rejects.toThrow();
    await expect(third).resolves.toEqual({ queued: 1, rejected: [] });
    // b-1 went with its request: the request is all or nothing.
    expect(s.rows()).toEqual([
      { id: 'a-1', state: 'queued' },
      { id: 'c-1', state: 'queued' },
    ]);
    expect(s.events()).toEqual(['a-1:message.queued', 'c-1:message.queued']);
  });

  it('writes a group without failures as it came, and replaces a waiting id submitted again in the same group', async () => {
    const s = setup();
    const first = s.submissions.enqueue(principal, [item('a-1', 0), item('a-2', 1)], undefined, null);
    const again = s.submissions.enqueue(principal, [item('a-1', 0)], undefined, null);
    s.turn[0]?.();
    await expect(first).resolves.toEqual({ queued: 2, rejected: [] });
    await expect(again).resolves.toEqual({ queued: 1, rejected: [] });
    expect(s.rows()).toEqual([
      { id: 'a-1', state: 'queued' },
      { id: 'a-2', state: 'queued' },
    ]);
    expect(s.events()).toEqual(['a-1:message.queued', 'a-2:message.queued', 'a-1:message.updated']);
  });
});
