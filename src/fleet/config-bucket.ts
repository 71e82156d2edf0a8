/**
 * Fleet mode's shared configuration in its JetStream KV bucket: one key per
 * configuration object (config-replica.ts names them), each value the object's
 * stored rows with the node that took the change. Writes are compare-and-set on
 * the revision: `create` for a key this node never applied, `update` on the
 * revision it last applied, so of two nodes editing one object only one wins.
 */
import type { KV, KvEntry, NatsConnection } from 'nats';
import { conflict, unavailable } from '../core/replicated-writes.js';
import type { ConfigBucket, ConfigEntry, ConfigKey, ConfigValue } from '../core/config-replica.js';
import { configKeyName } from '../core/config-replica.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** JetStream's "wrong last sequence": the compare-and-set lost. */
const WRONG_LAST_SEQUENCE = 10071;

/** The bucket of a fleet: beside its membership bucket, named after it. */
export const configBucketName = (fleetBucket: string): string => `${fleetBucket}_config`;

/** `timeoutMs` bounds each API request through this view (JetStream's default otherwise). */
export async function openConfigBucket(nc: NatsConnection, name: string, replicas: number, timeoutMs?: number): Promise<KV> {
  // History 1: a node catching up needs each object's last value only.
  return nc.jetstream(timeoutMs === undefined ? {} : { timeout: timeoutMs }).views.kv(name, { history: 1, replicas });
}

/** Writes through whatever bucket is open now; none open (not joined yet) is the cluster being away. */
export function createJetStreamConfigBucket(bucket: () => KV | null): ConfigBucket {
  return {
    async write(key: ConfigKey, value: ConfigValue, expected: number | null): Promise<number> {
      const kv = bucket();
      if (kv === null) throw unavailable();
      const data = encoder.encode(JSON.stringify({ key, ...value }));
      try {
        return expected === null ? await kv.create(configKeyName(key), data) : await kv.update(configKeyName(key), data, expected);
      } catch (error) {
        const code = (error as { api_error?: { err_code?: number } }).api_error?.err_code;
        // `create` of a key that exists fails on its own check, with JetStream's error or its own message.
        if (code === WRONG_LAST_SEQUENCE || /wrong last sequence|exists/i.test(String((error as Error).message))) throw conflict(key, error);
        throw unavailable(error);
      }
    },
  };
}

/** An entry of the bucket as the node applies it; null for what is not one of ours (a deleted or purged key, a foreign value). */
export function configEntryOf(entry: KvEntry): ConfigEntry | null {
  if (entry.operation !== 'PUT') return null;
  try {
    const parsed = JSON.parse(decoder.decode(entry.value)) as Partial<ConfigValue> & { key?: ConfigKey };
    if (parsed.key === undefined || typeof parsed.origin !== 'string' || !Array.isArray(parsed.changes)) return null;
    if (parsed.rows !== null && !Array.isArray(parsed.rows)) return null;
    // The key is the bucket's, not the value's word for it: a value copied under another key is refused.
    if (configKeyName(parsed.key) !== entry.key) return null;
    return { key: parsed.key, revision: entry.revision, value: { rows: parsed.rows ?? null, origin: parsed.origin, changes: parsed.changes } };
  } catch {
    return null;
  }
}
