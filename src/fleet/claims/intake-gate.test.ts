import { describe, expect, it } from 'vitest';
import { IntakeGate } from './intake-gate.js';

describe('the drain’s intake gate', () => {
  it('is settled at once when no request is in flight', async () => {
    await expect(new IntakeGate().settled()).resolves.toBeUndefined();
  });

  it('settles once every request that passed it has been answered, failed ones too', async () => {
    const gate = new IntakeGate();
    let finish: () => void = () => undefined;
    const first = gate.through(() => new Promise<string>((resolve) => (finish = () => resolve('done'))));
    const second = gate.through(() => Promise.reject(new Error('refused')));
    let settled = false;
    const waiting = gate.settled().then(() => (settled = true));
    await expect(second).rejects.toThrow('refused');
    expect(settled).toBe(false);
    finish();
    await expect(first).resolves.toBe('done');
    await waiting;
    expect(settled).toBe(true);
  });
});
