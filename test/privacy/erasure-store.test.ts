/**
 * Erasure on the real store, at the edges a request does not reach easily (issue 45): an outcome
 * or a bounce arriving for a message erased meanwhile brings nothing back; a claimed spooled
 * message whose spool went with the erasure reads as shredded, never as an empty body; the admin's
 * erasure of an address clears the records of no tenant too, and never another address that
 * merely contains it.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../src/core/message/index.js';
import { openTestStore, withMainAccount } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const NOW = 1_700_000_000_000;

function world() {
  const opened = openTestStore(cleanups, withMainAccount);
  const { store } = opened;
  const submit = (
    id: string,
    to: string,
    content: NewMessage['content'] = { kind: 'payload', json: `{"b":"${id}"}` },
  ) =>
    store.queue.enqueue(
      [
        {
          tenantId: 'acme',
          id,
          accountId: 'main',
          priority: 2,
          batchCode: null,
          deferredUntil: null,
          content,
          subject: `subject ${id}`,
          messageId: `<${id}@acme.example>`,
          mailFrom: 'app@acme.example',
          rcptTo: [to],
          sizeBytes: 10,
          suspended: false,
        },
      ],
      NOW,
      null,
    );
  const claim = () =>
    store.queue.claim({
      tenantId: 'acme',
      accountId: 'main',
      limit: 10,
      now: NOW,
      leaseOwner: 'me',
      leaseUntil: NOW + 60_000,
    });
  const row = (id: string) => opened.read<Record<string, unknown>>(`SELECT * FROM messages WHERE id = '${id}'`)[0];
  return { ...opened, store, submit, claim, row };
}

describe('erasure at the edges', () => {
  it("records the outcome of a message erased while it was sent without the relay's words, and lets no bounce back in", () => {
    const w = world();
    w.submit('in-flight', 'ann@example.net');
    const [claimed] = w.claim();
    if (claimed === undefined) throw new Error('not claimed');
    w.store.erasure.erase({ kind: 'messages', tenantId: 'acme', ids: ['in-flight'] }, NOW + 1, null);
    w.store.queue.record([
      {
        pk: claimed.pk,
        attempt: claimed.attempts,
        at: NOW + 2,
        kind: 'failed',
        reason: '550 5.1.1 <ann@example.net>: user unknown',
        replyCode: 550,
        enhancedStatus: '5.1.1',
        refused: [{ recipient: 'ann@example.net', replyCode: 550, enhancedStatus: '5.1.1', text: 'unknown' }],
      },
    ]);
    expect(w.row('in-flight')).toMatchObject({
      state: 'error',
      error: 'erased',
      refused_recipients: null,
      last_reply_code: 550,
    });
    const bounced = w.store.bounces.record({
      tenantId: 'acme',
      clientId: 'in-flight',
      type: 'hard',
      code: '5.1.1',
      reason: '<ann@example.net> unknown',
      recipient: 'ann@example.net',
      at: NOW + 3,
    });
    expect(bounced).toBe(false);
    const everything =
      JSON.stringify(w.read(`SELECT * FROM outbox`)) + JSON.stringify(w.read(`SELECT * FROM messages`));
    expect(everything).not.toContain('ann@example.net');
  });

  it('reads a claimed spooled message whose spool the erasure took as shredded, not as an empty body', () => {
    const w = world();
    const spoolId = w.store.spool.open(NOW, 'acme');
    w.store.spool.append(spoolId, 0, Buffer.from('Subject: large\r\n\r\nbody'));
    w.submit('spooled', 'ann@example.net', { kind: 'spooled', spoolId });
    const [claimed] = w.claim();
    expect(claimed?.spoolId).toBe(spoolId);
    w.store.erasure.erase({ kind: 'messages', tenantId: 'acme', ids: ['spooled'] }, NOW + 1, null);
    const read = w.store.queue.spooledContent(spoolId);
    expect(read.parts).toEqual([]);
    expect(read.key?.length).toBe(0);
  });

  it('clears, for the admin, the records of no tenant that name the address, and never an address that contains it', () => {
    const w = world();
    const admin = new Database(w.path);
    const insert =
      admin.prepare(`INSERT INTO bounce_messages (mailbox, uid_validity, uid, received_at, from_header, subject,
      size_bytes, kind, disposition, findings) VALUES ('bounces', 1, ?, 0, 'MAILER-DAEMON <mailer-daemon@mx.example>', 'Undelivered', 1, 'dsn', 'unmatched', ?)`);
    insert.run(1, JSON.stringify([{ recipient: 'ann@example.net', action: 'failed' }]));
    insert.run(2, JSON.stringify([{ recipient: 'joann@example.net', action: 'failed' }]));
    admin.close();
    w.submit('joann-1', 'joann@example.net');
    w.store.erasure.erase({ kind: 'address', tenantId: null, address: 'Ann@Example.net' }, NOW + 1, null);
    w.store.erasure.erase({ kind: 'address', tenantId: 'acme', address: 'ann@example.net' }, NOW + 1, null);
    const findings = w.read<{ uid: number; findings: string }>(
      `SELECT uid, findings FROM bounce_messages ORDER BY uid`,
    );
    expect(findings).toEqual([
      { uid: 1, findings: '[]' },
      { uid: 2, findings: JSON.stringify([{ recipient: 'joann@example.net', action: 'failed' }]) },
    ]);
    expect(w.row('joann-1')).toMatchObject({ erased_at: null });
    expect(w.store.messages.detail('acme', 'joann-1')?.message.rcptTo).toEqual(['joann@example.net']);
  });
});
