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
  accounts: Pick<AccountRepository, 'list'>;
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
/** Sends in flight per pooled connection: one on the wire, one ready behind it. */
const IN_FLIGHT_PER_CONNECTION = 2;

export function createDispatcher(deps: DispatcherDeps) {
  const { queue, clock, log } = deps;
  const inflight = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let outcomes: RecordedOutcome[] = [];
  let flushScheduled = false;
  let timer: NodeJS.Timeout | null = null;
  let ticking: Promise<TickReport> | null = null;
  let again = false;
  let stopped = true;

  const flush = (): void => {
    flushScheduled = false;
    const batch = outcomes;
    outcomes = [];
    try {
      queue.record(batch);
    } catch (error) {
      // The leases stay; they expire and the messages are sent again. Nothing is lost.
      log.error({ err: error, outcomes: batch.length }, 'recording delivery outcomes failed');
    }
  };

  const recordLater = (outcome: RecordedOutcome): void => {
    outcomes.push(outcome);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };

  const launch = (message: ClaimedMessage, account: Account): void => {
    const key = keyOf(account.tenantId, account.id);
    inflight.set(key, (inflight.get(key) ?? 0) + 1);
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
        inflight.set(key, (inflight.get(key) ?? 1) - 1);
        running.delete(job);
        wake();
      });
    running.add(job);
  };

  const reject = (messages: ClaimedMessage[], now: number): void => {
    for (const message of messages) {
      recordLater({ pk: message.pk, attempt: message.attempts, at: now, kind: 'failed', reason: 'rate_limit_exceeded', replyCode: null, enhancedStatus: null, refused: [] });
    }
  };

  /** Claims and launches what one account may send now; answers its next wake instant. */
  const serveAccount = (account: Account, now: number): { claimed: number; wakeAt: number | null } => {
    if (account.pausedAt !== null) return { claimed: 0, wakeAt: null };
    const free = account.maxConnections * IN_FLIGHT_PER_CONNECTION - (inflight.get(keyOf(account.tenantId, account.id)) ?? 0);
    if (free <= 0) return { claimed: 0, wakeAt: null }; // a finishing send wakes us
    const limits = { minute: account.limitPerMinute, hour: account.limitPerHour, day: account.limitPerDay };
    const limited = limits.minute !== null || limits.hour !== null || limits.day !== null;
    const usage = limited ? queue.usage(account.tenantId, account.id, now) : { minute: 0, hour: 0, day: 0 };
    const budget = availableBudget(limits, usage);
    const overLimit = budget === 0;
    if (overLimit && account.limitBehavior === 'defer') {
      const due = queue.nextDueAt(account.tenantId, account.id);
      return { claimed: 0, wakeAt: due === null ? null : Math.max(due, budgetReturnsAt(limits, usage, now) ?? now) };
    }
    const limit = Math.min(free, deps.config.claimBatch, overLimit ? free : budget);
    const claimed = queue.claim({ tenantId: account.tenantId, accountId: account.id, limit, now, leaseOwner: deps.owner, leaseUntil: now + deps.config.leaseMs });
    if (overLimit) reject(claimed, now);
    else for (const message of claimed) launch(message, account);
    // Claimed less than asked: the rest is not due yet. Claimed the limit: more may wait now.
    return { claimed: claimed.length, wakeAt: claimed.length === limit && !overLimit ? null : queue.nextDueAt(account.tenantId, account.id) };
  };

  const step = (): TickReport => {
    const now = clock.now();
    const reclaimed = queue.reclaimLeases(now, deps.owner, false);
    if (reclaimed > 0) log.warn({ reclaimed }, 'expired leases reclaimed');
    let claimed = 0;
    let nextWakeAt: number | null = null;
    for (const account of deps.accounts.list(null)) {
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
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise<void>((resolve) => (timeout = setTimeout(resolve, deadlineMs)))]);
      clearTimeout(timeout);
      if (outcomes.length > 0) flush();
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
