import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packEntries } from './spool-records.js';

describe('packing spool entries into records', () => {
  it('keeps the order, takes every entry once, and fills no record past the limit (an entry alone over it has one of its own)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 60 }), fc.integer({ min: 50, max: 1000 }), (sizes, limit) => {
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
      }),
    );
  });
});
