/**
 * What the composition is made with, and how a node's mode (alone, or one of
 * a fleet) decorates the single-node services at each step of it. A single
 * node's decorations change nothing; fleet mode's are made in fleet.ts.
 * Types only: no behaviour of its own.
 */
import type { UnsubscribeLinks } from '../core/tenant/index.js';
import type { AttemptLog, Usage } from '../core/account/index.js';
import type { Clock, IdSource, Logger } from '../core/index.js';
import type { FleetView, FleetMessages } from '../core/fleet/index.js';
import type { BodyObjects, BodySeal, FileFinder, MessageCommands, SubmissionService } from '../core/message/index.js';
import type { DaemonSettings } from '../config/index.js';
import type { DeliveryDeps, Dispatcher } from '../delivery/index.js';
import type { CommandDeps } from '../ingress/commands/index.js';
import type { HealthSources, FleetDrainControl, ReadinessCheck } from '../ingress/http/index.js';
import type { SmtpSessionDeps } from '../ingress/smtp/index.js';
import type { Metrics, MetricsSources } from '../metrics/index.js';
import type { NatsConnectionLifecycle } from '../nats/index.js';
import type { Stage } from '../runtime/index.js';
import type { FileSpool } from '../storage/index.js';
import type { SqliteStore } from '../store/index.js';
import type { WebhookService, WebhookServiceDeps } from '../ingress/webhooks/index.js';
import type { KeyEncryptionKey } from '../security/index.js';
import type { AdminWrites, SharedAdmin } from './fleet-config.js';

/** What every part of the composition is made with. */
export interface DaemonContext {
  settings: DaemonSettings;
  /** The store the use-cases are made with (the node's: see NodeMode.store). */
  store: SqliteStore;
  clock: Clock;
  ids: IdSource;
  log: Logger;
  random: () => number;
  metrics: Metrics;
  attempts: AttemptLog;
  node: NodeMode;
  /** The key-encryption keys of message bodies, for the threads that open them (DaemonKeys.bodyKeys). */
  bodyKeys: KeyEncryptionKey[];
  /** The blind index's key, as the store's digests are made with it, for the parser threads. */
  blindKey: Uint8Array;
  /** Seals and opens one-click unsubscribe links (their key kept through rotations). */
  unsubscribeLinks: UnsubscribeLinks;
  /** The key of offloaded attachments' download links (security/file-links.ts), kept as the unsubscribe links' is. */
  fileLinksKey: Uint8Array;
  /** This build's version (the MCP server's, /metrics'). */
  version: string;
  /** The body store of large bodies; null without one (backend `database`, or a fleet node with `embedded`). */
  bodyStore: BodyStore | null;
  /** What reads large bodies: the body store, or without one what a body store left in the data directory. */
  bodyReader: Pick<BodyObjects, 'get'>;
}

/** The body store, and what intake seals large bodies with before they go there. */
export interface BodyStore {
  objects: BodyObjects;
  /** Large SMTP submissions as they arrive, beside the store instead of in the database. */
  spool: FileSpool;
  abandonedSpoolMs: number;
  seal: BodySeal;
  inlineMaxBytes: number;
  removalIntervalMs: number;
  /** What begins the names of the objects this daemon writes (a fleet node's id and a slash, or nothing). */
  ownNames: string;
}

export type FleetModeSettings = NonNullable<DaemonSettings['fleet']>;

type UsageOf = (tenantId: string, accountId: string, now: number) => Usage;

/** Made before the work: how the node's use-cases and delivery are decorated. */
export interface NodeMode {
  /** The store the use-cases are made with: in a fleet, its change log records the changes the fleet shares. */
  store: SqliteStore;
  /** The main thread's NATS connection the event mirror shares: in a fleet, the cluster's; alone, none (the mirror makes its own). */
  nats: NatsConnectionLifecycle | null;
  /** The admin use-cases as handed out: in a fleet, their shared writes go to the fleet's bucket first. */
  shareAdmin<A extends AdminWrites>(admin: A): SharedAdmin<A>;
  /** The message commands as handed out, shared as the admin writes are. */
  shareCommands(commands: MessageCommands): MessageCommands;
  /** What the delivery service takes beside its own deps: in a fleet, the gate of fleet-wide limits. */
  delivery: Pick<DeliveryDeps, 'fleetLimits' | 'relaySignals'>;
  /** The usage a message's waiting reasons read: in a fleet, a window the fleet used up reads as full. */
  waitingUsage(local: UsageOf): UsageOf;
  /** The next step, once the work behind intake is made. */
  withWork(ctx: DaemonContext, work: NodeWork): NodeReach;
}

/** What a node's mode takes of the work behind intake. */
export interface NodeWork {
  commands: MessageCommands;
  submissions: SubmissionService;
  wake(): void;
  delivery: { dispatcher: Pick<Dispatcher, 'stop' | 'wake'> };
}

/** Made after the work: what the streams take of the other nodes (nothing, alone). */
export interface NodeReach {
  /** Provider events no message here matched go to the other nodes. */
  webhooks: Pick<WebhookServiceDeps, 'elsewhere'>;
  commands: Pick<CommandDeps, 'fleetResend'>;
  metrics: Pick<MetricsSources, 'fleetQueues'>;
  /** The last step, once the streams are made. */
  withStreams(streams: NodeStreams): NodeIntake;
}

/** What a node's mode takes of the streams. */
export interface NodeStreams {
  webhooks: Pick<WebhookService, 'apply'>;
  /** Accounts changed (here or on another node): the PEC watchers follow. */
  accountsChanged(): void;
}

/** Made after the streams: how intake is decorated, and the node's own services. */
export interface NodeIntake {
  /** The submission service intake takes: in a fleet, checked against the fleet's claims and held by its spool. */
  submissions: SubmissionService;
  api: {
    /** GET /status's and /ready's fleet part; null alone. */
    fleetStatus(): FleetView | null;
    fleetDrain: FleetDrainControl | null;
    fleetMessages: FleetMessages | null;
    /** Where offloaded attachments' links find their files: in a fleet, on the node that sent them; alone, here. */
    fleetFiles: FileFinder | null;
    fleetQueues: HealthSources['fleetQueues'];
    readiness: ReadinessCheck[];
  };
  smtp: Pick<SmtpSessionDeps, 'draining'>;
  /** Started after the parser threads, before the event stream; and the requests of other nodes, started last. */
  stages: { joining: Stage[]; answering: Stage[] };
}
