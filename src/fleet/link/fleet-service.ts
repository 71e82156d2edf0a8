/**
 * A node's membership of the fleet: it connects to the cluster, claims its
 * node id, writes a heartbeat every `heartbeatMs` and reads everyone's. The
 * cluster being away never stops the node (FLEET.md): it starts and goes on
 * alone, says so in `/status` and `/ready`, and joins once the cluster answers.
 * A node id held by another live data directory refuses the start.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { Clock, Logger } from '../../core/index.js';
import { fleetView, nodeIdClaim, type FleetView, type NodeBeat, type NodeSighting } from '../../core/fleet/index.js';
import type { NatsConnectionHold, NatsConnectionLifecycle } from '../../nats/index.js';
import {
  createPeriodicLoop,
  type PeriodicLoop,
  type Service,
  type StopBudget,
  deadline,
  within,
} from '../../runtime/index.js';
import { openMembership, readNode, readNodes, writeBeat, type MembershipBucket } from './node-registry.js';
import { loadNodeIdentity, type NodeIdentity } from './node-identity.js';

/** The last heartbeat's wait at a stop: long enough to ride out a bucket's leader election, short against the stop's deadline. */
const STOP_WRITE_MS = 3000;
const DRAIN_MS = 1000;
/**
 * A heartbeat (its write and the read of everyone's) that has not ended by then is given up, and
 * the next one starts afresh: a KV listing can stall without ever failing while the cluster
 * elects a leader, and a stalled step would stop the loop for good (the node then reads itself as
 * missing).
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
    super(
      `fleet node id "${nodeId}" is held by another running node (another data directory): give each node its own fleet.node_id`,
    );
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

type Announced = 'active' | 'draining' | 'drained';

export interface FleetServiceDeps {
  clock: Clock;
  log: Logger;
  version: string;
  /** The cluster connection, made by the composition from the settings; the event mirror may hold it too. */
  nats: NatsConnectionLifecycle;
}

export function createFleetService(settings: FleetSettings, deps: FleetServiceDeps): FleetService {
  return new FleetMember(settings, deps);
}

/** This node as a member of the fleet: its connection, its claim on the node id, its heartbeats. */
class FleetMember implements FleetService {
  readonly name = 'fleet';
  readonly link: FleetLink;
  readonly #nats: NatsConnectionHold;
  readonly #heartbeat: PeriodicLoop;
  readonly #startedAt: number;
  readonly #joinedOnce: Promise<NatsConnection>;
  #markJoined: (nc: NatsConnection) => void = () => undefined;
  #identity: NodeIdentity | null = null;
  /** The fleet's bucket once joined, with its keys listed without a consumer. */
  #bucket: MembershipBucket | null = null;
  /** The fleet as last read (every heartbeat reads it again). */
  #nodes: NodeSighting[] = [];
  #connected = false;
  #announced: Announced = 'active';
  /** When the heartbeats began to fail (epoch ms); null while they land. */
  #failingSince: number | null = null;

  constructor(
    private readonly settings: FleetSettings,
    private readonly deps: FleetServiceDeps,
  ) {
    const { clock, log } = deps;
    this.#startedAt = clock.now();
    this.#joinedOnce = new Promise<NatsConnection>((resolve) => (this.#markJoined = resolve));
    this.#nats = deps.nats.hold({
      disconnected: (server) => {
        if (this.#connected) log.warn({ server }, 'fleet cluster unreachable; this node goes on alone');
        this.#connected = false;
      },
      reconnected: (_nc, server) => {
        this.#connected = this.#bucket !== null;
        log.info({ server }, 'fleet cluster reachable again');
      },
    });
    this.#heartbeat = createPeriodicLoop({
      name: 'fleet-heartbeat',
      intervalMs: settings.heartbeatMs,
      log,
      clock,
      run: () => this.#beatOnce(),
    });
    this.link = this.#makeLink();
  }

  async start(): Promise<void> {
    const { log } = this.deps;
    this.#identity = loadNodeIdentity(this.settings.dataDir, this.settings.nodeId);
    const first = await this.#nats.open(async (nc) => {
      await this.#attach(nc).catch((error: unknown) => log.error({ err: error }, 'could not join the fleet'));
    });
    this.#heartbeat.start();
    if (first === null) {
      log.warn(
        { url: this.settings.url },
        'fleet cluster not reachable yet; this node starts alone and joins once it is',
      );
      return;
    }
    try {
      await this.#attach(first);
    } catch (error) {
      // A node id held elsewhere refuses the start: the operator sees it at once.
      if (error instanceof NodeIdInUse) {
        await this.#heartbeat.stop();
        await this.#nats.close(0);
        throw error;
      }
      // Anything else (the bucket's stream electing a leader after a server's loss) passes: the node starts alone and joins once it answers.
      log.warn({ err: error }, 'could not join the fleet yet; retrying');
      void this.#attachLater(first);
    }
  }

  async stop(budget: StopBudget): Promise<void> {
    this.#nats.beginClose();
    await this.#heartbeat.stop();
    // Said on the way out, so the others read a clean stop rather than a lost node.
    if (this.#bucket !== null && this.#connected)
      await within(
        // A drained node says so still: it left with nothing to lose, rather than stopped.
        writeBeat(this.#bucket.kv, this.#beat(this.#announced === 'drained' ? 'drained' : 'stopped')).catch(
          () => undefined,
        ),
        Math.min(STOP_WRITE_MS, budget.left()),
      );
    await this.#nats.close(Math.min(DRAIN_MS, budget.left()));
  }

  status(): FleetView {
    return fleetView(
      this.settings.nodeId,
      this.#connected,
      this.#nodes,
      this.deps.clock.now(),
      this.settings.nodeTimeoutMs,
    );
  }

  tick(): Promise<void> {
    return this.#heartbeat.tick();
  }

  async announce(state: Announced): Promise<void> {
    this.#announced = state;
    if (this.#bucket !== null && this.#connected)
      await writeBeat(this.#bucket.kv, this.#beat(state)).catch((error: unknown) =>
        this.deps.log.warn({ err: error }, 'could not write the heartbeat'),
      );
  }

  #makeLink(): FleetLink {
    const { nodeId } = this.settings;
    return {
      nodeId,
      connection: () => (this.#bucket === null ? null : this.#nats.current()),
      joined: () => this.#joinedOnce,
      connected: () => this.#connected,
      joining: () => this.#nats.current() !== null && this.#bucket === null && !this.#nats.closing(),
      aliveNodes: () => {
        const alive = this.status()
          .nodes.filter((node) => node.liveness === 'alive')
          .map((node) => node.node_id);
        return alive.includes(nodeId) ? alive : [...alive, nodeId].sort();
      },
      sightings: () => this.#nodes,
      instance: () => this.#identity?.instance ?? '',
    };
  }

  #beat(state: NodeBeat['state']): NodeBeat {
    return {
      node_id: this.settings.nodeId,
      instance: this.#identity?.instance ?? '',
      state,
      started_at: this.#startedAt,
      version: this.deps.version,
    };
  }

  async #beatOnce(): Promise<void> {
    const { clock, log } = this.deps;
    if (this.#bucket === null || !this.#connected) return;
    const { kv, keys } = this.#bucket;
    const limit = Math.max(HEARTBEAT_DEADLINE_MS, 2 * this.settings.heartbeatMs);
    try {
      await deadline(writeBeat(kv, this.#beat(this.#announced)), limit, 'the fleet heartbeat write');
      this.#nodes = await deadline(readNodes(kv, keys), limit, 'the read of the fleet');
    } catch (error) {
      // While the bucket elects a new leader every beat fails the same way for seconds: the
      // first failure says why, the recovery says for how long; the loop would log each one.
      if (this.#failingSince === null) log.warn({ err: error }, 'fleet heartbeat failing');
      this.#failingSince ??= clock.now();
      return;
    }
    if (this.#failingSince !== null)
      log.info({ failingForMs: clock.now() - this.#failingSince }, 'fleet heartbeat recovered');
    this.#failingSince = null;
  }

  /** Opens the bucket, claims the node id and reads the fleet: once per connection's life. */
  async #attach(nc: NatsConnection): Promise<void> {
    const { settings } = this;
    const { kv, keys } = await openMembership(nc, settings.bucket, settings.replicas);
    const found = await readNode(kv, settings.nodeId);
    const claim = nodeIdClaim(found, this.#identity?.instance ?? '', this.deps.clock.now(), settings.nodeTimeoutMs);
    if (!claim.ok) throw new NodeIdInUse(settings.nodeId);
    await writeBeat(kv, this.#beat(this.#announced));
    this.#nodes = await readNodes(kv, keys);
    this.#bucket = { kv, keys };
    this.#connected = true;
    this.#markJoined(nc);
    this.deps.log.info({ nodeId: settings.nodeId, bucket: settings.bucket }, 'joined the fleet');
  }

  /** Tries to join again each second until it does (or the node stops). */
  async #attachLater(nc: NatsConnection): Promise<void> {
    while (!this.#nats.closing() && this.#bucket === null) {
      await new Promise((resolve) => setTimeout(resolve, ATTACH_RETRY_MS));
      if (this.#nats.closing()) return;
      try {
        await this.#attach(nc);
      } catch (error) {
        if (error instanceof NodeIdInUse) this.deps.log.error({ err: error }, 'could not join the fleet');
      }
    }
  }
}
