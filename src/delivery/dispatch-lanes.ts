/**
 * The dispatcher's lanes in this process: each account's claimed messages in
 * priority order, the sends in flight, and their outcomes on the way to the
 * store. A finished send hands the next ready message to the relay and, when
 * its lane runs low, wakes the dispatcher for a refill. Scheduling is not here.
 */
import type { Account } from '../core/account.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { ClaimedMessage, MessageQueue } from '../core/queue.js';
import { RATE_LIMIT_EXCEEDED } from '../core/rate-limit.js';
import type { Handoff } from '../core/relay.js';
import type { RetryPolicy } from '../core/retry-policy.js';
import type { DeliveryTelemetry } from '../core/telemetry.js';
import type { Tenant } from '../core/tenant.js';
import { addReady, laneKey, laneWindow, nextToSend, type Lane } from './account-lane.js';
import { createOutcomeBatcher } from './outcome-batcher.js';
import { attemptSend } from './send-attempt.js';

export interface DispatchLanesDeps {
  queue: MessageQueue;
  handoff: Handoff;
  clock: Clock;
  log: Logger;
  random: () => number;
  retry: RetryPolicy;
  returnPath: (tenantId: string, messagePk: number) => string | null;
  telemetry: DeliveryTelemetry;
  /** The message's tenant as this step read it, null when deleted meanwhile. */
  tenantOf: (tenantId: string) => Tenant | null;
  /** False before start and after stop: nothing more is handed to the relay. */
  isRunning: () => boolean;
  /** A slot freed in a lane that runs low: a refill is wanted. */
  wake: () => void;
}

export type DispatchLanes = ReturnType<typeof createDispatchLanes>;

export function createDispatchLanes(deps: DispatchLanesDeps) {
  const { queue, clock, log, telemetry } = deps;
  const lanes = new Map<string, Lane>();
  const running = new Set<Promise<void>>();
  /** Messages handed to the relay whose outcome is not recorded yet. */
  const onWire = new Set<number>();
  // A deferral is committed after its send finished and woke the dispatcher: that step saw the
  // message still `sending`, so its retry instant was in no timer. Once the group is in the
  // queue, one more step arms the timer at the next due instant (an idle daemon has no other wake).
  const outcomes = createOutcomeBatcher({
    queue,
    log,
    onRecorded: (group) => {
      if (group.some((outcome) => outcome.kind === 'deferred' || outcome.kind === 'released')) deps.wake();
    },
  });
  /** After the hand-back at stop: the leases went back to the queue, so outcomes still arriving are not recorded. */
  let handedBack = false;

  const launch = (message: ClaimedMessage, lane: Lane): void => {
    const account = lane.account;
    lane.sending += 1;
    onWire.add(message.pk);
    const tenant = deps.tenantOf(message.tenantId);
    const job = (async () => {
      if (tenant === null) return; // deleted meanwhile: its messages went with it
      telemetry.handedOff(message.priority, Math.max(0, clock.now() - message.dueAt));
      const { outcome, decision, relayMs } = await attemptSend(
        {
          handoff: deps.handoff,
          readSpool: (spoolId) => queue.spooledContent(spoolId),
          retry: deps.retry,
          returnPath: deps.returnPath,
          now: clock.now,
          random: deps.random,
        },
        message,
        account,
        tenant,
      );
      if (handedBack) return; // answered after the stop's deadline: the message is queued again, the store may be closed
      if (decision.kind === 'account_problem') {
        queue.pauseAccount(account.tenantId, account.id, outcome.at, decision.reason);
        log.warn({ tenantId: account.tenantId, accountId: account.id, stage: decision.stage, reason: decision.reason }, 'account paused');
        release(lane.ready.splice(0), outcome.at, 'account paused');
      }
      log.debug(
        { tenantId: message.tenantId, messageId: message.id, attempt: message.attempts, outcome: outcome.kind, replyCode: outcome.replyCode },
        'send attempt finished',
      );
      const text = decision.kind === 'sent' ? decision.text : decision.reason;
      telemetry.attempted({
        tenantId: account.tenantId,
        accountId: account.id,
        outcome: decision.kind,
        relayMs,
        replyCode: decision.replyCode,
        text,
        at: outcome.at,
      });
      outcomes.add(outcome);
    })()
      .catch((error: unknown) => log.error({ err: error, messageId: message.id }, 'send attempt crashed'))
      .finally(() => {
        lane.sending -= 1;
        onWire.delete(message.pk);
        running.delete(job);
        pump(lane);
        if (lane.ready.length < laneWindow(lane) / 2) deps.wake();
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
    if (!deps.isRunning()) return;
    for (let next = nextToSend(lane); next !== undefined; next = nextToSend(lane)) launch(next, lane);
  };

  /** Resolves when every send in flight has finished and its outcome is recorded. */
  const idle = async (): Promise<void> => {
    while (running.size > 0) await Promise.all([...running]);
    outcomes.flush();
  };

  return {
    /** The account's lane, made on first use; its settings follow the account's. */
    laneOf(account: Account): Lane {
      const key = laneKey(account.tenantId, account.id);
      const lane = lanes.get(key) ?? { account, ready: [], sending: 0 };
      lane.account = account;
      lanes.set(key, lane);
      return lane;
    },
    /** Claimed messages join their lane in priority order, and the relay takes what it has room for. */
    offer(lane: Lane, claimed: readonly ClaimedMessage[]): void {
      addReady(lane, claimed);
      pump(lane);
    },
    /** An account over its limit with `limit_behavior = reject`: these end in error. */
    reject(messages: readonly ClaimedMessage[], now: number): void {
      for (const message of messages) {
        outcomes.add({
          pk: message.pk,
          attempt: message.attempts,
          at: now,
          kind: 'failed',
          reason: RATE_LIMIT_EXCEEDED,
          replyCode: null,
          enhancedStatus: null,
          refused: [],
        });
      }
    },
    /** Messages this process holds (ready or on the wire): their leases are not expired, however old. */
    heldPks: (): number[] => [...onWire, ...[...lanes.values()].flatMap((lane) => lane.ready.map((message) => message.pk))],
    flush: (): void => outcomes.flush(),
    idle,
    inflight: (): number => running.size,
    ready: (): number => [...lanes.values()].reduce((sum, lane) => sum + lane.ready.length, 0),
    /** At start: outcomes are recorded again. */
    open(): void {
      handedBack = false;
    },
    /** At stop: claimed but never handed to the relay, back to the queue, attempt not spent. */
    releaseReady(reason: string): void {
      for (const lane of lanes.values()) release(lane.ready.splice(0), clock.now(), reason);
    },
    /**
     * After the stop's wait: what the store refused is forgotten, and the sends
     * still unfinished go back to the queue, so that nothing is left `sending`
     * (the store closes next, and a late answer has nowhere to go).
     */
    handBack(owner: string): void {
      outcomes.flush();
      const unrecorded = outcomes.abandon();
      if (unrecorded > 0) log.warn({ unrecorded }, 'outcomes the store refused until the stop are not recorded; those messages go back to the queue');
      handedBack = true;
      const unfinished = running.size;
      const returned = queue.handBack(owner, clock.now());
      if (returned > 0) log.warn({ handedBack: returned, unfinished }, 'sends still in flight at the shutdown deadline go back to the queue');
    },
  };
}
