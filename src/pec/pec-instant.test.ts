import { describe, expect, it } from 'vitest';
import { pecInstant } from './pec-instant.js';

describe('pecInstant', () => {
  it('honours the zone: the same wall clock is earlier in UTC east of Greenwich', () => {
    expect(pecInstant('15/01/2024', '10:30:00', '+0100')).toBe(Date.UTC(2024, 0, 15, 9, 30));
    expect(pecInstant('15/01/2024', '10:30:00', '+0530')).toBe(Date.UTC(2024, 0, 15, 5, 0));
    expect(pecInstant('15/01/2024', '10:30:00', '-0330')).toBe(Date.UTC(2024, 0, 15, 14, 0));
  });

  it('crosses days and leap years', () => {
    expect(pecInstant('01/01/2024', '00:30:00', '+0200')).toBe(Date.UTC(2023, 11, 31, 22, 30));
    expect(pecInstant('29/02/2024', '12:00:00', '+0000')).toBe(Date.UTC(2024, 1, 29, 12));
    expect(pecInstant('29/02/2023', '12:00:00', '+0000')).toBeNull();
  });

  it('answers null for anything malformed or out of range', () => {
    for (const [day, time, zone] of [
      ['32/01/2024', '10:00:00', '+0100'],
      ['15/13/2024', '10:00:00', '+0100'],
      ['00/01/2024', '10:00:00', '+0100'],
      ['15/01/2024', '10:60:00', '+0100'],
      ['15/01/2024', '10:00:60', '+0100'],
      ['15/01/2024', '10:00:00', '+1500'],
      ['15/01/0024', '10:00:00', '+0100'],
      ['15/01/2024', '10:00:00', ''],
      ['15/01/2024 ', `10:00:00${' '.repeat(100)}`, '+0100'],
    ]) {
      expect(pecInstant(day as string, time as string, zone as string), `${day} ${time} ${zone}`).toBeNull();
    }
  });
});
