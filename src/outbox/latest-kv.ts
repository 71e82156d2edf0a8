/**
 * The latest-state KV bucket: one key per message (`<tenant_id>.<message_pk>`, a fleet node's id between),
 * written with compare-and-set. A writer reads the value and its revision,
 * merges its events (core/events/latest-state.ts), and updates only if the revision is
 * still the one it read; otherwise another writer got there first and it merges
 * again on top of that. The merge never moves a value backwards, so the races
 * end in the same value whoever wins them.
 */
import { headers } from '@nats-io/nats-core';
import type { JetStreamClient } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { AckPublisher } from './ack-publisher.js';
import { advances, latestKey, merge, type LatestEvent, type LatestState } from '../core/events/index.js';
import { isWrongLastSequence } from '../nats/index.js';
import { latestStateCodec } from './wire-schemas.js';

const MAX_ATTEMPTS = 20;

export async function openLatestBucket(js: JetStreamClient, bucket: string, replicas: number): Promise<KV> {
  return new Kvm(js).create(bucket, { history: 1, replicas });
}

/**
 * What this writer last wrote to each key (value and revision), so that the
 * usual write is one compare-and-set, without a read first: the mirror is
 * normally the only writer. A stale entry only costs a failed CAS, then a read.
 */
export class LatestCache {
  private readonly entries = new Map<string, { value: LatestState; revision: number }>();

  constructor(private readonly capacity = 50_000) {}

  get(key: string): { value: LatestState; revision: number } | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: LatestState, revision: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, revision });
    // A Map iterates in insertion order: the first key is the one written longest ago.
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}

/**
 * Writes a key's value if its last revision is `expected` (0: the key is new), as KV's create and
 * update do, over the acknowledged publisher; answers the new revision. A key moved since
 * rejects with JetStream's "wrong last sequence", as theirs do.
 */
export type LatestWriter = (key: string, value: Uint8Array, expected: number) => Promise<number>;

export function latestWriter(acks: AckPublisher, bucket: string): LatestWriter {
  return (key, value, expected) => {
    const h = headers();
    h.set('Nats-Expected-Last-Subject-Sequence', String(expected));
    return acks.publish(`$KV.${bucket}.${key}`, value, h);
  };
}

/** JetStream's "wrong last sequence": the key moved since it was read. */
const isCasMismatch = isWrongLastSequence;

/** Applies `events` (all of one key) to the stored value; answers whether it wrote. */
export async function writeLatest(
  kv: KV,
  key: string,
  events: readonly LatestEvent[],
  cache?: LatestCache,
  write?: LatestWriter,
): Promise<boolean> {
  const cached = cache?.get(key);
  const mergeAll = (current: LatestState | null): LatestState =>
    events.reduce<LatestState | null>((state, event) => merge(state, event), current) as LatestState;
  // The first event of a message (no cached value) creates its key; a key we wrote last is updated from our revision.
  if (cache !== undefined) {
    const current = cached?.value ?? null;
    const merged = mergeAll(current);
    if (!advances(current, merged)) return false;
    try {
      const value = latestStateCodec.encode(merged);
      const expected = cached?.revision ?? 0;
      const revision =
        write !== undefined
          ? await write(key, value, expected)
          : cached === undefined
            ? await kv.create(key, value)
            : await kv.update(key, value, expected);
      cache.set(key, merged, revision);
      return true;
    } catch (error) {
      cache.forget(key);
      if (!isCasMismatch(error)) throw error;
    }
  }
  for (let attempt = 1; ; attempt += 1) {
    const entry = await kv.get(key);
    const current =
      entry !== null && entry.operation === 'PUT' && entry.length > 0 ? latestStateCodec.decode(entry.value) : null;
    const merged = mergeAll(current);
    if (!advances(current, merged)) {
      if (entry !== null && current !== null) cache?.set(key, current, entry.revision);
      return false;
    }
    try {
      const value = latestStateCodec.encode(merged);
      const revision = entry === null ? await kv.create(key, value) : await kv.update(key, value, entry.revision);
      cache?.set(key, merged, revision);
      return true;
    } catch (error) {
      if (!isCasMismatch(error) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/**
 * Writes the latest state of every message the events touch, keys in parallel, each key's events
 * together. `nodeId`: a fleet node's, in every key (core/events/latest-state.ts latestKey).
 */
export async function writeLatestAll(
  kv: KV,
  events: readonly LatestEvent[],
  cache?: LatestCache,
  write?: LatestWriter,
  nodeId: string | null = null,
): Promise<void> {
  const byKey = new Map<string, LatestEvent[]>();
  for (const event of events) {
    const key = latestKey(event, nodeId);
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [event]);
    else list.push(event);
  }
  await Promise.all([...byKey].map(([key, list]) => writeLatest(kv, key, list, cache, write)));
}
