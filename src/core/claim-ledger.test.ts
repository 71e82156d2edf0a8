import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimRecordOf, holderAfter } from './claim-ledger.js';

const KEY = 'ab'.repeat(16);

describe('claim records', () => {
  it('reads the three kinds of record and nothing else', () => {
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: [KEY] })).toEqual({ kind: 'claim', node: 'n1', at: 5, keys: [KEY] });
    expect(claimRecordOf({ kind: 'take', node: 'n1', from: 'n2', at: 5, keys: [KEY] })).toMatchObject({ kind: 'take', from: 'n2' });
    expect(claimRecordOf({ kind: 'take', node: 'n1', at: 5, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: [] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n.1', at: 5, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: ["x'); DROP TABLE fleet_claims; --"] })).toBeNull();
    expect(claimRecordOf({ kind: 'delete', node: 'n1', at: 5, keys: [KEY] })).toBeNull();
  });

  it('never throws on a hostile value, and what it reads is well formed', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const record = claimRecordOf(value);
        if (record !== null) expect(record.keys.every((key) => /^[0-9a-f]{32}$/.test(key))).toBe(true);
      }),
    );
  });

  it('gives a key to its first claimer, moves it by take only from its holder, and by assign always', () => {
    const claim = { kind: 'claim' as const, node: 'n2', at: 0, keys: [KEY] };
    expect(holderAfter(claim, undefined)).toBe('n2');
    expect(holderAfter(claim, 'n1')).toBe('n1');
    expect(holderAfter({ kind: 'take', node: 'n3', from: 'n1', at: 0, keys: [KEY] }, 'n1')).toBe('n3');
    expect(holderAfter({ kind: 'take', node: 'n3', from: 'n1', at: 0, keys: [KEY] }, 'n2')).toBe('n2');
    expect(holderAfter({ kind: 'assign', node: 'n3', at: 0, keys: [KEY] }, 'n2')).toBe('n3');
  });
});
