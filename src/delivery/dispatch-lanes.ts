/**
 * The dispatcher's lanes in this process: each account's claimed messages in
 * priority order, the sends in flight, and their outcomes on the way to the
 * store. A finished send hands the next ready message to the relay and, when
 * its lane runs low, wakes the dispatcher for a refill. Scheduling is not here.
 */
import { type Account, RATE_LIMIT_EXCEEDED } from '../core/account/index.js';
import type { ClaimedMessage, MessageQueue } from '../core/message/index.js';
import { addReady, laneKey, laneWindow, nextToSend, type Lane } from './account-lane.js';
import { createOutcomeBatcher, type OutcomeBatcher } from './outcome-batcher.js';
import { createSendsInFlight, type SendDeps, type SendsInFlight } from './sends-in-flight.js';

export interface DispatchLanesDeps extends SendDeps {
  /** False before start and after stop: nothing more is handed to the relay. */
  isRunning: () => boolean;
  /** A slot freed in a lane that runs low: a refill is wanted. */
  wake: () => void;
}

export type DispatchLanes = ReturnType<typeof createDispatchLanes>;

/** Claimed messages that will not be sent now go back to the queue, their attempt not spent. */
function release(outcomes: OutcomeBatcher, messages: readonly ClaimedMessage[], at: number, reason: string): void {
  for (const message of messages) {
    outcomes.add({
      pk: message.pk,
      attempt: message.attempts,
      at,
      kind: 'released',
      reason,
      replyCode: null,
      enhancedStatus: null,
    });
  }
}

/** An account over its limit with `limit_behavior = reject`: these end in error. */
function reject(outcomes: OutcomeBatcher, messages: readonly ClaimedMessage[], now: number): void {
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
}

/**
 * Claimed messages erased since they were claimed are not handed to the relay: each ends in
 * error. One on the wire already is the relay's; its outcome is recorded as it comes.
 */
function dropErased(
  queue: Pick<MessageQueue, 'erasedOf'>,
  lanes: Iterable<Lane>,
  outcomes: OutcomeBatcher,
  now: number,
): void {
  const all = [...lanes];
  const erased = queue.erasedOf(all.flatMap((lane) => lane.ready.map((message) => message.pk)));
  if (erased.size === 0) return;
  for (const lane of all) {
    const gone = lane.ready.filter((message) => erased.has(message.pk));
    lane.ready = lane.ready.filter((message) => !erased.has(message.pk));
    const reason = 'erased on request: not sent';
    for (const { pk, attempts } of gone)
      outcomes.add({
        pk,
        attempt: attempts,
        at: now,
        kind: 'failed',
        reason,
        replyCode: null,
        enhancedStatus: null,
        refused: [],
      });
  }
  outcomes.flush();
}

/** A lane whose ready messages wait for its pace (adaptive backoff): a step must arm the timer of the next launch. */
const heldByPace = (deps: DispatchLanesDeps, lane: Lane): boolean =>
  deps.paces !== undefined && lane.ready.length > 0 && !deps.paces.mayLaunch(lane.account, deps.clock.now());

/**
 * Hands ready messages to the relay, highest priority first, up to the pool's depth and, for an
 * account the relay pushed back, no faster than its pace (the dispatcher steps again when the next may go).
 */
function pumpLane(deps: DispatchLanesDeps, sends: Pick<SendsInFlight, 'launch'>, lane: Lane): void {
  if (!deps.isRunning()) return;
  const paces = deps.paces;
  if (paces === undefined) {
    for (let next = nextToSend(lane); next !== undefined; next = nextToSend(lane)) sends.launch(next, lane);
    return;
  }
  for (let now = deps.clock.now(); paces.mayLaunch(lane.account, now); now = deps.clock.now()) {
    const next = nextToSend(lane);
    if (next === undefined) return;
    paces.launched(lane.account, now);
    sends.launch(next, lane);
  }
}

export function createDispatchLanes(deps: DispatchLanesDeps) {
  const { queue, clock, log } = deps;
  const lanes = new Map<string, Lane>();
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
  const sends = createSendsInFlight(deps, outcomes, {
    release: (messages, at, reason) => release(outcomes, messages, at, reason),
    done: (lane) => {
      pump(lane);
      // Running low, or held back by its pace: a step claims more, or arms the timer for the next launch.
      if (lane.ready.length < laneWindow(lane) / 2 || heldByPace(deps, lane)) deps.wake();
    },
  });

  const pump = (lane: Lane): void => pumpLane(deps, sends, lane);

  return {
    /** The account's lane, made on first use; its settings follow the account's. */
    laneOf(account: Account): Lane {
      const key = laneKey(account.tenantId, account.id);
      const lane = lanes.get(key) ?? { account, ready: [], sending: 0 };
      lane.account = account;
      lanes.set(key, lane);
      return lane;
    },
    /** Launches what the lane holds and its pace allows now. */
    pump,
    /** Claimed messages join their lane in priority order, and the relay takes what it has room for. */
    offer(lane: Lane, claimed: readonly ClaimedMessage[]): void {
      addReady(lane, claimed);
      pump(lane);
    },
    /** An account over its limit with `limit_behavior = reject`: these end in error. */
    reject: (messages: readonly ClaimedMessage[], now: number): void => reject(outcomes, messages, now),
    /** Messages this process holds (ready or on the wire): their leases are not expired, however old. */
    heldPks: (): number[] => [
      ...sends.onWire(),
      ...[...lanes.values()].flatMap((lane) => lane.ready.map((message) => message.pk)),
    ],
    flush: (): void => outcomes.flush(),
    /** Resolves when every send in flight has finished and its outcome is recorded. */
    idle: sends.idle,
    inflight: sends.inflight,
    ready: (): number => [...lanes.values()].reduce((sum, lane) => sum + lane.ready.length, 0),
    /** At start: outcomes are recorded again. */
    open: sends.open,
    /** Claimed messages erased since (POST /commands/erase) end in error instead of reaching the relay. */
    dropErased: (now: number): void => dropErased(queue, lanes.values(), outcomes, now),
    /** At stop: claimed but never handed to the relay, back to the queue, attempt not spent. */
    releaseReady(reason: string): void {
      for (const lane of lanes.values()) release(outcomes, lane.ready.splice(0), clock.now(), reason);
    },
    /** After the stop's wait: the sends still unfinished go back to the queue (sends-in-flight.ts). */
    handBack: sends.handBack,
  };
}
