import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  adoptionCandidates,
  indexOf,
  leaseAbandoned,
  replayPlan,
  type AdoptionLease,
  type SpoolRecord,
} from './cluster-spool.js';
import type { StoredTransfer } from './drain.js';
import type { NodeSighting } from './membership.js';

const sighting = (
  node: string,
  instance: string,
  seenAt: number,
  state: NodeSighting['beat']['state'] = 'active',
): NodeSighting => ({
  beat: { node_id: node, instance, state, started_at: 0, version: 'test' },
  seenAt,
});

describe('which spools a survivor may adopt', () => {
  const now = 100_000;
  const after = 30_000;

  it('adopts a node silent (or stopped) for the delay, never itself, never a node heard from within it', () => {
    const spools = [
      { node: 'n1', instance: 'a' },
      { node: 'n2', instance: 'b' },
      { node: 'n3', instance: 'c' },
      { node: 'n4', instance: 'd' },
    ];
    const seen = [
      sighting('n1', 'a', 0),
      sighting('n2', 'b', now - after),
      sighting('n3', 'c', now - after + 1),
      sighting('n4', 'd', 0, 'stopped'),
    ];
    expect(adoptionCandidates('n1', spools, seen, now, after)).toEqual([
      { node: 'n2', instance: 'b' },
      { node: 'n4', instance: 'd' },
    ]);
  });

  it('adopts the spool of a lost disk at once when its node id runs on another one, never one whose node was not read', () => {
    const spools = [
      { node: 'n2', instance: 'old' },
      { node: 'n2', instance: 'new' },
      { node: 'n9', instance: 'x' },
    ];
    expect(adoptionCandidates('n1', spools, [sighting('n2', 'new', now)], now, after)).toEqual([
      { node: 'n2', instance: 'old' },
    ]);
  });
});

describe('an adoption lease left by its adopter', () => {
  const lease: AdoptionLease = { node: 'n2', instance: 'b', by: 'n3', state: 'adopting', at: 0, adopted: 0 };

  it('can be taken over once the adopter has been silent for the delay, never when done or while the adopter lives', () => {
    expect(leaseAbandoned(lease, sighting('n3', 'c', 1_000), 40_000, 30_000)).toBe(true);
    expect(leaseAbandoned(lease, sighting('n3', 'c', 20_000), 40_000, 30_000)).toBe(false);
    expect(leaseAbandoned({ ...lease, state: 'done' }, sighting('n3', 'c', 0), 40_000, 30_000)).toBe(false);
    expect(leaseAbandoned(lease, undefined, 40_000, 30_000)).toBe(true);
  });
});

describe('what a survivor replays from a lost spool', () => {
  const entry = (pk: number, subject = `s${pk}`): StoredTransfer => ({
    origin_pk: pk,
    tenant_id: 't',
    id: `m${pk}`,
    account_id: 'a',
    priority: 2,
    batch_code: null,
    source: 'http',
    payload: null,
    raw_base64: null,
    mail_from: 'a@example.com',
    rcpt_to: 'b@example.com',
    subject,
    message_id_header: null,
    size_bytes: 1,
    state: 'queued',
    attempts: 0,
    next_attempt_at: 0,
    created_at: 0,
    deferred_at: null,
    deferred_reason: null,
  });

  it('replays each message’s latest entry, not one whose end was recorded after it, and one written again after its end', () => {
    const records: SpoolRecord[] = [
      { seq: 7, ended: [2] },
      { seq: 1, entries: [entry(1), entry(2), entry(3)] },
      { seq: 4, entries: [entry(1, 'updated')] },
      { seq: 5, ended: [1, 3] },
      { seq: 6, entries: [entry(3, 'resent')] },
      { seq: 8, entries: [entry(4)] },
    ];
    expect([...replayPlan(records.map(indexOf))]).toEqual([
      [3, 6],
      [4, 8],
    ]);
  });

  it('agrees with replaying the writes and ends one by one, in any order the records are read', () => {
    const step = fc.record({ pk: fc.integer({ min: 1, max: 6 }), end: fc.boolean() });
    fc.assert(
      fc.property(
        fc.array(fc.array(step, { minLength: 1, maxLength: 4 }), { maxLength: 12 }),
        fc.integer(),
        (groups, seed) => {
          // Each group is one record: all writes, or all ends.
          const records: SpoolRecord[] = groups.map((group, index) =>
            group[0]?.end === true
              ? { seq: index + 1, ended: group.map((one) => one.pk) }
              : { seq: index + 1, entries: group.map((one) => entry(one.pk, `v${index}`)) },
          );
          const expected = new Map<number, number>();
          for (const record of records)
            if ('ended' in record) for (const pk of record.ended) expected.delete(pk);
            else for (const written of record.entries) expected.set(written.origin_pk, record.seq);
          const shuffled = [...records].sort((a, b) => ((a.seq * 7919 + seed) % 13) - ((b.seq * 7919 + seed) % 13));
          expect(new Map([...replayPlan(shuffled.map(indexOf))].sort((a, b) => a[0] - b[0]))).toEqual(
            new Map([...expected].sort((a, b) => a[0] - b[0])),
          );
        },
      ),
    );
  });
});
