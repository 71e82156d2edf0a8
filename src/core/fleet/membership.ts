/**
 * Fleet membership: each node writes a heartbeat under its node id
 * in the fleet's KV bucket; every node reads them all. The bucket keeps a node
 * that stopped writing (no TTL), so a node that is gone is named as missing,
 * never silently left out of a fleet-wide answer. Pure: the adapter in
 * src/fleet/ reads and writes the bucket.
 */

/** What a node says of itself in its heartbeat. */
export interface NodeBeat {
  node_id: string;
  /**
   * Which data directory the node runs on (random, kept in the data directory):
   * two processes claiming one node id from two directories is a configuration
   * error that would mix two queues under one name.
   */
  instance: string;
  /**
   * `stopped`: shut down cleanly (known not to be sending), as opposed to silent.
   * `draining`: moving its waiting mail to the others; `drained`: it has none
   * left and has left the fleet (fleet-drain), so its silence loses nothing.
   */
  state: 'active' | 'stopped' | 'draining' | 'drained';
  started_at: number;
  version: string;
}

/** A heartbeat as read back: `seenAt` is when the cluster stored it (the server's clock). */
export interface NodeSighting {
  beat: NodeBeat;
  seenAt: number;
}

/** `left`: drained, holding no mail: never reported missing, never a target. */
export type NodeLiveness = 'alive' | 'stopped' | 'missing' | 'left';

export interface FleetNodeView {
  node_id: string;
  liveness: NodeLiveness;
  /** Milliseconds since its last heartbeat was stored. */
  seen_ms_ago: number;
  started_at: number;
  version: string;
}

export interface FleetView {
  node_id: string;
  /** False while this node cannot reach the cluster: it goes on accepting and sending alone. */
  connected: boolean;
  nodes: FleetNodeView[];
  alive: number;
  /** Nodes that stopped writing heartbeats without a clean stop. */
  missing: string[];
}

export function livenessOf(sighting: NodeSighting, now: number, timeoutMs: number): NodeLiveness {
  if (sighting.beat.state === 'stopped') return 'stopped';
  if (sighting.beat.state === 'drained') return 'left';
  return now - sighting.seenAt > timeoutMs ? 'missing' : 'alive';
}

export function fleetView(
  self: string,
  connected: boolean,
  sightings: Iterable<NodeSighting>,
  now: number,
  timeoutMs: number,
): FleetView {
  const nodes = [...sightings]
    .map((sighting) => ({
      node_id: sighting.beat.node_id,
      liveness: livenessOf(sighting, now, timeoutMs),
      seen_ms_ago: Math.max(0, now - sighting.seenAt),
      started_at: sighting.beat.started_at,
      version: sighting.beat.version,
    }))
    .sort((a, b) => a.node_id.localeCompare(b.node_id));
  return {
    node_id: self,
    connected,
    nodes,
    alive: nodes.filter((node) => node.liveness === 'alive').length,
    missing: nodes.filter((node) => node.liveness === 'missing').map((node) => node.node_id),
  };
}

/**
 * May a node with this instance take the node id, given the heartbeat found
 * under it? Yes when nobody holds it, when it is this same data directory's (a
 * restart, even right after a crash), or when the holder stopped or went
 * silent. Another live directory under the same id is refused.
 */
export function nodeIdClaim(
  found: NodeSighting | null,
  instance: string,
  now: number,
  timeoutMs: number,
): { ok: true } | { ok: false; holder: NodeBeat } {
  if (found === null || found.beat.instance === instance) return { ok: true };
  return livenessOf(found, now, timeoutMs) === 'alive' ? { ok: false, holder: found.beat } : { ok: true };
}
