import { describe, expect, it } from 'vitest';
import { adoptionLeaseCodec, spoolWireRecordCodec } from './spool-wire-schemas.js';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

const entry = {
  origin_pk: 7,
  tenant_id: 't1',
  id: 'c1',
  account_id: 'main',
  priority: 3,
  batch_code: null,
  source: 'http',
  payload: '{}',
  raw_base64: null,
  mail_from: 'a@example.com',
  rcpt_to: 'b@example.com',
  subject: 'hi',
  message_id_header: null,
  size_bytes: 10,
  state: 'queued',
  attempts: 0,
  next_attempt_at: 1,
  created_at: 1,
  deferred_at: null,
  deferred_reason: null,
};

describe('spool records', () => {
  it('reads each form the stream holds, an earlier version’s one-entry record too', () => {
    expect(spoolWireRecordCodec.decode(bytes({ entries: [entry] }))).toEqual({ entries: [entry] });
    expect(spoolWireRecordCodec.decode(bytes({ ended: [1, 2] }))).toEqual({ ended: [1, 2] });
    expect(spoolWireRecordCodec.decode(bytes({ object: 'n1.x' }))).toEqual({ object: 'n1.x' });
    expect(spoolWireRecordCodec.decode(bytes({ ...entry, raw_object: 'n1.raw' }))).toEqual({
      ...entry,
      raw_object: 'n1.raw',
    });
  });

  it('refuses a record of none of those forms', () => {
    expect(spoolWireRecordCodec.read(bytes({ entries: [{ ...entry, state: 'sent' }] })).ok).toBe(false);
    expect(spoolWireRecordCodec.read(bytes({ ended: ['1'] })).ok).toBe(false);
  });
});

describe('leases', () => {
  it('reads leases as written', () => {
    const lease = { node: 'n1', instance: 'i', by: 'n2', state: 'adopting', at: 1, adopted: 0 };
    expect(adoptionLeaseCodec.decode(bytes(lease))).toEqual(lease);
    expect(adoptionLeaseCodec.read(bytes({ ...lease, state: 'lost' })).ok).toBe(false);
  });
});
