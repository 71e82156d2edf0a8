import { describe, expect, it } from 'vitest';
import { endOfTurn } from './end-of-turn.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('what leaves at the end of the turn', () => {
  it('sends the entries of one turn as one batch, in order, and not before the turn ends', async () => {
    const sent: number[][] = [];
    const add = endOfTurn<number>((batch) => sent.push(batch));
    add(1);
    add(2);
    add(3);
    expect(sent).toEqual([]);
    await nextTurn();
    expect(sent).toEqual([[1, 2, 3]]);
  });

  it('starts a new batch in the next turn, and sends nothing for a turn that added nothing', async () => {
    const sent: string[][] = [];
    const add = endOfTurn<string>((batch) => sent.push(batch));
    add('a');
    await nextTurn();
    await nextTurn();
    add('b');
    add('c');
    await nextTurn();
    expect(sent).toEqual([['a'], ['b', 'c']]);
  });

  it('takes an entry added while a batch is being sent into the next batch', async () => {
    const sent: number[][] = [];
    const add = endOfTurn<number>((batch) => {
      sent.push(batch);
      if (batch.includes(1)) add(2);
    });
    add(1);
    await nextTurn();
    await nextTurn();
    expect(sent).toEqual([[1], [2]]);
  });
});
