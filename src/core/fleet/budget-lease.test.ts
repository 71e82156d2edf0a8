import { describe, expect, it } from 'vitest';
import {
  chunkSize,
  connectionShare,
  currentLease,
  fleetBudget,
  leaseKey,
  nextGrant,
  spend,
  windowsToTopUp,
  type AccountLeases,
} from './budget-lease.js';
import type { Limits } from '../account/rate-limit.js';

const MINUTE = 60_000;
const T0 = 1_700_000_040_000; // a minute's start
const perMinute = (limit: number): Limits => ({ minute: limit, hour: null, day: null });
const zero = { minute: 0, hour: 0, day: 0 };

/** A window counter as the KV bucket keeps it: a value and a revision that moves at each write. */
function counter() {
  let value = 0;
  let revision = 0;
  return {
    read: () => ({ value, revision }),
    /** Compare-and-set: refused when the revision moved since the read. */
    update(next: number, expected: number): boolean {
      if (expected !== revision) return false;
      value = next;
      revision += 1;
      return true;
    },
  };
}

describe('lease sizes', () => {
  it('takes a quarter of an even split, within the configured chunk and what is left', () => {
    expect(chunkSize(60, 0, 3, 100)).toBe(5); // ceil(60 / 12)
    expect(chunkSize(60, 0, 3, 2)).toBe(2); // the configured chunk caps it
    expect(chunkSize(60, 58, 3, 100)).toBe(2); // never more than is left
    expect(chunkSize(60, 60, 3, 100)).toBe(0);
    expect(chunkSize(1000, 0, 1, 100)).toBe(100);
    expect(chunkSize(3, 0, 5, 100)).toBe(1); // at least one while anything is left
  });

  it('grants up to the chunk and never past the limit', () => {
    expect(nextGrant(0, 60, 5)).toEqual({ granted: 5, counter: 5 });
    expect(nextGrant(57, 60, 5)).toEqual({ granted: 3, counter: 60 });
    expect(nextGrant(60, 60, 5)).toEqual({ granted: 0, counter: 60 });
  });

  it('names one key per account, window kind and window start', () => {
    expect(leaseKey('acme', 'main', 'minute', T0)).toBe(`limits.acme.main.minute.${T0}`);
  });
});

describe('compare-and-set leases between nodes', () => {
  it('hands out exactly the limit when nodes race, a lost write reading again', () => {
    const window = counter();
    const granted = [0, 0, 0];
    let conflicts = 0;
    // Each round three nodes read, then write one after another (a different node first each round): two of three writes lose.
    for (let round = 0; round < 100; round += 1) {
      const reads = granted.map(() => window.read());
      for (let turn = 0; turn < 3; turn += 1) {
        const node = (round + turn) % 3;
        const read = reads[node]!;
        const grant = nextGrant(read.value, 60, chunkSize(60, read.value, 3, 100));
        if (grant.granted === 0) continue;
        if (window.update(grant.counter, read.revision)) granted[node]! += grant.granted;
        else conflicts += 1;
      }
    }
    expect(granted.reduce((sum, each) => sum + each, 0)).toBe(60);
    expect(window.read().value).toBe(60);
    expect(conflicts).toBeGreaterThan(0);
    expect(granted.every((each) => each > 0)).toBe(true); // every node got a share
  });
});

describe('the budget a node may claim', () => {
  it('waits for a lease rather than claiming (or rejecting) when it holds none', () => {
    const leases: AccountLeases = {};
    expect(fleetBudget(perMinute(60), zero, leases, T0)).toEqual({ kind: 'awaiting_lease', windows: ['minute'] });
  });

  it('claims within the lease held, however much the local count would allow', () => {
    const leases: AccountLeases = {};
    currentLease(leases, 'minute', T0).granted = 5;
    spend(perMinute(60), leases, 2, T0 + 1000);
    // 3 left of the lease: the plan sees 57 of 60 used; the lease, not the window, binds.
    expect(fleetBudget(perMinute(60), zero, leases, T0 + 2000)).toEqual({
      kind: 'usage',
      usage: { minute: 57, hour: 0, day: 0 },
      leaseBound: true,
    });
  });

  it('reads a window the fleet used up as full, so the plan waits for its end', () => {
    const leases: AccountLeases = {};
    const lease = currentLease(leases, 'minute', T0);
    lease.granted = 4;
    lease.used = 4;
    lease.exhausted = true;
    expect(fleetBudget(perMinute(60), zero, leases, T0)).toEqual({
      kind: 'usage',
      usage: { minute: 60, hour: 0, day: 0 },
      leaseBound: false,
    });
  });

  it('lets a lease expire with its window: the next window starts with none', () => {
    const leases: AccountLeases = {};
    currentLease(leases, 'minute', T0).granted = 5;
    expect(fleetBudget(perMinute(60), zero, leases, T0 + MINUTE - 1).kind).toBe('usage');
    expect(fleetBudget(perMinute(60), zero, leases, T0 + MINUTE)).toEqual({
      kind: 'awaiting_lease',
      windows: ['minute'],
    });
    expect(currentLease(leases, 'minute', T0 + MINUTE)).toEqual({
      start: T0 + MINUTE,
      granted: 0,
      used: 0,
      exhausted: false,
    });
  });

  it('takes the tightest of the windows, and awaits any window whose lease is spent', () => {
    const limits: Limits = { minute: 60, hour: 100, day: null };
    const leases: AccountLeases = {};
    currentLease(leases, 'minute', T0).granted = 5;
    expect(fleetBudget(limits, zero, leases, T0)).toEqual({ kind: 'awaiting_lease', windows: ['hour'] });
    currentLease(leases, 'hour', T0).granted = 2;
    expect(fleetBudget(limits, zero, leases, T0)).toEqual({
      kind: 'usage',
      usage: { minute: 55, hour: 98, day: 0 },
      leaseBound: true,
    });
  });

  it('keeps the local count as a bound too', () => {
    const leases: AccountLeases = {};
    currentLease(leases, 'minute', T0).granted = 5;
    // The local count binds (2 left of the window, 5 of the lease): the window's end is what it waits for.
    expect(fleetBudget(perMinute(60), { minute: 58, hour: 0, day: 0 }, leases, T0)).toEqual({
      kind: 'usage',
      usage: { minute: 58, hour: 0, day: 0 },
      leaseBound: false,
    });
  });
});

describe('asking for the next chunk ahead of need', () => {
  const chunk = (): number => 6;
  it('asks once half a chunk is left, not before, and never for a used-up window', () => {
    const leases: AccountLeases = {};
    expect(windowsToTopUp(perMinute(60), leases, chunk, T0)).toEqual(['minute']);
    currentLease(leases, 'minute', T0).granted = 6;
    spend(perMinute(60), leases, 2, T0);
    expect(windowsToTopUp(perMinute(60), leases, chunk, T0)).toEqual([]);
    spend(perMinute(60), leases, 1, T0);
    expect(windowsToTopUp(perMinute(60), leases, chunk, T0)).toEqual(['minute']);
    currentLease(leases, 'minute', T0).exhausted = true;
    expect(windowsToTopUp(perMinute(60), leases, chunk, T0)).toEqual([]);
  });
});

describe('connections shared over the fleet', () => {
  const nodes = ['n1', 'n2', 'n3'];
  const shares = (max: number, turn = 0): number[] => nodes.map((node) => connectionShare(max, nodes, node, turn));

  it('splits max_connections so that the shares add up to it', () => {
    expect(shares(5)).toEqual([2, 2, 1]);
    expect(shares(6)).toEqual([2, 2, 2]);
    for (let max = 1; max <= 20; max += 1)
      for (let turn = 0; turn < 4; turn += 1) expect(shares(max, turn).reduce((a, b) => a + b, 0)).toBe(max);
  });

  it('passes the turn around when there are fewer connections than nodes, and holds still otherwise', () => {
    expect([0, 1, 2].map((turn) => shares(1, turn))).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ]);
    expect(shares(5, 1)).toEqual(shares(5, 0));
  });

  it('counts this node even when its own heartbeat was not read yet', () => {
    expect(connectionShare(4, ['n2'], 'n1', 0)).toBe(2);
  });
});
