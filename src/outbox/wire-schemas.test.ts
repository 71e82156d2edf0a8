import { describe, expect, it } from 'vitest';
import { latestStateCodec, pubAckCodec } from './wire-schemas.js';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

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
    expect(
      pubAckCodec.decode(bytes({ error: { code: 400, err_code: 10071, description: 'wrong last sequence' } })).error
        ?.err_code,
    ).toBe(10071);
    expect(pubAckCodec.read(bytes({ seq: 'four' })).ok).toBe(false);
  });
});
