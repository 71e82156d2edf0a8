import { describe, expect, it } from 'vitest';
import { framedParts, partsOf } from './body-objects.js';

describe('a body object of sealed parts', () => {
  it('gives back the parts it was framed from, empty ones and none included', () => {
    for (const parts of [
      [],
      [Buffer.alloc(0)],
      [Buffer.from('one part')],
      [Buffer.alloc(70_000, 1), Buffer.from('second'), Buffer.alloc(0), Buffer.alloc(3, 255)],
    ])
      expect(partsOf(framedParts(parts))).toEqual(parts);
  });

  it('refuses bytes cut short, inside a length or inside a part', () => {
    const framed = framedParts([Buffer.from('abcdef'), Buffer.from('gh')]);
    expect(() => partsOf(framed.subarray(0, framed.length - 1))).toThrow(/inside a part/);
    expect(() => partsOf(framed.subarray(0, 12))).toThrow(/inside a part length/);
  });
});
