/**
 * An account's lane in this process: messages claimed ahead and held in
 * priority order, and how many are handed to the relay. Claiming in batches
 * keeps transactions few and large; holding them here rather than in
 * nodemailer's FIFO lets a priority 0 message overtake them.
 */
import type { Account } from '../core/account/index.js';
import type { ClaimedMessage } from '../core/message/index.js';

/**
 * Sends in progress per connection: one on the wire, the others being composed
 * (in a compose thread) or waiting in nodemailer's queue. With composing a stage
 * of its own, 4 keep the connections busier than 2 (alternating runs in
 * bench/results/HISTORY.md). Each is one a priority 0 message
 * cannot overtake.
 */
export const ON_WIRE_PER_CONNECTION = 4;
/** Messages claimed ahead per connection. */
export const READY_PER_CONNECTION = 20;

export interface Lane {
  account: Account;
  ready: ClaimedMessage[];
  sending: number;
  /** Per-destination `max_connections` (this node's share in fleet mode): sends in flight to each, at most. */
  destinationCaps?: ReadonlyMap<string, number> | undefined;
  /** Sends in flight per destination (ClaimedMessage.destinations). */
  toDestination?: Map<string, number>;
}

export const laneKey = (tenantId: string, accountId: string): string => `${tenantId}/${accountId}`;

/** How many messages the lane may hold, claimed or sending. */
export const laneWindow = (lane: Lane): number => lane.account.maxConnections * READY_PER_CONNECTION;

/** Stable insert by priority: claimed messages join the end of their level. */
export function addReady(lane: Lane, claimed: readonly ClaimedMessage[]): void {
  for (const message of claimed) {
    const at = lane.ready.findIndex((waiting) => waiting.priority > message.priority);
    if (at < 0) lane.ready.push(message);
    else lane.ready.splice(at, 0, message);
  }
}

/** Whether a send of `message` stays within its destinations' caps on sends in flight. */
const withinCaps = (lane: Lane, caps: ReadonlyMap<string, number>, message: ClaimedMessage): boolean =>
  (message.destinations ?? []).every((name) => (lane.toDestination?.get(name) ?? 0) < (caps.get(name) ?? Infinity));

/**
 * The next message to hand to the relay, when the pool has room for one: the first in priority
 * order whose destinations have room too (one at its cap waits for a send to it to finish).
 */
export function nextToSend(lane: Lane): ClaimedMessage | undefined {
  if (lane.sending >= lane.account.maxConnections * ON_WIRE_PER_CONNECTION) return undefined;
  const caps = lane.destinationCaps;
  if (caps === undefined || caps.size === 0) return lane.ready.shift();
  const at = lane.ready.findIndex((message) => withinCaps(lane, caps, message));
  return at < 0 ? undefined : lane.ready.splice(at, 1)[0];
}

/** A send of `message` starts (`+1`) or ends (`-1`): the lane's and its destinations' counts of sends in flight. */
export function countSend(lane: Lane, message: ClaimedMessage, delta: 1 | -1): void {
  lane.sending += delta;
  if (message.destinations === undefined) return;
  lane.toDestination ??= new Map();
  for (const name of message.destinations) lane.toDestination.set(name, (lane.toDestination.get(name) ?? 0) + delta);
}
