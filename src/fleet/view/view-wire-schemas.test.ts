import { describe, expect, it } from 'vitest';
import { fleetCursorCodec, viewReplyCodec } from './view-wire-schemas.js';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

describe('the fleet view', () => {
  it('reads a value or an error as data, and nothing else', () => {
    expect(viewReplyCodec.decode(bytes({ ok: { a: 1 } }))).toEqual({ ok: { a: 1 } });
    expect(viewReplyCodec.decode(bytes({ error: { code: 'NOT_FOUND', message: 'm' } }))).toEqual({
      error: { code: 'NOT_FOUND', message: 'm' },
    });
    expect(viewReplyCodec.read(bytes({ error: 'x' })).ok).toBe(false);
    expect(viewReplyCodec.read(bytes({})).ok).toBe(false);
  });

  it('reads a cursor it gave out, and refuses a position that is not one', () => {
    const cursor = {
      order: 'newest',
      nodes: { n1: 'done', n2: { after: { pk: 4 }, skip: 0 }, n3: { after: null, skip: 2 } },
    };
    expect(fleetCursorCodec.decode(bytes(cursor))).toEqual(cursor);
    expect(fleetCursorCodec.read(bytes({ ...cursor, nodes: { n1: { after: null, skip: -1 } } })).ok).toBe(false);
    expect(fleetCursorCodec.read(bytes({ ...cursor, nodes: { n1: { skip: 0 } } })).ok).toBe(false);
    expect(fleetCursorCodec.read(bytes({ ...cursor, nodes: [] })).ok).toBe(false);
  });
});
