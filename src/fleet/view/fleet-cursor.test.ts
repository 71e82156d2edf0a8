import { describe, expect, it } from 'vitest';
import type { FleetCursor } from '../../core/fleet/index.js';
import { decodeFleetCursor, encodeFleetCursor } from './fleet-cursor.js';

const token = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('the fleet cursor token', () => {
  const cursor: FleetCursor = {
    order: 'newest',
    nodes: { n1: { after: { pk: 12 }, skip: 0 }, n2: 'done', n3: { after: null, skip: 2 } },
  };

  it('is the base64url of the JSON it always was, and reads back', () => {
    expect(encodeFleetCursor(cursor)).toBe(token(cursor));
    expect(decodeFleetCursor(encodeFleetCursor(cursor), 'newest')).toEqual(cursor);
  });

  it('refuses a cursor of another order, of another shape, or not JSON at all, as a 400', () => {
    for (const [text, order] of [
      [encodeFleetCursor(cursor), 'next_attempt'],
      [token({ ...cursor, nodes: { n1: { after: { pk: 1.5 }, skip: 0 } } }), 'newest'],
      [token({ ...cursor, nodes: { n1: { after: null, skip: -1 } } }), 'newest'],
      [Buffer.from('{"order":').toString('base64url'), 'newest'],
    ] as const)
      expect(() => decodeFleetCursor(text, order)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});
