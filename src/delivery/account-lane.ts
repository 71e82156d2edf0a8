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

/** The next message to hand to the relay, when the pool has room for one. */
export function nextToSend(lane: Lane): ClaimedMessage | undefined {
  return lane.sending < lane.account.maxConnections * ON_WIRE_PER_CONNECTION ? lane.ready.shift() : undefined;
}
