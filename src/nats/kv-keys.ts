/**
 * A KV bucket's keys listed from its stream's subjects, with no consumer. nats.js v3's `kv.keys()`
 * makes a push consumer per listing that the server keeps for five minutes after it (file-backed),
 * where the old client's went within seconds: the fleet lists its nodes at every heartbeat, which
 * left about 150 consumers per node on the bucket's stream. A bucket keeps one message per subject
 * (history 1), its latest: so a key whose latest value is a delete or purge marker is listed too,
 * and the caller, which reads each value anyway, skips it.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { managerOf } from './jetstream-manager.js';

/** The keys under `filter` (a KV key filter: `nodes.>`) in `bucket`, deleted ones included. */
export type BucketKeys = (filter: string) => Promise<string[]>;

/** Lists a bucket's keys over `nc` (the KV naming of ADR-8: stream `KV_<bucket>`, subjects `$KV.<bucket>.<key>`). */
export function bucketKeys(nc: NatsConnection, bucket: string, timeoutMs?: number): BucketKeys {
  const prefix = `$KV.${bucket}.`;
  return async (filter) => {
    const jsm = await managerOf(nc, timeoutMs);
    const info = await jsm.streams.info(`KV_${bucket}`, { subjects_filter: `${prefix}${filter}` });
    return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
  };
}
