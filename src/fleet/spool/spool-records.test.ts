import fc from 'fast-check';
import type { StoredMsg } from '@nats-io/jetstream';
import { describe, expect, it } from 'vitest';
import { deflate, ENCODING, entriesRecord, packEntries, wireOf } from './spool-records.js';
import { spoolWireRecordCodec } from './spool-wire-schemas.js';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
/** A record as the stream hands it back: its bytes, and the header saying whether they are deflated. */
const stored = (data: Uint8Array, encoding?: string): StoredMsg =>
  ({ data, header: { get: (name: string) => (name === ENCODING ? encoding : undefined) } }) as unknown as StoredMsg;

const entry = {
  tenant_id: 't1',
  id: 'c1',
  account_id: 'main',
  priority: 2,
  batch_code: null,
  source: 'smtp',
  payload: null,
  mail_from: 'a@example.com',
  rcpt_to: 'b@example.com',
  subject: null,
  message_id_header: '<m@example.com>',
  size_bytes: 10,
  state: 'deferred',
  attempts: 1,
  next_attempt_at: 1_700_000_000_000,
  created_at: 1_700_000_000_000,
  deferred_at: 1_700_000_000_000,
  deferred_reason: '451 try later',
  origin_pk: 9,
  raw_base64: 'U3ViamVjdDogaGkNCg0KaGk=',
};

describe('packing spool entries into records', () => {
  it('keeps the order, takes every entry once, and fills no record past the limit (an entry alone over it has one of its own)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 60 }),
        fc.integer({ min: 50, max: 1000 }),
        (sizes, limit) => {
          const groups = packEntries(sizes, limit);
          expect(groups.flat()).toEqual(sizes.map((_, index) => index));
          for (const group of groups) {
            const bytes = group.reduce((sum, index) => sum + (sizes[index] as number) + 1, 0);
            if (group.length > 1) expect(bytes).toBeLessThanOrEqual(limit);
          }
          // Greedy: a record is closed only when the next entry would not fit.
          for (let at = 1; at < groups.length; at += 1) {
            const previous = groups[at - 1] as number[];
            const bytes = previous.reduce((sum, index) => sum + (sizes[index] as number) + 1, 0);
            expect(bytes + (sizes[(groups[at] as number[])[0] as number] as number) + 1).toBeGreaterThan(limit);
          }
        },
      ),
    );
  });
});

describe('reading spool records back', () => {
  it('reads a deflated group of entries as the writer packs them', async () => {
    const record = entriesRecord([bytes(entry), bytes({ ...entry, origin_pk: 10, raw_base64: null })]);
    expect(wireOf(stored(await deflate(record, { level: 1 }), 'deflate'))).toEqual({
      entries: [entry, { ...entry, origin_pk: 10, raw_base64: null }],
    });
  });

  it('reads the records an earlier version wrote: one entry each, its raw bytes perhaps in an object', () => {
    expect(wireOf(stored(bytes(entry)))).toEqual(entry);
    expect(wireOf(stored(bytes({ ...entry, raw_base64: null, raw_object: 'n1.i.9.raw' })))).toEqual({
      ...entry,
      raw_base64: null,
      raw_object: 'n1.i.9.raw',
    });
  });

  it('writes ends and large entries’ records byte for byte as JSON.stringify did', () => {
    expect(new TextDecoder().decode(spoolWireRecordCodec.encode({ ended: [3, 4] }))).toBe('{"ended":[3,4]}');
    expect(new TextDecoder().decode(spoolWireRecordCodec.encode({ object: 'n1.i.9' }))).toBe('{"object":"n1.i.9"}');
  });

  it('refuses a record that is not one of the spool’s, with its wire code', () => {
    expect(() => wireOf(stored(new TextEncoder().encode('{"entries":')))).toThrow(
      expect.objectContaining({ code: 'WIRE_NOT_JSON' }),
    );
    expect(() => wireOf(stored(bytes({ entries: [{ ...entry, origin_pk: 'nine' }] })))).toThrow(
      expect.objectContaining({ code: 'WIRE_SHAPE' }),
    );
  });
});
