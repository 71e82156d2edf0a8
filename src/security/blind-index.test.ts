import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addressDigest } from '../core/index.js';
import { createBlindIndex } from './blind-index.js';

describe('blind index', () => {
  const index = createBlindIndex(randomBytes(32));

  it('digests equal values of a kind equally, and kinds, values and keys apart', () => {
    const words = ['ann', 'invoice', 'a-very-long-word-of-many-letters', 'fattura', 'ann'];
    const digests = index.digest('word', words);
    expect(digests[0]).toBe(digests[4]);
    expect(new Set(digests).size).toBe(4);
    expect(index.digest('prefix', ['ann'])[0]).not.toBe(digests[0]);
    expect(createBlindIndex(randomBytes(32)).digest('word', ['ann'])[0]).not.toBe(digests[0]);
    for (const digest of digests) expect(digest).toMatch(/^w[0-9a-f]{16}$/);
  });

  it('keeps a short value apart from a long one whose hash could start like it', () => {
    // 14 bytes is the longest value that is its own block, 15 the shortest that is hashed.
    const [short, long] = index.digest('address', ['a'.repeat(14), 'a'.repeat(15)]);
    expect(short).not.toBe(long);
  });

  it('matches an address in any case of its domain and local part', () => {
    expect(addressDigest(index, 'Ann.Rossi@Example.NET')).toBe(addressDigest(index, 'ann.rossi@example.net'));
    expect(addressDigest(index, 'ann@example.net')).not.toBe(addressDigest(index, 'joann@example.net'));
    expect(addressDigest(index, 'ann@example.net')).toMatch(/^a[0-9a-f]{16}$/);
  });

  it('answers the same from what it remembers, a value repeated in one call or known from an earlier one', () => {
    const fresh = createBlindIndex(Buffer.alloc(32, 3));
    const first = fresh.digest('word', ['ann', 'bob', 'ann', 'carla']);
    expect(first[0]).toBe(first[2]);
    const second = fresh.digest('word', ['dario', 'ann', 'dario', 'carla', 'bob']);
    expect(second).toEqual([second[0], first[0], second[0], first[3], first[1]]);
    expect(new Set(second).size).toBe(4);
    // A new index under the same key, remembering nothing, digests alike.
    expect(createBlindIndex(Buffer.alloc(32, 3)).digest('word', ['carla', 'dario'])).toEqual([first[3], second[0]]);
  });

  it('shows nothing of the value', () => {
    const digest = index.digest('word', ['ann'])[0] as string;
    expect(digest).not.toContain(Buffer.from('ann').toString('hex'));
  });
});
