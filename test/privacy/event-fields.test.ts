/**
 * The fields of a message's events that name a person (a bounce's recipient, the recipients a
 * relay refused) and the message's own refused recipients are kept sealed under its envelope's key
 * (store/event-fields.ts): the database file holds none of them, the timeline and the client's
 * report read them opened, and an erasure leaves them unreadable (issue 45).
 */
import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, withMainAccount } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const NOW = 1_700_000_000_000;
const ANN = 'ann.rossi@example.net';
const BOB = 'bob.bianchi@example.org';

function world() {
  const opened = openTestStore(cleanups, (admin) => {
    withMainAccount(admin);
    // Its reports start from the beginning (a tenant made by the API gets this row).
    admin.prepare(`INSERT INTO report_state (tenant_id, cursor_seq) VALUES ('acme', 0)`).run();
  });
  const { store } = opened;
  store.queue.enqueue(
    [
      {
        tenantId: 'acme',
        id: 'm1',
        accountId: 'main',
        priority: 2,
        batchCode: null,
        deferredUntil: null,
        content: { kind: 'payload', json: '{"b":1}' },
        subject: 'Statement',
        messageId: '<m1@acme.example>',
        mailFrom: 'app@acme.example',
        rcptTo: [ANN, BOB],
        sizeBytes: 10,
        suspended: false,
      },
    ],
    NOW,
    null,
  );
  const [claimed] = store.queue.claim({
    tenantId: 'acme',
    accountId: 'main',
    limit: 1,
    now: NOW,
    leaseOwner: 'me',
    leaseUntil: NOW + 60_000,
  });
  if (claimed === undefined) throw new Error('not claimed');
  // Bob refused, Ann taken; then Ann's mailbox bounces it.
  store.queue.record([
    {
      pk: claimed.pk,
      attempt: claimed.attempts,
      at: NOW + 1,
      kind: 'sent',
      replyCode: 250,
      enhancedStatus: '2.0.0',
      text: '250 ok',
      refused: [{ recipient: BOB, replyCode: 550, enhancedStatus: '5.1.1', text: 'no such user' }],
    },
  ]);
  const bounced = store.bounces.record({
    tenantId: 'acme',
    clientId: 'm1',
    type: 'hard',
    code: '5.1.1',
    reason: 'mailbox unknown',
    recipient: ANN,
    at: NOW + 2,
  });
  expect(bounced).toBe(true);
  const fileHas = (needle: string): boolean => {
    const db = new Database(opened.path);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    return [opened.path, `${opened.path}-wal`]
      .filter((file) => existsSync(file))
      .some((file) => readFileSync(file).includes(needle));
  };
  return { ...opened, store, fileHas };
}

describe('the personal fields of a message and its events', () => {
  it('are stored sealed, and read opened by the timeline and the report', () => {
    const w = world();
    expect([ANN, BOB].filter(w.fileHas)).toEqual([]);

    const detail = w.store.messages.detail('acme', 'm1');
    expect(detail?.message.refusedRecipients).toEqual([
      { recipient: BOB, replyCode: 550, enhancedStatus: '5.1.1', text: 'no such user' },
    ]);
    const timeline = detail?.events ?? [];
    expect(timeline.find((event) => event.type === 'sent')?.data).toMatchObject({
      refused_recipients: [{ recipient: BOB }],
    });
    expect(timeline.find((event) => event.type === 'bounced')?.data).toMatchObject({ recipient: ANN });

    const reported = w.store.reports.pending('acme', 100);
    expect(reported.find((event) => event.type === 'bounced')?.data).toMatchObject({ recipient: ANN });
  });

  it('are unreadable once the message is erased, in the rows and in a copy taken before', () => {
    const w = world();
    const before = new Database(w.path, { readonly: true });
    const sealedBefore = before
      .prepare(`SELECT payload FROM outbox WHERE event_type = 'message.bounced'`)
      .pluck()
      .get() as string;
    before.close();
    expect(JSON.parse(sealedBefore)).toHaveProperty('sealed');

    w.store.erasure.erase({ kind: 'address', tenantId: 'acme', address: ANN }, NOW + 3, null);
    const detail = w.store.messages.detail('acme', 'm1');
    expect(detail?.message.refusedRecipients).toBeNull();
    for (const event of detail?.events ?? []) expect(JSON.stringify(event.data ?? {})).not.toMatch(/ann|bob/);
    // The key the copy's seal needs is gone from the database: nothing there opens it.
    expect(w.read(`SELECT count(*) AS n FROM data_keys`)).toEqual([{ n: 0 }]);
  });
});
