import { describe, expect, it } from 'vitest';
import { uuidv7 } from './system.js';

describe('uuidv7', () => {
  it('is a version 7, variant 1 UUID that sorts by time', () => {
    const early = uuidv7(1_700_000_000_000);
    const late = uuidv7(1_700_000_000_001);
    expect(early).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(early < late).toBe(true);
    expect(early.slice(0, 13)).toBe('018bcfe5-6800');
    expect(uuidv7(1)).not.toBe(uuidv7(1));
  });
});
