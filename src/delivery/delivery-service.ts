/**
 * Delivery as the daemon runs it: the hand-off (here or in threads) and the
 * dispatcher over it. Two services: the dispatcher stops with the work in
 * flight, the hand-off (its relay threads) after it.
 */
import type { UnsubscribeLinks } from '../core/tenant/index.js';
import type { Clock, Logger, AccountRepository, TenantRepository, DeliveryTelemetry } from '../core/index.js';
import type { BodyObjects, MessageQueue } from '../core/message/index.js';
import {
  DEFAULT_PACE_POLICY,
  type AccountFailovers,
  type AccountPaces,
  type Handoff,
  type RetryPolicy,
  type RelaySignals,
} from '../core/delivery/index.js';
import type { FleetLimitGate } from '../core/fleet/index.js';
import { type Service, within } from '../runtime/index.js';
import type { KeyEncryptionKey } from '../security/index.js';
import { createDispatcher, type Dispatcher } from './dispatcher.js';
import type { FileStoreSettings, HandoffSettings } from './handoff.js';
import { createThreadedHandoff, type HandoffThreads } from './handoff-threads.js';
import { createRelayFailover } from './relay-failover.js';
import { createRelayPaces } from './relay-paces.js';
import { createRelayProbe } from './relay-probe.js';

const NO_PACES: AccountPaces = { of: () => null, all: () => [] };

export interface DeliverySettings
  extends Omit<HandoffSettings, 'hostname' | 'files'>, Omit<HandoffThreads, 'logLevel'> {
  leaseMs: number;
  claimBatch: number;
  retry: RetryPolicy;
  /** dispatch.adaptive_backoff: accounts slow down when their relay pushes back. */
  adaptiveBackoff: boolean;
}

export interface DeliveryDeps {
  queue: MessageQueue;
  accounts: Pick<AccountRepository, 'list' | 'version' | 'get'>;
  tenants: Pick<TenantRepository, 'get'>;
  clock: Clock;
  log: Logger;
  random: () => number;
  /** This process's lease owner id. */
  owner: string;
  hostname: string;
  logLevel: string;
  /** Where offloaded attachments go (handoff.ts); null: no body store, every attachment goes whole. */
  files: FileStoreSettings | null;
  /** The key-encryption keys that open sealed bodies, the current one first (security/body-seal.ts). */
  bodyKeys: KeyEncryptionKey[];
  returnPath?: ((tenantId: string, messagePk: number) => string | null) | undefined;
  /** Seals the one-click unsubscribe links of tenants that ask for them. */
  unsubscribeLinks?: UnsubscribeLinks;
  telemetry: DeliveryTelemetry;
  /** Fleet mode: fleet-wide limits; absent for a single node. */
  fleetLimits?: FleetLimitGate;
  /** Fleet mode: what the nodes tell each other of their relays (pushback, unreachable, answering again). */
  relaySignals?: RelaySignals;
  /** The body store, which holds large bodies; absent: none is there. */
  bodyObjects?: Pick<BodyObjects, 'get'>;
}

export interface DeliveryService {
  dispatcher: Dispatcher;
  /** The accounts paced after pushback (none when adaptive backoff is off). */
  paces: AccountPaces;
  /** The accounts whose mail goes through a fallback account now. */
  failovers: AccountFailovers;
  handoff: Handoff;
  /** Claims and sends; at stop, waits for its sends until the deadline, then hands the rest back to the queue. */
  dispatching: Service;
  /** The relay threads: closed after the dispatcher, within half of what is left (a relay stuck on a silent server must not hold the rest). */
  relaying: Service;
}

export function createDeliveryService(settings: DeliverySettings, deps: DeliveryDeps): DeliveryService {
  const handoffSettings: HandoffSettings = {
    sendTimeoutMs: settings.sendTimeoutMs,
    attachmentTimeoutMs: settings.attachmentTimeoutMs,
    attachmentMaxBytes: settings.attachmentMaxBytes,
    allowPrivateAttachmentUrls: settings.allowPrivateAttachmentUrls,
    hostname: deps.hostname,
    files: deps.files,
  };
  const threads = {
    composeThreads: settings.composeThreads,
    relayThreads: settings.relayThreads,
    logLevel: deps.logLevel,
  };
  const handoff = createThreadedHandoff(handoffSettings, deps.bodyKeys, threads, deps.log);
  const log = deps.log.child({ component: 'dispatcher' });
  const signals = deps.relaySignals;
  const paces = settings.adaptiveBackoff ? createRelayPaces(DEFAULT_PACE_POLICY, log, signals?.tell) : undefined;
  const probe = createRelayProbe({ clock: deps.clock });
  const failover = createRelayFailover({
    probe: async (account) => (await probe.probe(account)).ok,
    usage: deps.queue.usage,
    // A relay that answers again takes its mail back at the next step.
    wake: () => dispatcher.wake(),
    log,
    ...(signals === undefined ? {} : { tell: signals.tell }),
  });
  signals?.hear((signal) => {
    const now = deps.clock.now();
    if (signal.kind !== 'pushback') return failover.heard(signal, now);
    const account = deps.accounts.get(signal.tenantId, signal.accountId);
    if (account !== null) paces?.heard(account, signal, now);
  });
  const dispatcher = createDispatcher({
    queue: deps.queue,
    accounts: deps.accounts,
    tenants: deps.tenants,
    handoff,
    clock: deps.clock,
    log,
    random: deps.random,
    owner: deps.owner,
    ...(deps.returnPath === undefined ? {} : { returnPath: deps.returnPath }),
    ...(deps.unsubscribeLinks === undefined ? {} : { unsubscribeLinks: deps.unsubscribeLinks }),
    telemetry: deps.telemetry,
    config: { leaseMs: settings.leaseMs, claimBatch: settings.claimBatch, retry: settings.retry },
    ...(deps.fleetLimits === undefined ? {} : { fleetLimits: deps.fleetLimits }),
    ...(paces === undefined ? {} : { paces }),
    failover,
    ...(deps.bodyObjects === undefined ? {} : { bodyObjects: deps.bodyObjects }),
  });
  return {
    dispatcher,
    paces: paces ?? NO_PACES,
    failovers: failover,
    handoff,
    dispatching: {
      name: 'dispatcher',
      start: () => dispatcher.start(),
      stop: (budget) => dispatcher.stop(budget.waitLeft()),
    },
    relaying: { name: 'relay-threads', stop: (budget) => within(handoff.close(), budget.left() / 2) },
  };
}
