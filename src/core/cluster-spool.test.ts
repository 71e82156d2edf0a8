import { describe, expect, it } from 'vitest';
import { adoptionCandidates, leaseAbandoned, type AdoptionLease } from './cluster-spool.js';
import type { NodeSighting } from './fleet.js';

const sighting = (node: string, instance: string, seenAt: number, state: NodeSighting['beat']['state'] = 'active'): NodeSighting => ({
  beat: { node_id: node, instance, state, started_at: 0, version: 'test' },
  seenAt,
});

describe('which spools a survivor may adopt', () => {
  const now = 100_000;
  const after = 30_000;

  it('adopts a node silent (or stopped) for the delay, never itself, never a node heard from within it', () => {
    const spools = [
      { node: 'n1', instance: 'a' },
      { node: 'n2', instance: 'b' },
      { node: 'n3', instance: 'c' },
      { node: 'n4', instance: 'd' },
    ];
    const seen = [sighting('n1', 'a', 0), sighting('n2', 'b', now - after), sighting('n3', 'c', now - after + 1), sighting('n4', 'd', 0, 'stopped')];
    expect(adoptionCandidates('n1', spools, seen, now, after)).toEqual([
      { node: 'n2', instance: 'b' },
      { node: 'n4', instance: 'd' },
    ]);
  });

  it('adopts the spool of a lost disk at once when its node id runs on another one, never one whose node was not read', () => {
    const spools = [
      { node: 'n2', instance: 'old' },
      { node: 'n2', instance: 'new' },
      { node: 'n9', instance: 'x' },
    ];
    expect(adoptionCandidates('n1', spools, [sighting('n2', 'new', now)], now, after)).toEqual([{ node: 'n2', instance: 'old' }]);
  });
});

describe('an adoption lease left by its adopter', () => {
  const lease: AdoptionLease = { node: 'n2', instance: 'b', by: 'n3', state: 'adopting', at: 0, adopted: 0 };

  it('can be taken over once the adopter has been silent for the delay, never when done or while the adopter lives', () => {
    expect(leaseAbandoned(lease, sighting('n3', 'c', 1_000), 40_000, 30_000)).toBe(true);
    expect(leaseAbandoned(lease, sighting('n3', 'c', 20_000), 40_000, 30_000)).toBe(false);
    expect(leaseAbandoned({ ...lease, state: 'done' }, sighting('n3', 'c', 0), 40_000, 30_000)).toBe(false);
    expect(leaseAbandoned(lease, undefined, 40_000, 30_000)).toBe(true);
  });
});
