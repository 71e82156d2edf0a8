import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { holderAfter, type ClaimRecord } from '../core/fleet/claim-ledger.js';
import { createSqliteClaimIndex } from './claim-index.js';
import { openDatabase } from './database.js';

/** The fleet's claim index (migration 15): its SQL must say what core's rule says, record by record. */
describe('fleet claim index', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const open = () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-claims-'));
    dirs.push(dir);
    const { db } = openDatabase({ path: join(dir, 'db.sqlite') });
    return { db, index: createSqliteClaimIndex(db) };
  };

  const KEYS = ['0'.repeat(32), '1'.repeat(32), 'a'.repeat(32), 'f'.repeat(32)];
  const NODES = ['n1', 'n2', 'n3'];
  const record: fc.Arbitrary<ClaimRecord> = fc.oneof(
    fc.record({
      kind: fc.constant('claim' as const),
      node: fc.constantFrom(...NODES),
      at: fc.nat(1000),
      keys: fc.subarray(KEYS, { minLength: 1 }),
    }),
    fc.record({
      kind: fc.constant('assign' as const),
      node: fc.constantFrom(...NODES),
      at: fc.nat(1000),
      keys: fc.subarray(KEYS, { minLength: 1 }),
    }),
    fc.record({
      kind: fc.constant('take' as const),
      node: fc.constantFrom(...NODES),
      from: fc.constantFrom(...NODES),
      at: fc.nat(1000),
      keys: fc.subarray(KEYS, { minLength: 1 }),
    }),
  );

  it('holds each key where the log order says, whatever records come in whatever batches', () => {
    fc.assert(
      fc.property(fc.array(fc.array(record, { minLength: 1, maxLength: 4 }), { maxLength: 8 }), (batches) => {
        const { db, index } = open();
        try {
          const expected = new Map<string, string>();
          let seq = 0;
          for (const batch of batches) {
            seq += batch.length;
            index.apply(seq, batch);
            for (const entry of batch)
              for (const key of entry.keys) {
                const holder = holderAfter(entry, expected.get(key));
                if (holder !== undefined) expected.set(key, holder);
              }
          }
          expect(Object.fromEntries(index.holders(KEYS))).toEqual(Object.fromEntries(expected));
          expect(index.appliedSeq()).toBe(seq);
        } finally {
          db.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('answers the first claim of a key, not a later one, and moves it only from the holder named', () => {
    const { index } = open();
    const [k1, k2] = KEYS as [string, string];
    index.apply(2, [
      { kind: 'claim', node: 'n1', at: 10, keys: [k1] },
      { kind: 'claim', node: 'n2', at: 11, keys: [k1, k2] },
    ]);
    expect(index.holders([k1, k2])).toEqual(
      new Map([
        [k1, 'n1'],
        [k2, 'n2'],
      ]),
    );
    // n3 takes k1 from n2, which does not hold it: nothing moves. Then from n1, which does.
    index.apply(4, [
      { kind: 'take', node: 'n3', from: 'n2', at: 12, keys: [k1] },
      { kind: 'take', node: 'n2', from: 'n1', at: 13, keys: [k1] },
    ]);
    expect(index.holders([k1])).toEqual(new Map([[k1, 'n2']]));
    expect(index.appliedSeq()).toBe(4);
  });

  it('forgets claims older than the retention, and keeps the newer', () => {
    const { index } = open();
    const [k1, k2] = KEYS as [string, string];
    index.apply(1, [{ kind: 'claim', node: 'n1', at: 100, keys: [k1] }]);
    index.apply(2, [{ kind: 'claim', node: 'n1', at: 200, keys: [k2] }]);
    expect(index.prune(150)).toBe(1);
    expect(index.holders([k1, k2])).toEqual(new Map([[k2, 'n1']]));
  });
});
