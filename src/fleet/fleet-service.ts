/**
 * A node's membership of the fleet: it connects to the cluster, claims its
 * node id, writes a heartbeat every `heartbeatMs` and reads everyone's. The
 * cluster being away never stops the node (FLEET.md): it starts and goes on
 * alone, says so in `/status` and `/ready`, and joins once the cluster answers.
 * A node id held by another live data directory refuses the start.
 */
import { connect, type KV, type NatsConnection } from 'nats';
import type { Clock } from '../core/clock.js';
import { fleetView, nodeIdClaim, type FleetView, type NodeBeat, type NodeSighting } from '../core/fleet.js';
import type { Logger } from '../core/logger.js';
import { createPeriodicLoop } from '../runtime/periodic-loop.js';
import type { Service, StopBudget } from '../runtime/service.js';
import { deadline, within } from '../runtime/within.js';
import { readNode, readNodes, writeBeat } from './node-registry.js';
import { loadNodeIdentity, type NodeIdentity } from './node-identity.js';

/** The last heartbeat's wait at a stop: long enough to ride out a bucket's leader election, short against the stop's deadline. */
const STOP_WRITE_MS = 3000;
const DRAIN_MS = 1000;
/**
 * A heartbeat (its write and the read of everyone's) that has not ended by then is given up, and
 * the next one starts afresh: a KV listing can stall without ever failing while the cluster
 * elects a leader, and a stalled step would stop the loop for good (the node then read itself as
 * missing, seen in a loaded test run).
 */
const HEARTBEAT_DEADLINE_MS = 5000;
/** How often a node connected to the cluster but not yet joined tries again. */
const ATTACH_RETRY_MS = 1000;

export interface FleetSettings {
  nodeId: string;
  url: string;
  bucket: string;
  replicas: number;
  heartbeatMs: number;
  nodeTimeoutMs: number;
  connectTimeoutMs: number;
  dataDir: string;
}

/** Another live data directory holds this node id (`code` is stable). */
export class NodeIdInUse extends Error {
  readonly code = 'FLEET_NODE_ID_IN_USE';

  constructor(nodeId: string) {
    super(`fleet node id "${nodeId}" is held by another running node (another data directory): give each node its own fleet.node_id`);
    this.name = 'NodeIdInUse';
  }
}

/**
 * What the fleet's features (shared configuration, limits, one view, drain)
 * hold of the membership: the node's id, its connection to the cluster once
 * joined, and who is alive. Each feature is its own service over this link,
 * so none of them opens a second connection or keeps its own idea of the fleet.
 */
export interface FleetLink {
  readonly nodeId: string;
  /** The cluster connection once this node has joined; null before (or when the cluster never answered). */
  connection(): NatsConnection | null;
  /** Resolves at the join (at once when already joined). Never rejects; it may never resolve while the cluster is away. */
  joined(): Promise<NatsConnection>;
  /** False while this node cannot reach the cluster. */
  connected(): boolean;
  /** True while this node reaches the cluster but has not joined yet (its bucket not answering): a join is coming. */
  joining(): boolean;
  /** The node ids seen alive at the last heartbeat, this node included. */
  aliveNodes(): string[];
  /** Every node's last heartbeat as read at the last beat (this node's included). */
  sightings(): NodeSighting[];
  /** This data directory's instance (fleet-node.json); '' before the start. */
  instance(): string;
}

export interface FleetService extends Service {
  readonly link: FleetLink;
  /** What this node says of itself from now on (a drain's phases), written at once when joined. */
  announce(state: 'active' | 'draining' | 'drained'): Promise<void>;
  status(): FleetView;
  /** One heartbeat now (tests; the loop writes them on its own). */
  tick(): Promise<void>;
}

export function createFleetService(settings: FleetSettings, deps: { clock: Clock; log: Logger; version: string }): FleetService {
  const { clock, log } = deps;
  let identity: NodeIdentity | null = null;
  let connection: NatsConnection | null = null;
  let bucket: KV | null = null;
  /** The fleet as last read (every heartbeat reads it again). */
  let nodes: NodeSighting[] = [];
  let connected = false;
  let closing = false;
  let announced: 'active' | 'draining' | 'drained' = 'active';
  const startedAt = clock.now();
  let markJoined: (nc: NatsConnection) => void = () => undefined;
  const joinedOnce = new Promise<NatsConnection>((resolve) => (markJoined = resolve));

  const beat = (state: NodeBeat['state']): NodeBeat => ({
    node_id: settings.nodeId,
    instance: identity?.instance ?? '',
    state,
    started_at: startedAt,
    version: deps.version,
  });

  /** When the heartbeats began to fail (epoch ms); null while they land. */
  let failingSince: number | null = null;
  const heartbeat = createPeriodicLoop({
    name: 'fleet-heartbeat',
    intervalMs: settings.heartbeatMs,
    log,
    clock,
    run: async () => {
      if (bucket === null || !connected) return;
      const kv = bucket;
      const limit = Math.max(HEARTBEAT_DEADLINE_MS, 2 * settings.heartbeatMs);
      try {
        await deadline(writeBeat(kv, beat(announced)), limit, 'the fleet heartbeat write');
        nodes = await deadline(readNodes(kv), limit, 'the read of the fleet');
      } catch (error) {
        // While the bucket elects a new leader every beat fails the same way for seconds: the
        // first failure says why, the recovery says for how long; the loop would log each one.
        if (failingSince === null) log.warn({ err: error }, 'fleet heartbeat failing');
        failingSince ??= clock.now();
        return;
      }
      if (failingSince !== null) log.info({ failingForMs: clock.now() - failingSince }, 'fleet heartbeat recovered');
      failingSince = null;
    },
  });

  /** Opens the bucket, claims the node id and reads the fleet: once per connection's life. */
  const attach = async (nc: NatsConnection): Promise<void> => {
    const kv = await nc.jetstream().views.kv(settings.bucket, { history: 1, replicas: settings.replicas });
    const found = await readNode(kv, settings.nodeId);
    const claim = nodeIdClaim(found, identity?.instance ?? '', clock.now(), settings.nodeTimeoutMs);
    if (!claim.ok) throw new NodeIdInUse(settings.nodeId);
    await writeBeat(kv, beat(announced));
    nodes = await readNodes(kv);
    bucket = kv;
    connected = true;
    markJoined(nc);
    log.info({ nodeId: settings.nodeId, bucket: settings.bucket }, 'joined the fleet');
  };

  /** Tries to join again each second until it does (or the node stops). */
  const attachLater = async (nc: NatsConnection): Promise<void> => {
    while (!closing && bucket === null) {
      await new Promise((resolve) => setTimeout(resolve, ATTACH_RETRY_MS));
      if (closing) return;
      try {
        await attach(nc);
      } catch (error) {
        if (error instanceof NodeIdInUse) log.error({ err: error }, 'could not join the fleet');
      }
    }
  };

  const follow = async (nc: NatsConnection): Promise<void> => {
    for await (const event of nc.status()) {
      if (event.type === 'disconnect') {
        if (connected) log.warn({ server: String(event.data) }, 'fleet cluster unreachable; this node goes on alone');
        connected = false;
      } else if (event.type === 'reconnect') {
        connected = bucket !== null;
        log.info({ server: String(event.data) }, 'fleet cluster reachable again');
      }
    }
  };

  const view = (): FleetView => fleetView(settings.nodeId, connected, nodes, clock.now(), settings.nodeTimeoutMs);
  const link: FleetLink = {
    nodeId: settings.nodeId,
    connection: () => (bucket === null ? null : connection),
    joined: () => joinedOnce,
    connected: () => connected,
    joining: () => connection !== null && bucket === null && !closing,
    aliveNodes: () => {
      const alive = view()
        .nodes.filter((node) => node.liveness === 'alive')
        .map((node) => node.node_id);
      return alive.includes(settings.nodeId) ? alive : [...alive, settings.nodeId].sort();
    },
    sightings: () => nodes,
    instance: () => identity?.instance ?? '',
  };

  return {
    name: 'fleet',
    link,
    async start() {
      identity = loadNodeIdentity(settings.dataDir, settings.nodeId);
      const connecting = connect({
        servers: settings.url.split(',').map((server) => server.trim()),
        name: `mailproxy-fleet-${settings.nodeId}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1000,
        waitOnFirstConnect: true,
        noAsyncTraces: true,
      });
      let first: NatsConnection | null = null;
      await within(
        connecting.then((nc) => (first = nc)),
        settings.connectTimeoutMs,
      );
      heartbeat.start();
      if (first !== null) {
        connection = first;
        void follow(first);
        try {
          await attach(first);
        } catch (error) {
          // A node id held elsewhere refuses the start: the operator sees it at once.
          if (error instanceof NodeIdInUse) {
            await heartbeat.stop();
            await (first as NatsConnection).close();
            throw error;
          }
          // Anything else (the bucket's stream electing a leader after a server's loss) passes: the node starts alone and joins once it answers.
          log.warn({ err: error }, 'could not join the fleet yet; retrying');
          void attachLater(first);
        }
        return;
      }
      log.warn({ url: settings.url }, 'fleet cluster not reachable yet; this node starts alone and joins once it is');
      void connecting.then(async (nc) => {
        if (closing) return nc.close();
        connection = nc;
        void follow(nc);
        await attach(nc).catch((error: unknown) => log.error({ err: error }, 'could not join the fleet'));
      });
    },
    async stop(budget: StopBudget) {
      closing = true;
      await heartbeat.stop();
      // Said on the way out, so the others read a clean stop rather than a lost node.
      if (bucket !== null && connected)
        await within(
          // A drained node says so still: it left with nothing to lose, rather than stopped.
          writeBeat(bucket, beat(announced === 'drained' ? 'drained' : 'stopped')).catch(() => undefined),
          Math.min(STOP_WRITE_MS, budget.left()),
        );
      if (connection !== null && !connection.isClosed())
        await within(
          connection.drain().catch(() => undefined),
          Math.min(DRAIN_MS, budget.left()),
        );
      await connection?.close();
    },
    status: view,
    tick: () => heartbeat.tick(),
    async announce(state) {
      announced = state;
      if (bucket !== null && connected)
        await writeBeat(bucket, beat(state)).catch((error: unknown) => log.warn({ err: error }, 'could not write the heartbeat'));
    },
  };
}
