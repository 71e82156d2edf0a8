/**
 * The intake group commit against the real SQLite store: the group is written
 * without savepoints, and when one request throws, written again with one per
 * request, so that only that request fails and nothing of it is kept.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { MessageContent } from '../../src/core/message.js';
import { createSubmissionService, type SubmissionItem } from '../../src/core/submission-service.js';
import { createAesGcmSecretBox } from '../../src/security/secret-box.js';
import { createSqliteStore, type SqliteStore } from '../../src/store/index.js';
import Database from 'better-sqlite3';

describe('intake group commit on SQLite', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  });

  const setup = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-group-'));
    const path = join(dir, 'db.sqlite');
    let next = 0;
    const ids = { uuid: () => `00000000-0000-7000-8000-${String((next += 1)).padStart(12, '0')}` };
    const store: SqliteStore = createSqliteStore({ path, secrets: createAesGcmSecretBox(randomBytes(32)), ids, now: Date.now });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cleanups.push(() => store.close());
    // Set up through a connection of its own, as an operator's tool would.
    const admin = new Database(path);
    admin.prepare(`INSERT INTO tenants (id, api_key_hash, api_key_created_at, created_at, updated_at) VALUES ('acme', 'h', 0, 0, 0)`).run();
    admin
      .prepare(
        `INSERT INTO accounts (tenant_id, id, host, port, tls_mode, is_default, created_at, updated_at) VALUES ('acme', 'main', '127.0.0.1', 25, 'none', 1, 0, 0)`,
      )
      .run();
    admin.close();
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
    /** What another connection sees: only what was committed. */
    const read = <T>(sql: string): T[] => {
      const reader = new Database(path, { readonly: true });
      try {
        return reader.prepare(sql).all() as T[];
      } finally {
        reader.close();
      }
    };
    const rows = () => read<{ id: string; state: string }>(`SELECT id, state FROM messages ORDER BY pk`);
    const events = () =>
      read<{ e: string }>(`SELECT message_id || ':' || event_type AS e FROM outbox WHERE message_id IS NOT NULL ORDER BY seq`).map((row) => row.e);
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
    const broken = s.submissions.enqueue(principal, [item('b-1', 0), item('b-2', 1, { kind: 'unknown' } as unknown as MessageContent)], undefined, 'req-b');
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
