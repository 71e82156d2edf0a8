/**
 * Composition root: configuration -> settings -> keys -> store -> the rooms'
 * services, started as one ordered list (runtime/service.ts) and stopped in
 * reverse under one deadline: intake first, then the work in flight, the relay
 * threads, the event stream, the parser threads, the store last. The only
 * module (with src/composition/ and cli/) that wires rooms together; each *.thread.ts
 * entry wires only its own room.
 */
import { createAttemptLog } from './core/account/index.js';
import type { Clock, IdSource, Logger } from './core/index.js';
import type { BodyObjects, BodySeal } from './core/message/index.js';
import { daemonSettings, type Config, type DaemonSettings } from './config/index.js';
import type { MailboxWatchers } from './bounce/index.js';
import { createIntake } from './composition/intake.js';
import { createFleetNode, singleNode } from './composition/fleet.js';
import type { BodyStore, NodeIntake } from './composition/node-mode.js';
import { createStreams, type Streams } from './composition/streams.js';
import { createWork, type Work } from './composition/work.js';
import type { Dispatcher } from './delivery/index.js';
import type { SmtpIngress } from './ingress/smtp/index.js';
import { createMetrics } from './metrics/index.js';
import type { DaemonMirror } from './outbox/index.js';
import { createLifecycle, mailproxyVersion, type PeriodicLoop, type Stage } from './runtime/index.js';
import { openDaemonKeys } from './security/index.js';
import { openStoreService, type StoreService, type SqliteStore } from './store/index.js';
import { createJetStreamObjects } from './nats/index.js';
import { bodiesLeftBehind, createFileSpool, openBodyObjects } from './storage/index.js';
import type { ReportLoop } from './sync/index.js';

export { DATABASE_FILE } from './store/index.js';

export interface DaemonDeps {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  ids: IdSource;
  /** Uniform [0, 1): retry jitter. */
  random?: () => number;
  /** Shown by mailproxy_build_info and in the fleet's heartbeats; package.json's by default. */
  version?: string;
}

export interface Daemon {
  http: { host: string; port: number };
  /** The SMTP listeners; null when both are off. */
  smtp: Pick<SmtpIngress, 'plain' | 'implicitTls' | 'reloadTls'> | null;
  store: SqliteStore;
  dispatcher: Dispatcher;
  reports: ReportLoop;
  mirror: DaemonMirror;
  bounces: MailboxWatchers;
  retention: PeriodicLoop;
  /** Removes from the body store what no message needs any more; null without a body store (fleet mode). */
  bodyRemoval: PeriodicLoop | null;
  /** Brings the full-text index of messages up to date (GET /messages?q=). */
  searchIndex: PeriodicLoop;
  /** Checks every sending domain's DNS (and moves key rotations on). */
  domainChecks: PeriodicLoop;
  /** The stop's deadline a signal gives it (`shutdown_timeout_seconds`). */
  shutdownMs: number;
  stop(deadlineMs: number): Promise<void>;
}

export async function startDaemon(deps: DaemonDeps): Promise<Daemon> {
  const { log, clock, ids } = deps;
  const settings = daemonSettings(deps.config);
  const version = deps.version ?? mailproxyVersion();
  const keyRing = openDaemonKeys(settings.keys, log);
  // Large bodies' store, before the database that reads them from it.
  const { storage } = settings;
  const bodyObjects =
    storage === null
      ? null
      : await openBodyObjects(
          storage,
          () => clock.now(),
          () => createJetStreamObjects(storage.jetstream, storage.ownNames),
        );
  const bodyReader = bodyObjects ?? bodiesLeftBehind(settings.bodiesDirectory);
  const stored = openStoreService(settings, {
    objects: bodyReader,
    secrets: keyRing.secrets,
    bodies: keyRing.bodies,
    blindIndex: keyRing.blindIndex,
    ids,
    clock,
    log,
  });
  // The spool beside the store clears what a stop left: only once the data directory is ours (its lock).
  const bodyStore = storage === null || bodyObjects === null ? null : bodyStoreOf(storage, bodyObjects, keyRing.bodies);
  // API keys are digested with the key the database kept through key rotations, if it kept one.
  const keys = keyRing.withTokenDigest(stored.store.tokenDigestKey());
  // Alone, or a node of a fleet whose link is made first and whose features decorate the single-node services.
  const node =
    settings.fleet === null
      ? singleNode(stored.store)
      : createFleetNode(settings.fleet, { store: stored.store, clock, log, version });
  const store = node.store;
  const ctx = {
    settings,
    store,
    node,
    clock,
    ids,
    log,
    random: deps.random ?? Math.random,
    metrics: createMetrics({ version }),
    attempts: createAttemptLog(),
    bodyKeys: keys.bodyKeys,
    blindKey: stored.store.keptBlindKey() ?? keyRing.blindKey,
    unsubscribeLinks: keyRing.unsubscribeLinks(stored.store.keptUnsubscribeKey()),
    fileLinksKey: keyRing.fileLinksKey(stored.store.keptUnsubscribeKey()),
    version,
    bodyStore,
    bodyReader,
  };
  const work = createWork(ctx);
  const reach = node.withWork(ctx, work);
  const streams = createStreams(ctx, work, reach);
  const joined = reach.withStreams({
    webhooks: streams.webhooks,
    accountsChanged: () => streams.bounces.watchers.accountsChanged(),
  });
  const intake = createIntake(ctx, keys, work, streams, joined);
  const lifecycle = createLifecycle(stages(stored, work, streams, intake, joined, bodyObjects), log);
  await lifecycle.start();
  return {
    http: intake.http.address(),
    smtp: intake.smtp.ingress(),
    store,
    dispatcher: work.delivery.dispatcher,
    reports: work.reports.loop,
    mirror: streams.mirror.mirror,
    bounces: streams.bounces.watchers,
    retention: stored.retention,
    bodyRemoval: work.bodyRemoval.loop,
    searchIndex: stored.searchIndex,
    domainChecks: intake.domainChecks.loop,
    shutdownMs: settings.shutdownMs,
    stop: (deadlineMs) => lifecycle.stop(deadlineMs),
  };
}

/** The body store with its spool, and how intake seals and offloads large bodies to it. */
function bodyStoreOf(storage: NonNullable<DaemonSettings['storage']>, objects: BodyObjects, seal: BodySeal): BodyStore {
  return {
    objects,
    spool: createFileSpool(storage.spoolDirectory, seal),
    abandonedSpoolMs: storage.abandonedSpoolMs,
    seal,
    inlineMaxBytes: storage.inlineMaxBytes,
    removalIntervalMs: storage.removalIntervalMs,
    ownNames: storage.ownNames,
  };
}

/** The services in start order; they stop in reverse, a stage's services together. */
function stages(
  stored: StoreService,
  work: Work,
  streams: Streams,
  intake: ReturnType<typeof createIntake>,
  node: NodeIntake,
  bodyObjects: BodyObjects | null,
): Stage[] {
  // The body store's connections go last, with the database: a send stopping may still read a body.
  const bodyStore = { name: 'body store', stop: () => bodyObjects?.close() };
  return [
    { name: 'store', services: [stored.service, bodyStore] },
    { name: 'threads', services: [work.parsing.service] },
    // A fleet node joins, follows the fleet's configuration and claims, and answers for its messages before anything is accepted.
    ...node.stages.joining,
    // A stream that conflicts refuses the start here, before anything is accepted.
    { name: 'event stream', services: [streams.mirror.publishing] },
    { name: 'relays', services: [work.delivery.relaying] },
    {
      name: 'work',
      services: [work.delivery.dispatching, work.reports.service, stored.loops, ...work.bodyRemoval.services],
    },
    {
      name: 'intake',
      services: [
        streams.bounces.service,
        streams.mirror.commands,
        intake.http.service,
        intake.smtp.service,
        intake.domainChecks.service,
      ],
      stopping: 'listeners closed; finishing the submissions in flight',
      stopped: 'intake closed; waiting for sends and report rounds in flight',
    },
    // Other nodes' requests of a fleet node: answered last, stopped first.
    ...node.stages.answering,
  ];
}
