import { describe, expect, it } from 'vitest';
import { nodeBeatCodec } from './link-wire-schemas.js';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

describe('membership', () => {
  it('reads heartbeats as written', () => {
    const beat = { node_id: 'n1', instance: 'i', state: 'active', started_at: 1, version: '0.1.0' };
    expect(nodeBeatCodec.decode(bytes(beat))).toEqual(beat);
  });
});
