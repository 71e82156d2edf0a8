import { describe, expect, it } from 'vitest';
import { holderAfter } from './claim-ledger.js';

const KEY = 'ab'.repeat(16);

describe('claim records', () => {
  it('gives a key to its first claimer, moves it by take only from its holder, and by assign always', () => {
    const claim = { kind: 'claim' as const, node: 'n2', at: 0, keys: [KEY] };
    expect(holderAfter(claim, undefined)).toBe('n2');
    expect(holderAfter(claim, 'n1')).toBe('n1');
    expect(holderAfter({ kind: 'take', node: 'n3', from: 'n1', at: 0, keys: [KEY] }, 'n1')).toBe('n3');
    expect(holderAfter({ kind: 'take', node: 'n3', from: 'n1', at: 0, keys: [KEY] }, 'n2')).toBe('n2');
    expect(holderAfter({ kind: 'assign', node: 'n3', at: 0, keys: [KEY] }, 'n2')).toBe('n3');
  });
});
