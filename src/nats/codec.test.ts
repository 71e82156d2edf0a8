import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isWireError, jsonCodec } from './codec.js';

const point = jsonCodec(z.object({ x: z.number(), y: z.number() }), 'point');
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('the JSON codec', () => {
  it('writes the bytes JSON.stringify writes, so that what earlier versions wrote still reads', () => {
    const value = { x: 1, y: 2 };
    expect(new TextDecoder().decode(point.encode(value))).toBe(JSON.stringify(value));
    expect(point.decode(bytes('{"x":1,"y":2}'))).toEqual(value);
  });

  it('answers bytes that are not JSON with WIRE_NOT_JSON, as data or thrown', () => {
    const read = point.read(bytes('{"x":'));
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.error.toJSON()).toMatchObject({ code: 'WIRE_NOT_JSON', details: { what: 'point' } });
    expect(() => point.decode(bytes('not json'))).toThrow(expect.objectContaining({ code: 'WIRE_NOT_JSON' }));
  });

  it('answers JSON of another shape with WIRE_SHAPE, naming where it differs', () => {
    const read = point.read(bytes('{"x":1,"y":"2"}'));
    expect(read.ok).toBe(false);
    if (!read.ok) {
      expect(read.error.code).toBe('WIRE_SHAPE');
      expect(read.error.details).toMatchObject({ what: 'point', issues: [{ path: 'y' }] });
      expect(isWireError(read.error)).toBe(true);
    }
    expect(() => point.decode(bytes('null'))).toThrow(expect.objectContaining({ code: 'WIRE_SHAPE' }));
  });

  it('checks a value already parsed the same way', () => {
    expect(point.check({ x: 1, y: 2 })).toEqual({ ok: true, value: { x: 1, y: 2 } });
    expect(point.check({ x: 1 }).ok).toBe(false);
  });

  it('keeps errors JSON-safe: they cross threads and logs as data', () => {
    const read = point.read(bytes('[1,2,3]'));
    if (read.ok) throw new Error('read a list as a point');
    expect(JSON.parse(JSON.stringify(read.error))).toMatchObject({ code: 'WIRE_SHAPE', transient: false });
    expect(isWireError(new Error('other'))).toBe(false);
  });
});
