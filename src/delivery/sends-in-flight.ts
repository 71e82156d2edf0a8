/**
 * The dispatcher's sends in flight in this process: each handed to the relay,
 * its outcome reported (log, telemetry, an account paused) and batched for the
 * store. At stop, what is still on the wire goes back to the queue.
 */
import type { Account } from '../core/account/index.js';
import type { Clock, Logger, DeliveryTelemetry } from '../core/index.js';
import { partsOf, type BodyObjects, type ClaimedMessage, type MessageQueue } from '../core/message/index.js';
import type { Handoff, RetryPolicy } from '../core/delivery/index.js';
import type { Tenant, UnsubscribeLinks } from '../core/tenant/index.js';
import { countSend, type Lane } from './account-lane.js';
import type { OutcomeBatcher } from './outcome-batcher.js';
import type { RelayFailover } from './relay-failover.js';
import type { RelayPaces } from './relay-paces.js';
import { attemptSend, type SendAttemptDeps } from './send-attempt.js';

export interface SendDeps {
  queue: MessageQueue;
  handoff: Handoff;
  clock: Clock;
  log: Logger;
  random: () => number;
  retry: RetryPolicy;
  returnPath: (tenantId: string, messagePk: number) => string | null;
  /** Seals one-click unsubscribe links; null: none is added. */
  unsubscribeLinks: UnsubscribeLinks | null;
  telemetry: DeliveryTelemetry;
  /** The message's tenant as this step read it, null when deleted meanwhile. */
  tenantOf: (tenantId: string) => Tenant | null;
  /** Adaptive backoff: told of every outcome; absent, accounts are sent at their configured pace only. */
  paces?: RelayPaces;
  /** Failover: told of every outcome (an unanswered relay is failed over from); absent, never. */
  failover?: RelayFailover;
  /** The body store, which holds large bodies (read just before sending); absent: none is there. */
  bodyObjects?: Pick<BodyObjects, 'get'>;
}

/** What a send's end does to its lane: `release` gives messages back to the queue, `done` follows every send. */
export interface LaneHooks {
  release: (messages: readonly ClaimedMessage[], at: number, reason: string) => void;
  done: (lane: Lane) => void;
}

type Attempt = Awaited<ReturnType<typeof attemptSend>>;

/**
 * What a finished send tells the log and telemetry. An account problem pauses
 * the account, and its lane's ready messages go back to the queue (`releaseLane`).
 */
function reportAttempt(
  deps: SendDeps,
  message: ClaimedMessage,
  account: Account,
  attempt: Attempt,
  releaseLane: (at: number, reason: string) => void,
): void {
  const { log } = deps;
  const { outcome, decision, relayMs } = attempt;
  if (decision.kind === 'account_problem') {
    deps.queue.pauseAccount(account.tenantId, account.id, outcome.at, decision.reason);
    log.warn(
      { tenantId: account.tenantId, accountId: account.id, stage: decision.stage, reason: decision.reason },
      'account paused',
    );
    releaseLane(outcome.at, 'account paused');
  }
  log.debug(
    {
      tenantId: message.tenantId,
      messageId: message.id,
      attempt: message.attempts,
      outcome: outcome.kind,
      replyCode: outcome.replyCode,
    },
    'send attempt finished',
  );
  const text = decision.kind === 'sent' ? decision.text : decision.reason;
  deps.telemetry.attempted({
    tenantId: account.tenantId,
    accountId: account.id,
    outcome: decision.kind,
    relayMs,
    replyCode: decision.replyCode,
    text,
    at: outcome.at,
  });
}

/** What each send's attempt reads and decides with. */
function attemptDeps(deps: SendDeps): SendAttemptDeps {
  const { queue, bodyObjects } = deps;
  return {
    handoff: deps.handoff,
    readSpool: (spoolId) => queue.spooledContent(spoolId),
    readObject: async (name) => {
      // No reader: the send is retried (a store misconfigured), never the body taken for lost.
      if (bodyObjects === undefined) throw new Error('no body store to read the body from');
      const object = await bodyObjects.get(name);
      return object === null ? null : partsOf(object);
    },
    retry: deps.retry,
    returnPath: deps.returnPath,
    unsubscribeLinks: deps.unsubscribeLinks,
    now: deps.clock.now,
    random: deps.random,
  };
}

export function createSendsInFlight(deps: SendDeps, outcomes: OutcomeBatcher, hooks: LaneHooks) {
  const { queue, clock, log, telemetry } = deps;
  const running = new Set<Promise<void>>();
  /** Messages handed to the relay whose outcome is not recorded yet. */
  const onWire = new Set<number>();
  /** After the hand-back at stop: the leases went back to the queue, so outcomes still arriving are not recorded. */
  let handedBack = false;
  const sendWith = attemptDeps(deps);

  /** One send: handed to the relay, then its outcome reported and batched for the store. */
  const send = async (message: ClaimedMessage, lane: Lane, account: Account, tenant: Tenant | null): Promise<void> => {
    if (tenant === null) return; // deleted meanwhile: its messages went with it
    const sentAt = clock.now();
    telemetry.handedOff(message.priority, Math.max(0, sentAt - message.dueAt));
    const attempt = await attemptSend(sendWith, message, account, tenant);
    if (handedBack) return; // answered after the stop's deadline: the message is queued again, the store may be closed
    deps.paces?.observe(account, attempt.decision, sentAt, attempt.outcome.at);
    deps.failover?.observe(account, attempt.decision, attempt.outcome.at);
    reportAttempt(deps, message, account, attempt, (at, reason) => hooks.release(lane.ready.splice(0), at, reason));
    outcomes.add(attempt.outcome);
  };

  return {
    launch(message: ClaimedMessage, lane: Lane): void {
      const account = lane.account;
      countSend(lane, message, 1);
      onWire.add(message.pk);
      const job = send(message, lane, account, deps.tenantOf(message.tenantId))
        .catch((error: unknown) => log.error({ err: error, messageId: message.id }, 'send attempt crashed'))
        .finally(() => {
          countSend(lane, message, -1);
          onWire.delete(message.pk);
          running.delete(job);
          hooks.done(lane);
        });
      running.add(job);
    },
    onWire: (): ReadonlySet<number> => onWire,
    inflight: (): number => running.size,
    /** Resolves when every send in flight has finished and its outcome is recorded. */
    async idle(): Promise<void> {
      while (running.size > 0) await Promise.all([...running]);
      outcomes.flush();
    },
    /** At start: outcomes are recorded again. */
    open(): void {
      handedBack = false;
    },
    /**
     * After the stop's wait: what the store refused is forgotten, and the sends
     * still unfinished go back to the queue, so that nothing is left `sending`
     * (the store closes next, and a late answer has nowhere to go).
     */
    handBack(owner: string): void {
      outcomes.flush();
      const unrecorded = outcomes.abandon();
      if (unrecorded > 0)
        log.warn(
          { unrecorded },
          'outcomes the store refused until the stop are not recorded; those messages go back to the queue',
        );
      handedBack = true;
      const unfinished = running.size;
      const returned = queue.handBack(owner, clock.now());
      if (returned > 0)
        log.warn(
          { handedBack: returned, unfinished },
          'sends still in flight at the shutdown deadline go back to the queue',
        );
    },
  };
}

export type SendsInFlight = ReturnType<typeof createSendsInFlight>;
