/**
 * Diagnostic texts on the real store (core/address-redaction.ts): a relay's reply and a
 * bounce's reason are kept in the message (deferred_reason, error, bounce_reason) and its
 * timeline (the event's text and diagnostic fields) with every address redacted, its domain kept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, withMainAccount } from '../helpers/sqlite-store.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

const NOW = 1_700_000_000_000;
const ANN = 'ann.rossi@example.net';

function world() {
  const opened = openTestStore(cleanups, withMainAccount);
  const { store } = opened;
  store.queue.enqueue(
    [
      {
        tenantId: 'acme',
        id: 'm-1',
        accountId: 'main',
        priority: 2,
        batchCode: null,
        deferredUntil: null,
        content: { kind: 'payload', json: '{}' },
        subject: 'hello',
        messageId: '<m-1@acme.example>',
        mailFrom: 'app@acme.example',
        rcptTo: [ANN],
        sizeBytes: 10,
        suspended: false,
      },
    ],
    NOW,
    null,
  );
  const claim = (now: number) => {
    const [claimed] = store.queue.claim({
      tenantId: 'acme',
      accountId: 'main',
      limit: 1,
      now,
      leaseOwner: 'me',
      leaseUntil: now + 60_000,
    });
    if (claimed === undefined) throw new Error('not claimed');
    return claimed;
  };
  const row = () =>
    opened.read<Record<string, unknown>>(
      `SELECT deferred_reason, error, bounce_reason FROM messages WHERE id = 'm-1'`,
    )[0];
  const events = () =>
    opened.read<{ event_type: string; text: string | null; payload: string | null }>(
      `SELECT event_type, text, payload FROM outbox WHERE message_pk IS NOT NULL ORDER BY seq`,
    );
  return { store, claim, row, events };
}

describe('diagnostic texts keep no address', () => {
  it("keeps the relay's deferral and failure, and the bounce's reason, with the address redacted", () => {
    const w = world();
    const first = w.claim(NOW);
    w.store.queue.record([
      {
        pk: first.pk,
        attempt: first.attempts,
        at: NOW + 1,
        kind: 'deferred',
        nextAttemptAt: NOW + 2,
        reason: `452 4.2.2 <${ANN}>: Mailbox full`,
        replyCode: 452,
        enhancedStatus: '4.2.2',
      },
    ]);
    expect(w.row()).toMatchObject({ deferred_reason: '452 4.2.2 <…@example.net>: Mailbox full' });

    const second = w.claim(NOW + 2);
    w.store.queue.record([
      {
        pk: second.pk,
        attempt: second.attempts,
        at: NOW + 3,
        kind: 'failed',
        reason: `550 5.1.1 <${ANN}>: Recipient address rejected`,
        replyCode: 550,
        enhancedStatus: '5.1.1',
        refused: [],
      },
    ]);
    w.store.bounces.record({
      tenantId: 'acme',
      clientId: 'm-1',
      type: 'hard',
      code: '5.1.1',
      reason: `${ANN}: user unknown`,
      recipient: ANN,
      at: NOW + 4,
    });
    expect(w.row()).toMatchObject({
      error: '550 5.1.1 <…@example.net>: Recipient address rejected',
      bounce_reason: '…@example.net: user unknown',
    });

    const events = w
      .events()
      .filter((event) => ['message.deferred', 'message.error', 'message.bounced'].includes(event.event_type));
    expect(events.map((event) => event.text)).toEqual([
      '452 4.2.2 <…@example.net>: Mailbox full',
      '550 5.1.1 <…@example.net>: Recipient address rejected',
      '…@example.net: user unknown',
    ]);
    const bounced = JSON.parse(events[2]?.payload ?? '{}') as Record<string, unknown>;
    expect(bounced.bounce_reason).toBe('…@example.net: user unknown');
    // What only the event's texts held: nothing of the address but its own recipient field.
    const texts = JSON.stringify(
      events.map((event) => [event.text, { ...JSON.parse(event.payload ?? '{}'), recipient: null }]),
    );
    expect(texts).not.toContain('ann.rossi');
  });
});
