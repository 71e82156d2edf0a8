/**
 * The latest-state KV bucket: one key per message (`<tenant_id>.<message_pk>`),
 * written with compare-and-set. A writer reads the value and its revision,
 * merges its events (core/latest-state.ts), and updates only if the revision is
 * still the one it read; otherwise another writer got there first and it merges
 * again on top of that. The merge never moves a value backwards, so the races
 * end in the same value whoever wins them.
 */
import type { JetStreamClient, KV } from 'nats';
import { advances, latestKey, merge, type LatestEvent, type LatestState } from '../core/latest-state.js';

const encoder = new TextEncoder();
/** JetStream's "wrong last sequence": the key moved since it was read. */
const CAS_MISMATCH = 10071;
const MAX_ATTEMPTS = 20;

export async function openLatestBucket(js: JetStreamClient, bucket: string, replicas: number): Promise<KV> {
  return js.views.kv(bucket, { history: 1, replicas });
}

/** Applies `events` (all of one key) to the stored value; answers whether it wrote. */
export async function writeLatest(kv: KV, key: string, events: readonly LatestEvent[]): Promise<boolean> {
  for (let attempt = 1; ; attempt += 1) {
    const entry = await kv.get(key);
    const current = entry !== null && entry.operation === 'PUT' && entry.length > 0 ? entry.json<LatestState>() : null;
    const merged = events.reduce<LatestState | null>((state, event) => merge(state, event), current) as LatestState;
    if (!advances(current, merged)) return false;
    try {
      const value = encoder.encode(JSON.stringify(merged));
      if (entry === null) await kv.create(key, value);
      else await kv.update(key, value, entry.revision);
      return true;
    } catch (error) {
      const code = (error as { api_error?: { err_code?: number } }).api_error?.err_code;
      if (code !== CAS_MISMATCH || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** Writes the latest state of every message the events touch, keys in parallel, each key's events together. */
export async function writeLatestAll(kv: KV, events: readonly LatestEvent[]): Promise<void> {
  const byKey = new Map<string, LatestEvent[]>();
  for (const event of events) {
    const key = latestKey(event);
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [event]);
    else list.push(event);
  }
  await Promise.all([...byKey].map(([key, list]) => writeLatest(kv, key, list)));
}
