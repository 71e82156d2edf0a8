import { describe, expect, it } from 'vitest';
import { deadline, within } from './within.js';

describe('bounded waits', () => {
  it('within: resolves when the work ends or when the time is up, whichever is first', async () => {
    let ended = false;
    await within(new Promise(() => undefined), 10);
    await within(
      Promise.resolve().then(() => (ended = true)),
      10_000,
    );
    expect(ended).toBe(true);
  });

  it("deadline: the work's result, or a rejection naming the work once the time is up", async () => {
    await expect(deadline(Promise.resolve(7), 1000, 'the read')).resolves.toBe(7);
    await expect(deadline(new Promise(() => undefined), 10, 'the read')).rejects.toThrow(
      'the read took longer than 10 ms',
    );
    await expect(deadline(Promise.reject(new Error('refused')), 1000, 'the read')).rejects.toThrow('refused');
  });
});
