import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claimRecordCodec, latestStateCodec, pubAckCodec, storedConfigCodec } from './wire-schemas.js';

const KEY = 'ab'.repeat(16);
const claimRecordOf = (value: unknown) => {
  const read = claimRecordCodec.check(value);
  return read.ok ? read.value : null;
};
const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

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

  it('refuses instants that are not whole epoch milliseconds, and key lists beyond the bound', () => {
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: -1, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 1.5, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 2 ** 60, keys: [KEY] })).toBeNull();
    expect(claimRecordOf({ kind: 'claim', node: 'n1', at: 5, keys: Array.from({ length: 10_001 }, () => KEY) })).toBeNull();
  });

  it('keeps only the fields of its kind', () => {
    expect(claimRecordOf({ kind: 'claim', node: 'n1', from: 'n2', at: 5, keys: [KEY], extra: 1 })).toEqual({ kind: 'claim', node: 'n1', at: 5, keys: [KEY] });
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

describe('configuration values', () => {
  const change = {
    eventId: 'e1',
    occurredAt: 1,
    actor: 'admin',
    command: 'tenant.create',
    tenantId: 't1',
    aggregateType: 'tenant',
    aggregateId: 't1',
    eventType: 'tenant.created',
    eventVersion: 1,
    data: { name: 'T' },
    correlationId: null,
    node: 'n1',
  };

  it('reads a stored value with its key', () => {
    const stored = { key: { kind: 'tenant', tenantId: 't1' }, rows: [{ id: 't1' }], origin: 'n1', changes: [change] };
    expect(storedConfigCodec.decode(bytes(stored))).toEqual(stored);
    expect(storedConfigCodec.decode(bytes({ ...stored, rows: null })).rows).toBeNull();
  });

  it('refuses a value without its key, origin or changes', () => {
    expect(storedConfigCodec.read(bytes({ rows: null, origin: 'n1', changes: [] })).ok).toBe(false);
    expect(storedConfigCodec.read(bytes({ key: { kind: 'tenant', tenantId: 't1' }, rows: null, changes: [] })).ok).toBe(false);
    expect(storedConfigCodec.read(bytes({ key: { kind: 'tenant', tenantId: 't1' }, rows: {}, origin: 'n1', changes: [] })).ok).toBe(false);
    expect(storedConfigCodec.read(bytes({ key: { kind: 'other', tenantId: 't1' }, rows: null, origin: 'n1', changes: [] })).ok).toBe(false);
  });
});

describe('latest states', () => {
  it('keeps the field order the merge writes, so that an unchanged value compares equal', () => {
    const state = {
      tenant_id: 't1',
      message_id: null,
      message_pk: 1,
      handoff_state: 'queued',
      provider_state: 'unknown',
      rank: 10,
      provider_rank: 0,
      version: 3,
      at: '2026-01-01T00:00:00.000Z',
      handoff_version: 3,
      provider_version: 0,
      reported_at: null,
    };
    expect(JSON.stringify(latestStateCodec.decode(bytes(state)))).toBe(JSON.stringify(state));
  });
});

describe('JetStream acknowledgements', () => {
  it('reads a sequence or an API error', () => {
    expect(pubAckCodec.decode(bytes({ stream: 'S', seq: 4 })).seq).toBe(4);
    expect(pubAckCodec.decode(bytes({ error: { code: 400, err_code: 10071, description: 'wrong last sequence' } })).error?.err_code).toBe(10071);
    expect(pubAckCodec.read(bytes({ seq: 'four' })).ok).toBe(false);
  });
});
