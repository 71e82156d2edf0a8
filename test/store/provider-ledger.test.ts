/**
 * The provider ledger against the real SQLite store: an event applied once however
 * often it comes, the provider state by rank whatever the order of arrival, candidates by each
 * reference form a provider echoes, and retention forgetting applied events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { countOutcomes, type ProviderEvent } from '../../src/core/provider/events.js';
import { correlateProviderEvent, planProviderEvent } from '../../src/core/provider/plan.js';
import { openTestStore } from '../helpers/sqlite-store.js';

const POLICY = { suppressHardBounces: true, suppressComplaints: true, suppressionTtlMs: null };

describe('provider ledger on SQLite', () => {
  const cleanups: Array<() => void> = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  });

  const setup = () => {
    const { store, read } = openTestStore(cleanups, (admin) => {
      const insert =
        admin.prepare(`INSERT INTO messages (tenant_id, id, account_id, source, payload, mail_from, rcpt_to, message_id_header, state,
          next_attempt_at, created_at, updated_at, provider_message_id) VALUES ('acme', ?, 'main', 'http', '{}', 'a@acme.example', '["b@example.net"]', ?, 'sent', 0, 0, 0, ?)`);
      insert.run('m-1', '<m-1@acme.example>', '0100018c-abc-000000');
      insert.run('m-2', '<m-2@acme.example>', '7oJ3cLZdR2KZQ5Z3lV4p3A');
    });
    const ledger = store.providerLedger;
    const apply = async (...events: ProviderEvent[]) => countOutcomes(await settle(...events));
    const settle = async (...events: ProviderEvent[]) =>
      ledger.settle(
        'acme',
        events.map((event) => {
          const correlation = correlateProviderEvent(event, (by, value) => ledger.candidates(by, value, 'acme'));
          return {
            event,
            plan: correlation.matched
              ? planProviderEvent(event, correlation.candidate, correlation.by, POLICY, 5_000)
              : null,
          };
        }),
        5_000,
      );
    const stateOf = (id: string) =>
      read<{ provider_state: string | null }>(`SELECT provider_state FROM messages WHERE id = '${id}'`)[0]
        ?.provider_state;
    const eventsOf = (id: string) =>
      read<{ event_type: string }>(`SELECT event_type FROM outbox WHERE message_id = '${id}' ORDER BY seq`).map(
        (row) => row.event_type,
      );
    return { store, apply, settle, stateOf, eventsOf, read };
  };

  const event = (eventId: string, extra: Partial<ProviderEvent>): ProviderEvent => ({
    provider: 'ses',
    eventId,
    kind: 'delivered',
    bounceType: null,
    recipient: 'b@example.net',
    providerMessageId: null,
    mailId: 'm-1',
    messageIdHeader: null,
    at: 4_000,
    status: null,
    reason: null,
    feedbackType: null,
    ...extra,
  });

  it('applies an event once, however often it is delivered', async () => {
    const { apply, settle, eventsOf } = setup();
    expect(await apply(event('e-1', {}))).toEqual({ applied: 1, duplicates: 0, unmatched: 0 });
    // One outcome per event, in order.
    expect(await settle(event('e-1', {}), event('e-9', { mailId: 'no-such-id' }))).toEqual(['duplicate', 'unmatched']);
    expect(await apply(event('e-1', {}), event('e-1', {}))).toEqual({ applied: 0, duplicates: 2, unmatched: 0 });
    expect(eventsOf('m-1')).toEqual(['message.delivered']);
  });

  it('keeps the highest-ranked state whatever the order: a soft bounce or an acceptance never hides a delivery', async () => {
    const { apply, stateOf } = setup();
    await apply(
      event('e-1', { kind: 'delivered' }),
      event('e-2', { kind: 'bounced', bounceType: 'soft' }),
      event('e-3', { kind: 'accepted' }),
    );
    expect(stateOf('m-1')).toBe('delivered');
    await apply(event('e-4', { kind: 'bounced', bounceType: 'soft', mailId: 'm-2' }));
    expect(stateOf('m-2')).toBe('soft_bounced');
    await apply(event('e-5', { kind: 'delivered', mailId: 'm-2' }));
    expect(stateOf('m-2')).toBe('delivered');
    // Equal ranks: the later word wins (a delivery later refused by a bounce).
    await apply(event('e-6', { kind: 'bounced', bounceType: 'hard', mailId: 'm-2' }));
    expect(stateOf('m-2')).toBe('bounced');
  });

  it('finds a message by each form a provider echoes: the 250 id or its prefix, the Message-ID with or without brackets', async () => {
    const { apply, stateOf } = setup();
    const byReference = (eventId: string, reference: Partial<ProviderEvent>) =>
      apply(event(eventId, { mailId: null, ...reference }));
    expect(await byReference('r-1', { providerMessageId: '0100018c-abc-000000' })).toMatchObject({ applied: 1 });
    expect(await byReference('r-2', { providerMessageId: '7oJ3cLZdR2KZQ5Z3lV4p3A.filterdrecv-5bd-1-0' })).toMatchObject(
      { applied: 1 },
    );
    expect(await byReference('r-3', { messageIdHeader: 'm-1@acme.example' })).toMatchObject({ applied: 1 });
    expect(await byReference('r-4', { messageIdHeader: '<m-2@acme.example>' })).toMatchObject({ applied: 1 });
    expect(await byReference('r-5', { providerMessageId: 'unknown-id-0000' })).toMatchObject({
      applied: 0,
      unmatched: 1,
    });
    expect([stateOf('m-1'), stateOf('m-2')]).toEqual(['delivered', 'delivered']);
  });

  it('suppresses a hard bounce and a complaint in the same transaction, with their admin events', async () => {
    const { apply, read, store } = setup();
    await apply(
      event('h-1', { kind: 'bounced', bounceType: 'hard', status: '5.1.1' }),
      event('c-1', { kind: 'complaint', mailId: 'm-2', recipient: 'B@Example.net' }),
    );
    const listed = store.suppressions.list('acme', { after: null, limit: 10, address: null, now: Date.now() });
    expect(listed.map(({ address, source }) => ({ address, source }))).toEqual([
      { address: 'b@example.net', source: 'complaint' },
    ]);
    // The admin events name the entry by its digest, never by the address.
    const digest = store.suppressions.digestOf('b@example.net');
    expect(
      read<{ aggregate_id: string; payload: string }>(
        `SELECT aggregate_id, payload FROM outbox WHERE event_type = 'suppression.added' ORDER BY seq`,
      ).map((row) => [row.aggregate_id, JSON.parse(row.payload).address_digest, row.payload.includes('example.net')]),
    ).toEqual([
      [`acme/${digest}`, digest, false],
      [`acme/${digest}`, digest, false],
    ]);
  });

  it('settles requests of the same turn together, one failing only itself', async () => {
    const { store, read, stateOf } = setup();
    const ledger = store.providerLedger;
    const planOf = (event: ProviderEvent) => {
      const correlation = correlateProviderEvent(event, (by, value) => ledger.candidates(by, value, 'acme'));
      if (!correlation.matched) throw new Error('unmatched');
      return planProviderEvent(event, correlation.candidate, correlation.by, POLICY, 5_000);
    };
    const good = event('g-1', {});
    const bad = event('b-1', { mailId: 'm-2', kind: 'bounced', bounceType: 'hard' });
    // A suppression the store cannot hold (no address): this request's savepoint fails.
    const broken = { ...planOf(bad), suppression: { ...planOf(bad).suppression!, address: null as unknown as string } };
    const [first, second] = await Promise.allSettled([
      ledger.settle('acme', [{ event: good, plan: planOf(good) }], 5_000),
      ledger.settle('acme', [{ event: bad, plan: broken }], 5_000),
    ]);
    expect(first).toEqual({ status: 'fulfilled', value: ['applied'] });
    expect(second.status).toBe('rejected');
    expect(stateOf('m-1')).toBe('delivered');
    expect(stateOf('m-2')).toBeNull();
    expect(read<{ event_id: string }>(`SELECT event_id FROM provider_events`).map((row) => row.event_id)).toEqual([
      'g-1',
    ]);
  });

  it('forgets applied events before the retention mark: their effects stay', async () => {
    const { store, apply, read, stateOf } = setup();
    await apply(event('old-1', {}));
    expect(store.providerLedger.prune(5_001)).toBe(1);
    expect(read(`SELECT * FROM provider_events`)).toEqual([]);
    expect(stateOf('m-1')).toBe('delivered');
  });
});
