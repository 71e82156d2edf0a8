/**
 * Fleet limits' window counters in their KV bucket: `limits.<tenant>.<account>.<kind>.<start>`
 * holds how much of that window's limit has been leased to nodes, as a decimal
 * number. A lease is a compare-and-set on the revision; the revision last seen
 * is kept, so that the usual lease is one write without a read first (a stale
 * one costs a failed write, then a read). The bucket's TTL drops a window's key
 * after the longest window has passed: nothing to clean.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm, type KV } from '@nats-io/kv';
import { LEASE_KEY_TTL_MS, nextGrant } from '../../core/fleet/index.js';
import { isWrongLastSequence } from '../../nats/index.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Conflicts before this node gives up for now (the next want or top-up tries again). */
const MAX_ATTEMPTS = 12;
/** Revisions remembered: a window's key is not leased from again once it ends, so old ones are simply dropped. */
const SEEN_CAPACITY = 4096;

/** JetStream's "wrong last sequence": another node leased from the window since we read it. */
const isCasMismatch = isWrongLastSequence;

export async function openLimitCounters(nc: NatsConnection, bucket: string, replicas: number): Promise<KV> {
  return new Kvm(nc).create(bucket, { history: 1, replicas, ttl: LEASE_KEY_TTL_MS });
}

export interface LeaseResult {
  granted: number;
  /** The window's counter after this lease: at the limit, the window is used up fleet-wide. */
  counter: number;
}

export interface LeaseStats {
  leases: number;
  conflicts: number;
  /** Milliseconds spent in lease requests (in the background: no send waits on them while a lease is held). */
  ms: number;
}

export interface LimitCounters {
  /** Takes up to one chunk of the window's remaining limit; `chunkOf` sizes it from the counter as read. */
  lease(key: string, limit: number, chunkOf: (leasedSoFar: number) => number): Promise<LeaseResult>;
  /** What leasing has cost since the start (the bench's measure): leases asked, CAS writes lost to another node, time waited. */
  stats(): LeaseStats;
}

export function createLimitCounters(kv: KV): LimitCounters {
  const seen = new Map<string, { counter: number; revision: number }>();
  const stats: LeaseStats = { leases: 0, conflicts: 0, ms: 0 };
  const read = async (key: string): Promise<{ counter: number; revision: number } | null> => {
    const entry = await kv.get(key);
    if (entry === null || entry.operation !== 'PUT') return null;
    return { counter: Number(decoder.decode(entry.value)) || 0, revision: entry.revision };
  };
  return {
    async lease(key, limit, chunkOf) {
      const startedAt = performance.now();
      stats.leases += 1;
      try {
        return await casLease(key, limit, chunkOf);
      } finally {
        stats.ms += performance.now() - startedAt;
      }
    },
    stats: () => ({ ...stats }),
  };

  async function casLease(key: string, limit: number, chunkOf: (leasedSoFar: number) => number): Promise<LeaseResult> {
    let current = seen.get(key) ?? (await read(key));
    for (let attempt = 1; ; attempt += 1) {
      const leasedSoFar = current?.counter ?? 0;
      const { granted, counter } = nextGrant(leasedSoFar, limit, chunkOf(leasedSoFar));
      if (granted === 0) return { granted, counter: leasedSoFar };
      try {
        const value = encoder.encode(String(counter));
        const revision = current === null ? await kv.create(key, value) : await kv.update(key, value, current.revision);
        if (seen.size >= SEEN_CAPACITY) seen.clear();
        seen.set(key, { counter, revision });
        return { granted, counter };
      } catch (error) {
        if (!isCasMismatch(error)) throw error;
        stats.conflicts += 1;
        seen.delete(key);
        if (attempt >= MAX_ATTEMPTS) return { granted: 0, counter: Number.NaN };
        current = await read(key);
      }
    }
  }
}
