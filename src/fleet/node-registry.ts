/**
 * The fleet's membership in its KV bucket: `nodes.<node_id>` holds each node's
 * last heartbeat. A watch keeps every node's latest heartbeat in memory, so
 * answering "who is in the fleet" costs no round trip; the entry's `created`
 * is the cluster's own timestamp of the write, so liveness is judged on one
 * clock per write rather than on each node's.
 */
import type { KV, KvEntry } from 'nats';
import type { NodeBeat, NodeSighting } from '../core/fleet.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const PREFIX = 'nodes.';

export const nodeKey = (nodeId: string): string => `${PREFIX}${nodeId}`;

function sightingOf(entry: KvEntry): NodeSighting | null {
  if (entry.operation !== 'PUT') return null;
  try {
    const beat = JSON.parse(decoder.decode(entry.value)) as NodeBeat;
    return typeof beat.node_id === 'string' && typeof beat.instance === 'string' ? { beat, seenAt: entry.created.getTime() } : null;
  } catch {
    return null;
  }
}

export async function readNode(kv: KV, nodeId: string): Promise<NodeSighting | null> {
  const entry = await kv.get(nodeKey(nodeId));
  return entry === null ? null : sightingOf(entry);
}

export async function writeBeat(kv: KV, beat: NodeBeat): Promise<void> {
  await kv.put(nodeKey(beat.node_id), encoder.encode(JSON.stringify(beat)));
}

/** Removes a node that left the fleet for good (`fleet leave`): it is no longer reported missing. */
export async function forgetNode(kv: KV, nodeId: string): Promise<void> {
  await kv.delete(nodeKey(nodeId));
}

/** Every node's latest heartbeat, kept current by a watch until `stop()`. */
export async function watchNodes(kv: KV): Promise<{ sightings(): Iterable<NodeSighting>; stop(): void }> {
  const known = new Map<string, NodeSighting>();
  const watch = await kv.watch({ key: `${PREFIX}>` });
  void (async () => {
    for await (const entry of watch) {
      const nodeId = entry.key.slice(PREFIX.length);
      const sighting = sightingOf(entry);
      if (sighting === null) known.delete(nodeId);
      else known.set(nodeId, sighting);
    }
  })();
  return {
    sightings: () => known.values(),
    stop: () => watch.stop(),
  };
}
