/**
 * The dispatcher: claims due messages per account (strict priority, within the
 * account's connections and rate budget), sends them, and records outcomes in
 * groups. It wakes on new work, on a timer set to the next due instant, and
 * when a send frees a slot; `tick()` runs one step for tests.
 */
import type { Account } from '../core/account.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { AccountRepository, TenantRepository } from '../core/ports.js';
import type { ClaimedMessage, MessageQueue } from '../core/queue.js';
import { availableBudget, budgetReturnsAt, RATE_LIMIT_EXCEEDED } from '../core/rate-limit.js';
import type { Handoff } from '../core/relay.js';
import type { RetryPolicy } from '../core/retry-policy.js';
import type { DeliveryTelemetry } from '../core/telemetry.js';
import type { Tenant } from '../core/tenant.js';
import { addReady, laneKey, laneWindow, nextToSend, type Lane } from './account-lane.js';
import { createOutcomeBatcher } from './outcome-batcher.js';
import { attemptSend } from './send-attempt.js';

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
  /** Told of each handoff (its queue wait) and each attempt's end; nothing by default. */
  telemetry?: DeliveryTelemetry;
  config: { leaseMs: number; claimBatch: number; retry: RetryPolicy };
}

export interface TickReport {
  claimed: number;
  /** When the next timer fires (epoch ms), or null when nothing waits. */
  nextWakeAt: number | null;
}

const noReturnPath = (): null => null;
const noTelemetry: DeliveryTelemetry = { handedOff: () => undefined, attempted: () => undefined, claimed: () => undefined };

export function createDispatcher(deps: DispatcherDeps) {
  const { queue, clock, log } = deps;
  const telemetry = deps.telemetry ?? noTelemetry;
  const lanes = new Map<string, Lane>();
  const running = new Set<Promise<void>>();
  /** Messages handed to the relay whose outcome is not recorded yet. */
  const onWire = new Set<number>();
  const heldPks = (): number[] => [...onWire, ...[...lanes.values()].flatMap((lane) => lane.ready.map((message) => message.pk))];
  const outcomes = createOutcomeBatcher({ queue, log });
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<TickReport> | null = null;
  let again = false;
  let stopped = true;
  /** After stop(): the leases went back to the queue, so outcomes still arriving are not recorded. */
  let handedBack = false;

  const launch = (message: ClaimedMessage, lane: Lane): void => {
    const account = lane.account;
    lane.sending += 1;
    onWire.add(message.pk);
    const tenant = tenantOf(message.tenantId);
    const job = (async () => {
      if (tenant === null) return; // deleted meanwhile: its messages went with it
      telemetry.handedOff(message.priority, Math.max(0, clock.now() - message.dueAt));
      const { outcome, decision, relayMs } = await attemptSend({ handoff: deps.handoff, readSpool: (spoolId) => queue.spooledContent(spoolId), retry: deps.config.retry, returnPath: deps.returnPath ?? noReturnPath, now: clock.now, random: deps.random }, message, account, tenant);
      if (handedBack) return; // answered after the stop's deadline: the message is queued again, the store may be closed
      if (decision.kind === 'account_problem') {
        queue.pauseAccount(account.tenantId, account.id, outcome.at, decision.reason);
        log.warn({ tenantId: account.tenantId, accountId: account.id, stage: decision.stage, reason: decision.reason }, 'account paused');
        release(lane.ready.splice(0), outcome.at, 'account paused');
      }
      log.debug({ tenantId: message.tenantId, messageId: message.id, attempt: message.attempts, outcome: outcome.kind, replyCode: outcome.replyCode }, 'send attempt finished');
      const text = decision.kind === 'sent' ? decision.text : decision.reason;
      telemetry.attempted({ tenantId: account.tenantId, accountId: account.id, outcome: decision.kind, relayMs, replyCode: decision.replyCode, text, at: outcome.at });
      outcomes.add(outcome);
    })()
      .catch((error: unknown) => log.error({ err: error, messageId: message.id }, 'send attempt crashed'))
      .finally(() => {
        lane.sending -= 1;
        onWire.delete(message.pk);
        running.delete(job);
        pump(lane);
        if (lane.ready.length < laneWindow(lane) / 2) wake();
      });
    running.add(job);
  };

  /** Claimed messages that will not be sent now go back to the queue, their attempt not spent. */
  const release = (messages: readonly ClaimedMessage[], at: number, reason: string): void => {
    for (const message of messages) {
      outcomes.add({ pk: message.pk, attempt: message.attempts, at, kind: 'released', reason, replyCode: null, enhancedStatus: null });
    }
  };

  /** Hands ready messages to the relay, highest priority first, up to the pool's depth. */
  const pump = (lane: Lane): void => {
    if (stopped) return;
    for (let next = nextToSend(lane); next !== undefined; next = nextToSend(lane)) launch(next, lane);
  };

  const laneOf = (account: Account): Lane => {
    const key = laneKey(account.tenantId, account.id);
    const lane = lanes.get(key) ?? { account, ready: [], sending: 0 };
    lane.account = account; // settings may have changed
    lanes.set(key, lane);
    return lane;
  };

  /** An account over its limit with `limit_behavior = reject`: these end in error. */
  const reject = (messages: readonly ClaimedMessage[], now: number): void => {
    for (const message of messages) {
      outcomes.add({ pk: message.pk, attempt: message.attempts, at: now, kind: 'failed', reason: RATE_LIMIT_EXCEEDED, replyCode: null, enhancedStatus: null, refused: [] });
    }
  };

  /** Claims what one account may send now and hands it on; answers its next wake instant. */
  const serveAccount = (account: Account, now: number): { claimed: number; wakeAt: number | null } => {
    if (account.pausedAt !== null) return { claimed: 0, wakeAt: null };
    const lane = laneOf(account);
    const window = laneWindow(lane);
    const held = lane.ready.length + lane.sending;
    // Refill in batches (a claim is a transaction), except that priority 0 never waits for one.
    const maxPriority = held === 0 || window - held >= window / 2 ? 3 : 0;
    const limits = { minute: account.limitPerMinute, hour: account.limitPerHour, day: account.limitPerDay };
    const limited = limits.minute !== null || limits.hour !== null || limits.day !== null;
    const usage = limited ? queue.usage(account.tenantId, account.id, now) : { minute: 0, hour: 0, day: 0 };
    const budget = availableBudget(limits, usage);
    const overLimit = budget === 0;
    if (overLimit && account.limitBehavior === 'defer') {
      const due = queue.nextDueAt(account.tenantId, account.id);
      return { claimed: 0, wakeAt: due === null ? null : Math.max(due, budgetReturnsAt(limits, usage, now) ?? now) };
    }
    // Priority 0 is claimed even into a full lane: it overtakes what waits there.
    const room = maxPriority === 0 ? deps.config.claimBatch : Math.max(0, window - held);
    const limit = Math.min(room, deps.config.claimBatch, overLimit ? window : budget);
    if (limit === 0) return { claimed: 0, wakeAt: null }; // a finishing send wakes us
    const claimStartedAt = performance.now();
    const claimed = queue.claim({ tenantId: account.tenantId, accountId: account.id, limit, maxPriority, now, leaseOwner: deps.owner, leaseUntil: now + deps.config.leaseMs });
    telemetry.claimed(performance.now() - claimStartedAt);
    if (overLimit) reject(claimed, now);
    else addReady(lane, claimed);
    pump(lane);
    // Claimed less than asked: the rest is not due yet. Claimed the limit: more may wait now.
    const full = claimed.length === limit && !overLimit;
    return { claimed: claimed.length, wakeAt: full || maxPriority < 3 ? null : queue.nextDueAt(account.tenantId, account.id) };
  };

  let reclaimedAt = 0;
  let accounts: { version: string; list: Account[] } = { version: '', list: [] };
  /** Accounts are re-read (and their secrets decrypted) only when one of them changed. */
  const currentAccounts = (): Account[] => {
    const version = deps.accounts.version();
    if (version !== accounts.version) accounts = { version, list: deps.accounts.list(null) };
    return accounts.list;
  };

  // Tenants (their attachment endpoint and its credentials) are read once per step, not per message.
  let tenants = new Map<string, Tenant | null>();
  const tenantOf = (id: string): Tenant | null => {
    if (!tenants.has(id)) tenants.set(id, deps.tenants.get(id));
    return tenants.get(id) ?? null;
  };

  const step = (): TickReport => {
    const now = clock.now();
    tenants = new Map();
    // Leases last at least ten seconds: looking for expired ones once a second is enough.
    if (now - reclaimedAt >= 1000) {
      reclaimedAt = now;
      outcomes.flush(); // our own finished sends are not expired leases
      // Nor are the messages still in our hands, however long a send takes.
      const reclaimed = queue.reclaimLeases(now, deps.owner, false, heldPks());
      if (reclaimed > 0) log.warn({ reclaimed }, 'expired leases reclaimed');
    }
    let claimed = 0;
    let nextWakeAt: number | null = null;
    for (const account of currentAccounts()) {
      const served = serveAccount(account, now);
      claimed += served.claimed;
      if (served.wakeAt !== null) nextWakeAt = nextWakeAt === null ? served.wakeAt : Math.min(nextWakeAt, served.wakeAt);
    }
    return { claimed, nextWakeAt: nextWakeAt === null ? null : Math.max(nextWakeAt, now + 1) };
  };

  const arm = (at: number | null): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (at === null || stopped) return;
    timer = setTimeout(wake, Math.max(0, at - clock.now()));
  };

  const run = async (): Promise<TickReport> => {
    try {
      let report = step();
      while (again && !stopped) {
        again = false;
        report = step();
      }
      if (report.claimed > 0 && !stopped) wake(); // more may be due right now
      else arm(report.nextWakeAt);
      return report;
    } catch (error) {
      log.error({ err: error }, 'dispatcher step failed');
      arm(clock.now() + 1000);
      return { claimed: 0, nextWakeAt: null };
    }
  };

  /** One dispatcher step; never two at once (a call during a step asks for one more). */
  const tick = (): Promise<TickReport> => {
    if (ticking !== null) {
      again = true;
      return ticking;
    }
    // `finally` runs after the assignment, even when `run` completes synchronously.
    ticking = run().finally(() => {
      ticking = null;
    });
    return ticking;
  };

  let wakeScheduled = false;
  /** Asynchronous on purpose: a caller inside a store transaction must commit before we claim. */
  function wake(): void {
    if (stopped || wakeScheduled) return;
    wakeScheduled = true;
    setImmediate(() => {
      wakeScheduled = false;
      void tick();
    });
  }

  return {
    tick,
    wake,
    /** Resolves when every send in flight has finished and its outcome is recorded. */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.all([...running]);
      outcomes.flush();
    },
    inflight: (): number => running.size,
    /** True between start() and stop(): readiness reports it. */
    isRunning: (): boolean => !stopped,
    /** Claimed messages waiting in memory for a free connection. */
    ready: (): number => [...lanes.values()].reduce((sum, lane) => sum + lane.ready.length, 0),
    start(): void {
      stopped = false;
      handedBack = false;
      const reclaimed = queue.reclaimLeases(clock.now(), deps.owner, true);
      if (reclaimed > 0) log.warn({ reclaimed }, 'messages interrupted by the last stop will be sent again');
      wake();
    },
    /**
     * Stops claiming; waits for sends in flight until the deadline, then hands
     * the unfinished ones back to the queue, so that nothing is left `sending`
     * (the store closes next, and a late answer has nowhere to go).
     */
    async stop(deadlineMs: number): Promise<void> {
      stopped = true;
      arm(null);
      // Claimed but never handed to the relay: back to the queue, attempt not spent.
      for (const lane of lanes.values()) release(lane.ready.splice(0), clock.now(), 'shutting down');
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise<void>((resolve) => (timeout = setTimeout(resolve, deadlineMs)))]);
      clearTimeout(timeout);
      await ticking; // a step that began before the stop may still be claiming
      outcomes.flush();
      const unrecorded = outcomes.abandon();
      if (unrecorded > 0) log.warn({ unrecorded }, 'outcomes the store refused until the stop are not recorded; those messages go back to the queue');
      handedBack = true;
      const unfinished = running.size;
      const returned = deps.queue.handBack(deps.owner, clock.now());
      if (returned > 0) log.warn({ handedBack: returned, unfinished }, 'sends still in flight at the shutdown deadline go back to the queue');
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
