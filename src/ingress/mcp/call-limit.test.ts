import { describe, expect, it } from 'vitest';
import { callLimit } from './call-limit.js';

describe('callLimit', () => {
  it("allows a minute's worth at once, then one as each refills, per caller", () => {
    const limit = callLimit(60);
    const start = 1_000_000;
    for (let call = 0; call < 60; call += 1) expect(limit.take('agent', start)).toBe(0);
    expect(limit.take('agent', start)).toBe(1);
    // Another credential has its own bucket.
    expect(limit.take('other', start)).toBe(0);
    // One a second comes back.
    expect(limit.take('agent', start + 999)).toBe(1);
    expect(limit.take('agent', start + 1000)).toBe(0);
    expect(limit.take('agent', start + 1000)).toBe(1);
  });

  it('says how long to wait, in whole seconds', () => {
    const limit = callLimit(2);
    expect(limit.take('agent', 0)).toBe(0);
    expect(limit.take('agent', 0)).toBe(0);
    expect(limit.take('agent', 0)).toBe(30);
    expect(limit.take('agent', 29_000)).toBe(1);
    expect(limit.take('agent', 30_000)).toBe(0);
  });

  it('never refills past a full bucket, however long the caller was away', () => {
    const limit = callLimit(3);
    expect(limit.take('agent', 0)).toBe(0);
    const later = 3_600_000;
    for (let call = 0; call < 3; call += 1) expect(limit.take('agent', later)).toBe(0);
    expect(limit.take('agent', later)).toBeGreaterThan(0);
  });

  it('limits nothing at 0', () => {
    const limit = callLimit(0);
    for (let call = 0; call < 1000; call += 1) expect(limit.take('agent', 0)).toBe(0);
  });
});
