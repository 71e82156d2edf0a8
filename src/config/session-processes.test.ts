import { describe, expect, it } from 'vitest';
import { defaultSessionProcesses } from './session-processes.js';

describe('smtp.session_processes by default', () => {
  it('keeps the sessions on the main thread below 4 cores, then one process per 4 cores, at most 8', () => {
    expect([1, 2, 3, 4, 7, 8, 12, 16, 32, 64, 128].map(defaultSessionProcesses)).toEqual([
      0, 0, 0, 1, 1, 2, 3, 4, 8, 8, 8,
    ]);
  });
});
