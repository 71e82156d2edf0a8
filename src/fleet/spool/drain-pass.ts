/**
 * One pass of a drain: every message waiting here offered to a live peer, spread over them in
 * turn, a few in flight at once. A message is removed here only after the peer answered that it
 * committed it, so a crash in between leaves it here (and a drain run again finds it there by
 * client id, and only removes it here).
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { errorText, type Clock } from '../../core/index.js';
import {
  drainTargets,
  peersInTurn,
  type AdoptAnswer,
  type MessageTransferStore,
  type StoredTransfer,
} from '../../core/fleet/index.js';
import type { FleetLink } from '../link/fleet-service.js';
import { adoptAnswerCodec, messageTransferCodec } from './spool-wire-schemas.js';

/** Adopt requests: outside `mailproxy.>`, which the event stream captures. */
export const adoptSubject = (nodeId: string): string => `mailproxy_fleet_drain.${nodeId}.adopt`;

const PASS_SIZE = 200;
/** Messages in flight to peers at once: enough to hide the round trip, few enough not to flood a peer's single writer. */
const IN_FLIGHT = 16;
const ADOPT_TIMEOUT_MS = 10_000;

/** What the passes of a drain did, across passes. */
export class DrainTally {
  /** Messages moved, by peer. */
  readonly moved: Record<string, number> = {};
  /** Why the last offer or pass fell short; null once drained. */
  lastError: string | null = null;
  /** Counts the messages offered, so that the round robin goes on across passes. */
  turn = 0;
}

export interface DrainPassDeps {
  link: FleetLink;
  store: MessageTransferStore;
  clock: Clock;
}

/** A pass over what waits, leaving out what every peer refused before; answers how many messages it moved. */
export function createDrainPass({ link, store, clock }: DrainPassDeps, tally: DrainTally) {
  /** Offers the message to each peer in turn until one takes it; answers whether one did. */
  const offer = async (nc: NatsConnection, message: StoredTransfer, peers: readonly string[]): Promise<boolean> => {
    const transfer = messageTransferCodec.encode({ ...message, origin_node: link.nodeId });
    for (const peer of peers) {
      let answer: AdoptAnswer;
      try {
        answer = adoptAnswerCodec.decode(
          (await nc.request(adoptSubject(peer), transfer, { timeout: ADOPT_TIMEOUT_MS })).data,
        );
      } catch (error) {
        tally.lastError = `${peer}: ${errorText(error)}`;
        continue;
      }
      if (!answer.ok) {
        tally.lastError = `${peer}: ${answer.code} ${answer.message}`;
        continue;
      }
      if (store.moved(message.origin_pk, peer, answer.pk, clock.now()))
        tally.moved[peer] = (tally.moved[peer] ?? 0) + 1;
      return true;
    }
    return false;
  };

  return async (nc: NatsConnection, refused: Set<number>): Promise<number> => {
    const batch = store.waiting(PASS_SIZE + refused.size).filter((message) => !refused.has(message.origin_pk));
    const targets = drainTargets(link.nodeId, link.aliveNodes());
    if (batch.length > 0 && targets.length === 0) tally.lastError = 'no live peer to take the mail';
    let count = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batch.length) {
        const index = next++;
        const message = batch[index] as StoredTransfer;
        if (await offer(nc, message, peersInTurn(targets, tally.turn++))) count += 1;
        else refused.add(message.origin_pk);
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, batch.length) }, worker));
    return count;
  };
}
