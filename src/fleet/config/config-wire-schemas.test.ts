import { describe, expect, it } from 'vitest';
import { storedConfigCodec } from './config-wire-schemas.js';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

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
    expect(storedConfigCodec.read(bytes({ key: { kind: 'tenant', tenantId: 't1' }, rows: null, changes: [] })).ok).toBe(
      false,
    );
    expect(
      storedConfigCodec.read(bytes({ key: { kind: 'tenant', tenantId: 't1' }, rows: {}, origin: 'n1', changes: [] }))
        .ok,
    ).toBe(false);
    expect(
      storedConfigCodec.read(bytes({ key: { kind: 'other', tenantId: 't1' }, rows: null, origin: 'n1', changes: [] }))
        .ok,
    ).toBe(false);
  });
});
