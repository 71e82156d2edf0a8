/**
 * The dispatcher: claims due messages per account (strict priority, within the
 * account's connections and rate budget), sends them, and records outcomes in
 * groups. It runs on the wakeable loop: woken by new work, by a timer at the
 * next due instant, and when a send frees a slot; `tick()` runs one step for tests.
 * The step is dispatch-step.ts, the lanes and sends dispatch-lanes.ts.
 */
import type { UnsubscribeLinks } from '../core/tenant/index.js';
import type { Clock, Logger, AccountRepository, TenantRepository, DeliveryTelemetry } from '../core/index.js';
import type { BodyObjects, MessageQueue } from '../core/message/index.js';
import type { Handoff, RetryPolicy } from '../core/delivery/index.js';
import type { FleetLimitGate } from '../core/fleet/index.js';
import { createWakeableLoop, within } from '../runtime/index.js';
import { createDispatchLanes, type DispatchLanes } from './dispatch-lanes.js';
import { createDispatchStep, createStepTenants, type TickReport } from './dispatch-step.js';
import type { RelayFailover } from './relay-failover.js';
import { createRelayDestinations } from './relay-destinations.js';
import type { RelayPaces } from './relay-paces.js';

export type { TickReport } from './dispatch-step.js';

export interface DispatcherDeps {
  queue: MessageQueue;
  accounts: Pick<AccountRepository, 'list' | 'version'>;
  tenants: Pick<TenantRepository, 'get'>;
  /** Builds and relays one message (here or in a relay thread). */
  handoff: Handoff;
  clock: Clock;
  log: Logger;
  random: () => number;
  /** This process's lease owner id: leases of any other owner are stale at start. */
  owner: string;
  /** VERP: the envelope sender a message is relayed with instead of the client's, or null. */
  returnPath?: (tenantId: string, messagePk: number) => string | null;
  /** Seals the one-click unsubscribe links of tenants that ask for them; absent: no link is added. */
  unsubscribeLinks?: UnsubscribeLinks;
  /** Told of each handoff (its queue wait) and each attempt's end; nothing by default. */
  telemetry?: DeliveryTelemetry;
  config: { leaseMs: number; claimBatch: number; retry: RetryPolicy };
  /** Fleet mode: fleet-wide limits; absent for a single node. */
  fleetLimits?: FleetLimitGate;
  /** Adaptive backoff (dispatch.adaptive_backoff): accounts slow down when their relay pushes back. */
  paces?: RelayPaces;
  /** Failover: an account that cannot send has its mail sent through a fallback account's relay. */
  failover?: RelayFailover;
  /** The body store, which holds large bodies; absent: none is there. */
  bodyObjects?: Pick<BodyObjects, 'get'>;
}

const noReturnPath = (): null => null;
const noTelemetry: DeliveryTelemetry = {
  handedOff: () => undefined,
  attempted: () => undefined,
  claimed: () => undefined,
};
/** After a step that failed (the store refused): try again in a second. */
const RETRY_MS = 1000;
/**
 * Under a stream of wakes (each commit of new mail, each finished send), steps at most every
 * 20 ms: each step is a claim transaction and a hand-off to the relay threads whose cost hardly
 * depends on how many messages it takes, and mail trickling in from connection-per-message clients
 * woke one claim per message. The lanes hold twenty messages a connection ahead (account-lane.ts),
 * so their connections stay busy between steps. A lone message after a quiet spell is claimed at
 * once. Alternating builds under smtp-source, 20 ms against 5 relayed more for less CPU a message,
 * and 50 no more than 20 (bench/results/HISTORY.md, issue 50).
 */
const WAKE_SPACING_MS = 20;

/**
 * Told of an erasure (inside its transaction, once per message erased): once it has committed,
 * `drop` takes the claimed messages it erased out of the lanes before they reach the relay.
 */
function afterErasure(drop: () => void, log: Logger): () => void {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    setImmediate(() => {
      pending = false;
      try {
        drop();
      } catch (error) {
        log.error({ err: error }, 'dropping erased messages from the lanes failed: they may still be relayed');
      }
    });
  };
}

/** The dispatcher's step over its lanes, with what the daemon runs: fleet limits, paces, failover, destination limits. */
function dispatchStep(
  deps: DispatcherDeps,
  lanes: DispatchLanes,
  tenants: ReturnType<typeof createStepTenants>,
  telemetry: DeliveryTelemetry,
) {
  const { queue, log, owner, config, failover } = deps;
  return createDispatchStep({
    queue,
    accounts: deps.accounts,
    lanes,
    tenants,
    log,
    telemetry,
    owner,
    leaseMs: config.leaseMs,
    claimBatch: config.claimBatch,
    ...(deps.fleetLimits === undefined ? {} : { fleetLimits: deps.fleetLimits }),
    ...(deps.paces === undefined ? {} : { paces: deps.paces }),
    ...(failover === undefined ? {} : { failover }),
    destinations: createRelayDestinations({
      queue,
      ...(deps.fleetLimits === undefined ? {} : { gate: deps.fleetLimits }),
    }),
  });
}

export function createDispatcher(deps: DispatcherDeps) {
  const { queue, clock, log, owner, config } = deps;
  const telemetry = deps.telemetry ?? noTelemetry;
  const tenants = createStepTenants(deps.tenants);
  const failover = deps.failover;
  const lanes = createDispatchLanes({
    queue,
    handoff: deps.handoff,
    clock,
    log,
    random: deps.random,
    retry: config.retry,
    returnPath: deps.returnPath ?? noReturnPath,
    unsubscribeLinks: deps.unsubscribeLinks ?? null,
    telemetry,
    tenantOf: tenants.get,
    isRunning: () => loop.isRunning(),
    wake: () => loop.wake(),
    ...(deps.paces === undefined ? {} : { paces: deps.paces }),
    ...(failover === undefined ? {} : { failover }),
    ...(deps.bodyObjects === undefined ? {} : { bodyObjects: deps.bodyObjects }),
  });
  const step = dispatchStep(deps, lanes, tenants, telemetry);
  const loop = createWakeableLoop<TickReport>({
    name: 'dispatcher',
    step,
    recover: (_error, now) => ({ claimed: 0, nextWakeAt: now + RETRY_MS }),
    clock,
    log,
    wakeSpacingMs: WAKE_SPACING_MS,
  });

  return {
    /** An erasure was written: the claimed messages it reached are not sent (dispatch-lanes.ts). */
    erased: afterErasure(() => {
      // Once stopped, the claimed messages went back to the queue, where the erasure ended them.
      if (loop.isRunning()) lanes.dropErased(clock.now());
    }, log),
    /** One dispatcher step; never two at once (a call during a step asks for one more). */
    tick: loop.tick,
    /** Asynchronous on purpose: a caller inside a store transaction must commit before we claim. */
    wake: loop.wake,
    /** Resolves when every send in flight has finished and its outcome is recorded. */
    idle: lanes.idle,
    inflight: lanes.inflight,
    /** True between start() and stop(): readiness reports it. */
    isRunning: loop.isRunning,
    /** Claimed messages waiting in memory for a free connection. */
    ready: lanes.ready,
    start(): void {
      lanes.open();
      const reclaimed = queue.reclaimLeases(clock.now(), owner, true);
      if (reclaimed > 0) log.warn({ reclaimed }, 'messages interrupted by the last stop will be sent again');
      loop.start();
    },
    /**
     * Stops claiming; waits for sends in flight until the deadline, then hands
     * the unfinished ones back to the queue, so that nothing is left `sending`.
     */
    async stop(deadlineMs: number): Promise<void> {
      const halted = loop.stop(); // a step that began before the stop may still be claiming
      lanes.releaseReady('shutting down');
      await within(lanes.idle(), deadlineMs);
      await halted;
      lanes.handBack(owner);
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
