/**
 * The fleet's membership in its KV bucket: `nodes.<node_id>` holds each node's
 * last heartbeat, read back with each heartbeat so that answering "who is in the
 * fleet" costs no round trip; the entry's `created` is the cluster's own
 * timestamp of the write, so liveness is judged on one clock per write rather
 * than on each node's.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import type { NodeBeat, NodeSighting } from '../../core/fleet/index.js';
import { bucketKeys, type BucketKeys } from '../../nats/index.js';
import { nodeBeatCodec } from './link-wire-schemas.js';

const PREFIX = 'nodes.';

export const nodeKey = (nodeId: string): string => `${PREFIX}${nodeId}`;

/** The fleet's bucket, with its keys listed without a consumer. */
export interface MembershipBucket {
  kv: KV;
  keys: BucketKeys;
}

export async function openMembership(nc: NatsConnection, bucket: string, replicas: number): Promise<MembershipBucket> {
  const kv = await new Kvm(nc).create(bucket, { history: 1, replicas });
  return { kv, keys: bucketKeys(nc, bucket) };
}

/** A deleted key, or a value that is not a heartbeat, is no sighting. */
function sightingOf(entry: KvEntry): NodeSighting | null {
  if (entry.operation !== 'PUT') return null;
  const read = nodeBeatCodec.read(entry.value);
  return read.ok ? { beat: read.value, seenAt: entry.created.getTime() } : null;
}

export async function readNode(kv: KV, nodeId: string): Promise<NodeSighting | null> {
  const entry = await kv.get(nodeKey(nodeId));
  return entry === null ? null : sightingOf(entry);
}

export async function writeBeat(kv: KV, beat: NodeBeat): Promise<void> {
  await kv.put(nodeKey(beat.node_id), nodeBeatCodec.encode(beat));
}

/**
 * Every node's latest heartbeat, read afresh: the keys (from the stream's subjects: no consumer),
 * then each value. No long-lived consumer (a KV watch) to go stale when the server holding it
 * dies: a read that fails (the bucket electing a leader) fails whole, and the next heartbeat reads again.
 */
export async function readNodes(kv: KV, keys: BucketKeys): Promise<NodeSighting[]> {
  const entries = await Promise.all((await keys(`${PREFIX}>`)).map((key) => kv.get(key)));
  return entries.flatMap((entry) => {
    const sighting = entry === null ? null : sightingOf(entry);
    return sighting === null ? [] : [sighting];
  });
}
