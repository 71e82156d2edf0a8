/**
 * Fleet mode's shared configuration in its JetStream KV bucket: one key per
 * configuration object (config-replica.ts names them), each value the object's
 * stored rows with the node that took the change. Writes are compare-and-set on
 * the revision: `create` for a key this node never applied, `update` on the
 * revision it last applied, so of two nodes editing one object only one wins.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import { jetstream } from '@nats-io/jetstream';
import type { Clock, Logger } from '../../core/index.js';
import {
  conflict,
  unavailable,
  type ConfigBucket,
  type ConfigEntry,
  type ConfigKey,
  type ConfigValue,
  configKeyName,
  suppressionKeys,
} from '../../core/fleet/index.js';
import { isNoResponders, isWrongLastSequence } from '../../nats/index.js';
import { storedConfigCodec } from './config-wire-schemas.js';

/** The bucket of a fleet: beside its membership bucket, named after it. */
export const configBucketName = (fleetBucket: string): string => `${fleetBucket}_config`;

/** `timeoutMs` bounds each API request through this view (JetStream's default otherwise). */
export async function openConfigBucket(
  nc: NatsConnection,
  name: string,
  replicas: number,
  timeoutMs?: number,
): Promise<KV> {
  // History 1: a node catching up needs each object's last value only.
  return new Kvm(jetstream(nc, timeoutMs === undefined ? {} : { timeout: timeoutMs })).create(name, {
    history: 1,
    replicas,
  });
}

/** How long a configuration write rides out the bucket not answering (just after a start, a leader election) before it is refused. */
export const WRITE_WAIT_MS = 20_000;
const RETRY_MS = 250;

export interface ConfigBucketLink {
  /** The bucket once this node has opened it; null before. */
  bucket(): KV | null;
  /** Whether this node reaches the cluster now: cut off, a write is refused at once. */
  reachable(): boolean;
  clock: Clock;
  log: Logger;
  /** How long a write waits for the bucket to answer; WRITE_WAIT_MS by default. */
  waitMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Writes through the bucket this node opened. A cluster this node cannot reach refuses the write
 * at once (503); a bucket not open yet (a node just started) or not answering (its stream electing
 * a leader) is waited for, up to `waitMs`, so that a node that says it is ready takes changes. A
 * write whose request may have reached the bucket is asked again only once the bucket is read:
 * the value found there is this write's when it is byte for byte what was sent.
 */
export function createJetStreamConfigBucket(link: ConfigBucketLink): ConfigBucket {
  const { clock, log } = link;
  const waitMs = link.waitMs ?? WRITE_WAIT_MS;
  const once = async (kv: KV, name: string, data: Uint8Array, expected: number | null): Promise<number> =>
    expected === null ? kv.create(name, data) : kv.update(name, data, expected);
  return {
    async write(key: ConfigKey, value: ConfigValue, expected: number | null): Promise<number> {
      const name = configKeyName(key);
      const data = storedConfigCodec.encode({ key, ...value });
      const deadline = clock.now() + waitMs;
      let sent = false;
      for (;;) {
        if (!link.reachable()) throw unavailable(new Error('this node does not reach the fleet cluster'));
        const kv = link.bucket();
        if (kv !== null) {
          try {
            return await once(kv, name, data, expected);
          } catch (error) {
            if (isConflict(error)) {
              // The bucket moved on: by another node's write, or by this one's first attempt whose answer was lost.
              if (sent) {
                const found = await kv.get(name).catch(() => null);
                if (found !== null && Buffer.from(found.value).equals(Buffer.from(data))) return found.revision;
              }
              throw conflict(key, error);
            }
            sent ||= !noResponders(error);
            if (clock.now() >= deadline) {
              log.warn({ err: error, key: name }, 'configuration write refused: the fleet cluster did not answer');
              throw unavailable(error);
            }
          }
        } else if (clock.now() >= deadline) {
          log.warn({ key: name }, 'configuration write refused: the shared configuration bucket is not open');
          throw unavailable(new Error('the shared configuration bucket is not open yet'));
        }
        await sleep(RETRY_MS);
      }
    },
  };
}

/** The compare-and-set lost: `create` of a key that exists fails with the same "wrong last sequence" as `update`. */
const isConflict = isWrongLastSequence;

/** No server took the request (no stream leader yet): nothing was written. */
const noResponders = isNoResponders;

/**
 * An entry of the bucket as the node applies it; null for what is not one of ours (a foreign
 * value, a deleted or purged key of another kind). A suppression's key deleted or purged (an
 * erasure of its address) removes the node's own copy too: a node that missed the erasure (away,
 * or behind the bucket) does not keep the address, nor offer it back on its next write of the key.
 */
export function configEntryOf(entry: KvEntry): ConfigEntry | null {
  if (entry.operation !== 'PUT') {
    const named = suppressionKeys.parse(entry.key);
    if (named === null || named.digest === null) return null;
    return {
      key: { kind: 'suppression', tenantId: named.tenantId, digest: named.digest },
      revision: entry.revision,
      value: { rows: null, origin: '', changes: [] },
    };
  }
  const read = storedConfigCodec.read(entry.value);
  if (!read.ok) return null;
  const { key, rows, origin, changes } = read.value;
  // The key is the bucket's, not the value's word for it: a value copied under another key is refused.
  if (configKeyName(key) !== entry.key) return null;
  return { key, revision: entry.revision, value: { rows, origin, changes } };
}
