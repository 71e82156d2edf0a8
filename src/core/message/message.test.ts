import { describe, expect, it } from 'vitest';
import { parsePriority, toPriority } from './message.js';

describe('priority', () => {
  it('reads 0-3 and the labels immediate, high, normal, low, in any case and with spaces around', () => {
    expect(['0', '1', '2', '3'].map(parsePriority)).toEqual([0, 1, 2, 3]);
    expect(['immediate', 'HIGH', ' Normal ', 'low'].map(parsePriority)).toEqual([0, 1, 2, 3]);
  });

  it('answers undefined for anything else', () => {
    for (const bad of ['', '4', '-1', '1.0', '01', 'urgent', 'highest']) expect(parsePriority(bad)).toBeUndefined();
  });

  it('maps a label or a number given as such', () => {
    expect(toPriority('immediate')).toBe(0);
    expect(toPriority('low')).toBe(3);
    expect(toPriority(1)).toBe(1);
  });
});
