/**
 * Fleet mode as one unit: the fleet's link (its connection, this node's
 * identity, the membership) is made first, from settings, clock, log and
 * version; everything fleet mode adds is made over it and handed to the rest
 * of the composition as decorations of the single-node services (node-mode.ts).
 * The one composition file that tells a single node from a fleet node; its
 * parts are fleet-config.ts, fleet-features.ts and fleet-spool.ts.
 */
import { localMessages, replicateMethods } from '../core/fleet/index.js';
import { AppError, type Clock, type Logger } from '../core/index.js';
import { SHARED_COMMANDS, type BodyObjectRows, type FileFinder } from '../core/message/index.js';
import {
  createFleetLimits,
  createRelaySignals,
  type FleetLimits,
  createFleetFiles,
  createFleetMessages,
  createFleetService,
  type FleetService,
  createViewResponder,
  erasingSharedSuppressions,
} from '../fleet/index.js';
import { NatsConnectionLifecycle } from '../nats/index.js';
import type { Service } from '../runtime/index.js';
import type { SqliteStore } from '../store/index.js';
import { createFleetFeatures } from './fleet-features.js';
import type {
  DaemonContext,
  FleetModeSettings,
  NodeIntake,
  NodeMode,
  NodeReach,
  NodeStreams,
  NodeWork,
} from './node-mode.js';
import { createSharedConfig, shareConfigWrites, type SharedConfig } from './fleet-config.js';

/** How often wanted leases are retried while the cluster is away (and membership changes looked for). */
const LIMITS_RETRY_MS = 1000;
/** The shared connection's pings: a server gone quiet is noticed within seconds, not the client's 2 minutes. */
const PING_INTERVAL_MS = 10_000;

/**
 * A fleet node's one main-thread connection to the cluster (fleet mode needs nats.url, so the
 * event mirror is on too): the membership and the mirror each hold it, hear its losses and
 * returns, and the last to stop closes it. Named for the node, as the membership's own was, so
 * that the servers' /connz tells the nodes apart; pinged as the mirror's own was, which serves the
 * membership too (it reads a lost server sooner). The mirror's publisher thread dials its own.
 */
function clusterConnection(settings: FleetModeSettings): NatsConnectionLifecycle {
  return new NatsConnectionLifecycle({
    url: settings.url,
    name: `mailproxy-fleet-${settings.nodeId}`,
    connectTimeoutMs: settings.connectTimeoutMs,
    pingIntervalMs: PING_INTERVAL_MS,
  });
}

/** A node alone: every decoration leaves the single-node service as it is. */
export function singleNode(store: SqliteStore): NodeMode {
  return {
    store,
    nats: null,
    shareAdmin: (admin) => shareConfigWrites(null, admin),
    shareCommands: (commands) => commands,
    delivery: {},
    waitingUsage: (local) => local,
    withWork: (_ctx, work) => ({
      webhooks: {},
      commands: {},
      metrics: {},
      withStreams: () => ({
        submissions: work.submissions,
        api: {
          fleetStatus: () => null,
          fleetDrain: null,
          fleetMessages: null,
          fleetQueues: null,
          fleetFiles: null,
          readiness: [],
        },
        smtp: {},
        stages: { joining: [], answering: [] },
      }),
    }),
  };
}

/** What fleet mode makes before the work: the link, the shared configuration and the fleet-wide limits over it. */
interface FleetBase {
  settings: FleetModeSettings;
  fleet: FleetService;
  shared: SharedConfig;
  limits: FleetLimits;
  relaySignals: Service;
}

export function createFleetNode(
  settings: FleetModeSettings,
  deps: { store: SqliteStore; clock: Clock; log: Logger; version: string },
): NodeMode {
  const { clock, log } = deps;
  const nats = clusterConnection(settings);
  // The link first: a node id held by another live node refuses the start before anything else runs over it.
  const fleet = createFleetService(settings, {
    clock,
    log: log.child({ component: 'fleet' }),
    version: deps.version,
    nats,
  });
  // The admin use-cases share their writes through the fleet's bucket; a follower applies every node's.
  const shared = createSharedConfig(settings, { store: deps.store, link: fleet.link, clock, log });
  // Fleet-wide limits: a gate for the dispatcher.
  const limits = createFleetLimits(
    {
      bucket: `${settings.bucket}_limits`,
      replicas: settings.replicas,
      chunk: settings.limitChunk,
      retryMs: LIMITS_RETRY_MS,
    },
    { link: fleet.link, clock, log: log.child({ component: 'fleet-limits' }) },
  );
  // What each node learns of a relay (pushback, silence, an answer again), for the others to act on too.
  const relaySignals = createRelaySignals(fleet.link, log.child({ component: 'fleet-relays' }));
  const base: FleetBase = { settings, fleet, shared, limits, relaySignals: relaySignals.service };
  return {
    store: shared.store,
    nats,
    shareAdmin: (admin) => shareConfigWrites(shared.writes, admin),
    shareCommands: (commands) => replicateMethods(commands, SHARED_COMMANDS, shared.writes),
    delivery: { fleetLimits: limits.gate, relaySignals },
    waitingUsage: limits.waitingUsage,
    withWork: (ctx, work) => fleetReach(base, ctx, work),
  };
}

/** The fleet's one view: reads and commands across the nodes, and provider events no message here matched. */
function fleetReach(base: FleetBase, ctx: DaemonContext, work: NodeWork): NodeReach {
  const { fleet, limits } = base;
  // A lease came or the live nodes changed: the dispatcher looks again.
  limits.onChange(() => work.delivery.dispatcher.wake());
  const local = localMessages(ctx.store.search, work.commands, ctx.store.queueStatus);
  const log = ctx.log.child({ component: 'fleet-view' });
  const known = () => fleet.status().nodes.map((node) => node.node_id);
  // An erasure by address or of a whole tenant also removes the shared suppression entries, once, from here.
  const messages = erasingSharedSuppressions(
    createFleetMessages({
      link: fleet.link,
      known,
      local,
      log,
    }),
    base.shared.suppressionErasure,
    log,
  );
  return {
    webhooks: { elsewhere: (tenantId, events) => messages.providerEvents(tenantId, events) },
    commands: {
      fleetResend: (command, tenantId, ids) => messages.command(command, 'resend', { tenant_id: tenantId, ids }),
    },
    metrics: { fleetQueues: () => messages.queues() },
    withStreams: (streams) => {
      // Answers the other nodes about this node's messages, and applies the provider events they pass on.
      const viewResponder = createViewResponder({
        link: fleet.link,
        local,
        files: ctx.store.files,
        providerEvents: streams.webhooks.apply,
        log,
      });
      // Offloaded attachments' links work on every node: a file is asked of the node that sent its message.
      const files = createFleetFiles({ link: fleet.link, known, local: ctx.store.files, log });
      return fleetIntake(base, ctx, work, streams, { messages, viewResponder, files });
    },
  };
}

function fleetIntake(
  base: FleetBase,
  ctx: DaemonContext,
  work: NodeWork,
  streams: NodeStreams,
  view: {
    messages: ReturnType<typeof createFleetMessages>;
    viewResponder: ReturnType<typeof createViewResponder>;
    files: FileFinder;
  },
): NodeIntake {
  const { settings, fleet, shared, limits, relaySignals } = base;
  // A change from any node: the dispatcher serves a new account or released mail, the PEC watchers follow accounts.
  shared.onApplied(() => {
    work.wake();
    streams.accountsChanged();
  });
  const features = createFleetFeatures(settings, ctx, work, fleet);
  const { drain, durable } = features;
  // A fleet node's view, with its fleet-wide limits' leases (and whether it is cut off from them).
  const fleetStatus = () =>
    Object.assign(fleet.status(), { limits: limits.status() }, durable === null ? {} : { spool: durable.status() });
  return {
    submissions: features.submissions,
    api: {
      fleetStatus,
      fleetDrain: drain,
      fleetMessages: view.messages,
      fleetQueues: () => view.messages.queues(),
      fleetFiles: view.files,
      // A draining node tells load balancers to move away.
      readiness: [{ name: 'fleet_drain', check: () => drain.phase() === 'active' }],
    },
    smtp: { draining: () => drain.phase() !== 'active' },
    stages: {
      joining: [
        {
          name: 'bodies the fleet can reach',
          services: [bodiesTheFleetReaches(ctx.store.bodyObjectRows, ctx.bodyStore === null ? 'all' : 'alone')],
        },
        // A node id held by another live node refuses the start here, before anything is accepted.
        { name: 'fleet', services: [fleet] },
        // A node that was down catches up with the shared configuration before it takes requests.
        { name: 'shared configuration', services: [shared.follower] },
        { name: 'fleet limits', services: [limits.service, relaySignals] },
        // Follows the fleet's claims on client ids before intake opens (fleet-wide idempotency).
        { name: 'fleet claims', services: [features.claimLog] },
        // Back from being away: what a survivor adopted meanwhile is given up before anything is sent.
        ...(durable === null ? [] : [{ name: 'fleet spool', services: [durable.adoption, durable.spool] }]),
        // Answers the other nodes about this node's messages.
        { name: 'fleet view', services: [view.viewResponder] },
      ],
      // Other nodes' requests (adopting a drained node's mail, "do you have this id?"): answered last, stopped first.
      answering: [{ name: 'fleet requests', services: [features.responder] }],
    },
  };
}

/**
 * A fleet's transfers and adoptions carry bodies from the database, or name objects of the store
 * the nodes share (written by fleet nodes: their names carry the writer's node id, this node's or,
 * for mail it adopted, another's): a node whose mail still waits with its bodies in a store of its
 * own (it ran alone with `[storage]`: `all` without a shared store, those written `alone` with one)
 * would hand it over without them. It refuses to join until that mail is sent, alone.
 */
function bodiesTheFleetReaches(objects: Pick<BodyObjectRows, 'waiting'>, unreachable: 'all' | 'alone'): Service {
  return {
    name: 'bodies the fleet can reach',
    start() {
      const waiting = objects.waiting(unreachable);
      if (waiting > 0)
        throw new AppError(
          'CONFIG_INVALID',
          `${waiting} messages still to be sent have their bodies in the body store this node used alone ([storage]), which the fleet's other nodes cannot read: start this node without [fleet] until they are sent, then join the fleet`,
        );
    },
    stop: () => undefined,
  };
}
