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
import type { ClaimedMessage, MessageQueue, RecordedOutcome } from '../core/queue.js';
import { availableBudget, budgetReturnsAt } from '../core/rate-limit.js';
import type { MessageBuilder, Relay } from '../core/relay.js';
import type { RetryPolicy } from '../core/retry-policy.js';
import { attemptSend } from './send-attempt.js';

export interface DispatcherDeps {
  queue: MessageQueue;
  accounts: Pick<AccountRepository, 'list' | 'version'>;
  tenants: Pick<TenantRepository, 'get'>;
  relay: Relay;
  builder: MessageBuilder;
  clock: Clock;
  log: Logger;
  random: () => number;
  /** This process's lease owner id: leases of any other owner are stale at start. */
  owner: string;
  config: { leaseMs: number; claimBatch: number; retry: RetryPolicy };
}

export interface TickReport {
  claimed: number;
  /** When the next timer fires (epoch ms), or null when nothing waits. */
  nextWakeAt: number | null;
}

const keyOf = (tenantId: string, accountId: string): string => `${tenantId}/${accountId}`;
/** Sends handed to nodemailer per connection: one on the wire, one ready behind it. */
const ON_WIRE_PER_CONNECTION = 2;
/**
 * Messages claimed ahead per connection and held in memory, in priority order.
 * Claiming in batches keeps transactions few and large; holding them here (not
 * in nodemailer's FIFO) lets a priority 0 message overtake them.
 */
const READY_PER_CONNECTION = 20;
/** Outcomes recorded together, at most this many or after this long. */
const FLUSH_GROUP = 200;
const FLUSH_DELAY_MS = 10;

/** One account's work in this process: claimed and waiting, and handed to the relay. */
interface Lane {
  account: Account;
  ready: ClaimedMessage[];
  sending: number;
}

export function createDispatcher(deps: DispatcherDeps) {
  const { queue, clock, log } = deps;
  const lanes = new Map<string, Lane>();
  const running = new Set<Promise<void>>();
  let outcomes: RecordedOutcome[] = [];
  let flushScheduled = false;
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<TickReport> | null = null;
  let again = false;
  let stopped = true;

  let flushTimer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    flushScheduled = false;
    if (flushTimer !== null) clearTimeout(flushTimer);
    flushTimer = null;
    const batch = outcomes;
    outcomes = [];
    try {
      queue.record(batch);
    } catch (error) {
      // The leases stay; they expire and the messages are sent again. Nothing is lost.
      log.error({ err: error, outcomes: batch.length }, 'recording delivery outcomes failed');
    }
  };

  /**
   * Outcomes are committed in groups: every commit rewrites the touched pages,
   * so one per finished send would cost more than the send (measured). A group
   * waits at most FLUSH_DELAY_MS; a crash inside it re-sends those messages.
   */
  const recordLater = (outcome: RecordedOutcome): void => {
    outcomes.push(outcome);
    if (outcomes.length >= FLUSH_GROUP) flush();
    else if (!flushScheduled) {
      flushScheduled = true;
      flushTimer = setTimeout(flush, FLUSH_DELAY_MS);
    }
  };

  const launch = (message: ClaimedMessage, lane: Lane): void => {
    const account = lane.account;
    lane.sending += 1;
    const tenant = deps.tenants.get(message.tenantId);
    const job = (async () => {
      if (tenant === null) return; // deleted meanwhile: its messages went with it
      const { outcome, decision } = await attemptSend({ relay: deps.relay, builder: deps.builder, retry: deps.config.retry, now: clock.now, random: deps.random }, message, account, tenant);
      if (decision.kind === 'account_problem') {
        queue.pauseAccount(account.tenantId, account.id, outcome.at, decision.reason);
        log.warn({ tenantId: account.tenantId, accountId: account.id, stage: decision.stage, reason: decision.reason }, 'account paused');
      }
      log.debug({ tenantId: message.tenantId, messageId: message.id, attempt: message.attempts, outcome: outcome.kind, replyCode: outcome.replyCode }, 'send attempt finished');
      recordLater(outcome);
    })()
      .catch((error: unknown) => log.error({ err: error, messageId: message.id }, 'send attempt crashed'))
      .finally(() => {
        lane.sending -= 1;
        running.delete(job);
        pump(lane);
        if (lane.ready.length < (account.maxConnections * READY_PER_CONNECTION) / 2) wake();
      });
    running.add(job);
  };

  /** Hands ready messages to the relay, highest priority first, up to the pool's depth. */
  const pump = (lane: Lane): void => {
    if (stopped) return;
    while (lane.sending < lane.account.maxConnections * ON_WIRE_PER_CONNECTION && lane.ready.length > 0) {
      const next = lane.ready.shift();
      if (next !== undefined) launch(next, lane);
    }
  };

  const laneOf = (account: Account): Lane => {
    const key = keyOf(account.tenantId, account.id);
    const lane = lanes.get(key) ?? { account, ready: [], sending: 0 };
    lane.account = account; // settings may have changed
    lanes.set(key, lane);
    return lane;
  };

  /** Stable insert by priority: claimed messages join the end of their level. */
  const enqueueReady = (lane: Lane, claimed: readonly ClaimedMessage[]): void => {
    for (const message of claimed) {
      const at = lane.ready.findIndex((waiting) => waiting.priority > message.priority);
      if (at < 0) lane.ready.push(message);
      else lane.ready.splice(at, 0, message);
    }
  };

  const reject = (messages: ClaimedMessage[], now: number): void => {
    for (const message of messages) {
      recordLater({ pk: message.pk, attempt: message.attempts, at: now, kind: 'failed', reason: 'rate_limit_exceeded', replyCode: null, enhancedStatus: null, refused: [] });
    }
  };

  /** Claims what one account may send now and hands it on; answers its next wake instant. */
  const serveAccount = (account: Account, now: number): { claimed: number; wakeAt: number | null } => {
    if (account.pausedAt !== null) return { claimed: 0, wakeAt: null };
    const lane = laneOf(account);
    const window = account.maxConnections * READY_PER_CONNECTION;
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
    const limit = Math.min(Math.max(0, window - held), deps.config.claimBatch, overLimit ? window : budget);
    if (limit === 0) return { claimed: 0, wakeAt: null }; // a finishing send wakes us
    const claimed = queue.claim({ tenantId: account.tenantId, accountId: account.id, limit, maxPriority, now, leaseOwner: deps.owner, leaseUntil: now + deps.config.leaseMs });
    if (overLimit) reject(claimed, now);
    else enqueueReady(lane, claimed);
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

  const step = (): TickReport => {
    const now = clock.now();
    // Leases last at least ten seconds: looking for expired ones once a second is enough.
    if (now - reclaimedAt >= 1000) {
      reclaimedAt = now;
      if (outcomes.length > 0) flush(); // our own finished sends are not expired leases
      const reclaimed = queue.reclaimLeases(now, deps.owner, false);
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
      if (outcomes.length > 0) flush();
    },
    inflight: (): number => running.size,
    /** Claimed messages waiting in memory for a free connection. */
    ready: (): number => [...lanes.values()].reduce((sum, lane) => sum + lane.ready.length, 0),
    start(): void {
      stopped = false;
      const reclaimed = queue.reclaimLeases(clock.now(), deps.owner, true);
      if (reclaimed > 0) log.warn({ reclaimed }, 'messages interrupted by the last stop will be sent again');
      wake();
    },
    /** Stops claiming; waits for sends in flight until the deadline. Unfinished leases are reclaimed at the next start. */
    async stop(deadlineMs: number): Promise<void> {
      stopped = true;
      arm(null);
      // Claimed but never handed to the relay: back to the queue, attempt not spent.
      const at = clock.now();
      for (const lane of lanes.values()) {
        for (const message of lane.ready.splice(0)) {
          recordLater({ pk: message.pk, attempt: message.attempts, at, kind: 'released', reason: 'shutting down', replyCode: null, enhancedStatus: null });
        }
      }
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise<void>((resolve) => (timeout = setTimeout(resolve, deadlineMs)))]);
      clearTimeout(timeout);
      if (outcomes.length > 0) flush();
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
