import { describe, expect, it } from 'vitest';
import { adoptedDueAt, drainTargets, peerFor, peersInTurn, phaseAfterPass } from './drain.js';

describe('drain targets', () => {
  it('leaves out the draining node itself and sorts the rest', () => {
    expect(drainTargets('n2', ['n3', 'n2', 'n1', 'n3'])).toEqual(['n1', 'n3']);
  });

  it('spreads messages over the live peers in turn', () => {
    const targets = drainTargets('n2', ['n1', 'n2', 'n3']);
    const counts = new Map<string, number>();
    for (let index = 0; index < 10; index += 1) {
      const peer = peerFor(targets, index) as string;
      counts.set(peer, (counts.get(peer) ?? 0) + 1);
    }
    expect(Object.fromEntries(counts)).toEqual({ n1: 5, n3: 5 });
  });

  it('has no peer when the node is alone', () => {
    expect(peerFor(drainTargets('n1', ['n1']), 0)).toBeNull();
    expect(peersInTurn([], 3)).toEqual([]);
  });

  it('tries the other peers after the chosen one', () => {
    expect(peersInTurn(['n1', 'n3', 'n4'], 4)).toEqual(['n3', 'n4', 'n1']);
  });
});

describe('adopted due time', () => {
  it('keeps the time a client scheduled', () => {
    expect(adoptedDueAt({ attempts: 0, next_attempt_at: 5_000 }, 1_000)).toBe(5_000);
  });

  it('makes a message waiting for a retry due at once on its new node', () => {
    expect(adoptedDueAt({ attempts: 2, next_attempt_at: 90_000 }, 1_000)).toBe(1_000);
  });
});

describe('drain phase', () => {
  it('is drained only when nothing waits', () => {
    expect(phaseAfterPass(0)).toBe('drained');
    expect(phaseAfterPass(1)).toBe('draining');
  });
});
