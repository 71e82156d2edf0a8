import { describe, expect, it } from 'vitest';
import { rangeOf } from './files.js';

describe("a download's Range", () => {
  it('reads one range, a suffix, and an open end, clamped to the file', () => {
    expect(rangeOf('bytes=0-99', 1000)).toEqual([0, 99]);
    expect(rangeOf('bytes=900-', 1000)).toEqual([900, 999]);
    expect(rangeOf('bytes=900-5000', 1000)).toEqual([900, 999]);
    expect(rangeOf('bytes=-10', 1000)).toEqual([990, 999]);
    expect(rangeOf('bytes=-5000', 1000)).toEqual([0, 999]);
  });

  it('serves the whole file for no range, several ranges, another unit or one backwards', () => {
    for (const header of [undefined, 'bytes=0-1,5-9', 'items=0-1', 'bytes=9-5', 'bytes=-', 'nonsense'])
      expect(rangeOf(header, 1000)).toBeNull();
  });

  it('refuses a range that starts past the end, and an empty suffix', () => {
    expect(rangeOf('bytes=1000-', 1000)).toBe('unsatisfiable');
    expect(rangeOf('bytes=-0', 1000)).toBe('unsatisfiable');
  });
});
