import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimRecordCodec } from './claim-wire-schemas.js';

const KEY = 'ab'.repeat(16);
const claimRecordOf = (value: unknown) => {
  const read = claimRecordCodec.check(value);
  return read.ok ? read.value : null;
};

describe('claim records', () => {
  it('reads the three kinds of record and nothing else', () => {
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: [KEY] })).toEqual({
      kind: 'claim',
      node: 'n1',
      at: 5,
      keys: [KEY],
    });
    expect(claimRecordOf({ kind: 'take', node: 'n1', from: 'n2', at: 5, keys: [KEY] })).toMatchObject({
      kind: 'take',
      from: 'n2',
    });
    expect(claimRecordOf({ kind: 'take', node: 'n1', at: 5, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: [] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n.1', at: 5, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: ["x'); DROP TABLE fleet_claims; --"] })).toBeNull();
    expect(claimRecordOf({ kind: 'delete', node: 'n1', at: 5, keys: [KEY] })).toBeNull();
  });

  it('refuses instants that are not whole epoch milliseconds, and key lists beyond the bound', () => {
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: -1, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 1.5, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 2 ** 60, keys: [KEY] })).toBeNull();
    expect(
      claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: Array.from({ length: 10_001 }, () => KEY) }),
    ).toBeNull();
  });

  it('keeps only the fields of its kind', () => {
    expect(claimRecordOf({ kind: 'claim', node: 'n1', from: 'n2', at: 5, keys: [KEY], extra: 1 })).toEqual({
      kind: 'claim',
      node: 'n1',
      at: 5,
      keys: [KEY],
    });
  });

  it('never throws on a hostile value, and what it reads is well formed', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const record = claimRecordOf(value);
        if (record !== null) expect(record.keys.every((key) => /^[0-9a-f]{32}$/.test(key))).toBe(true);
      }),
    );
  });

  it('reads back what it writes, byte for byte as JSON.stringify wrote it', () => {
    const record = { kind: 'take' as const, node: 'n1', from: 'n2', at: 7, keys: [KEY] };
    expect(new TextDecoder().decode(claimRecordCodec.encode(record))).toBe(JSON.stringify(record));
    expect(claimRecordCodec.decode(claimRecordCodec.encode(record))).toEqual(record);
  });
});
