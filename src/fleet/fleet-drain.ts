/**
 * Drain and leave (issue 24): `drain()` refuses intake from then on, stops the
 * dispatcher (its sends in flight finish or go back to the queue), then hands
 * every waiting message to a live peer, spread over them in turn. A message is
 * removed here only after the peer answered that it committed it, so a crash
 * in between leaves it here (the peer keeps its copy; a drain run again finds
 * it there by client id and only removes it here). `adopt` is the peer's side.
 */
import type { NatsConnection } from 'nats';
import { AppError, errorText } from '../core/app-error.js';
import type { Clock } from '../core/clock.js';
import {
  adoptedDueAt,
  drainTargets,
  peersInTurn,
  phaseAfterPass,
  type AdoptAnswer,
  type DrainPhase,
  type DrainProgress,
  type MessageTransfer,
  type MessageTransferStore,
  type StoredTransfer,
} from '../core/fleet-drain.js';
import type { Logger } from '../core/logger.js';
import type { FleetLink } from './fleet-service.js';

/** Adopt requests: outside `mailproxy.>`, which the event stream captures. */
export const adoptSubject = (nodeId: string): string => `mailproxy_fleet_drain.${nodeId}.adopt`;

const PASS_SIZE = 200;
/** Messages in flight to peers at once: enough to hide the round trip, few enough not to flood a peer's single writer. */
const IN_FLIGHT = 16;
const ADOPT_TIMEOUT_MS = 10_000;

export interface FleetDrainDeps {
  link: FleetLink;
  store: MessageTransferStore;
  /** Says the phase in this node's heartbeat. */
  announce: (phase: DrainPhase) => Promise<void>;
  /** Resolves once the submissions that passed intake before the drain have committed (they are then drained too). */
  intakeSettled: () => Promise<void>;
  /** Stops the dispatcher; resolves once its sends in flight are done or handed back. */
  stopSending: () => Promise<void>;
  /** Work arrived (an adopted message): the dispatcher looks again. */
  wake: () => void;
  /** Names this node as the holder of an adopted message's client id. */
  holdId: (tenantId: string, id: string) => Promise<void>;
  clock: Clock;
  log: Logger;
}

export function createFleetDrain(deps: FleetDrainDeps) {
  const { link, store, clock, log } = deps;
  let phase: DrainPhase = 'active';
  let running: Promise<void> | null = null;
  const moved: Record<string, number> = {};
  let lastError: string | null = null;
  /** Counts the messages offered, so that the round robin goes on across passes. */
  let turn = 0;

  const offer = async (nc: NatsConnection, message: StoredTransfer, peers: readonly string[]): Promise<boolean> => {
    const transfer: MessageTransfer = { ...message, origin_node: link.nodeId };
    for (const peer of peers) {
      let answer: AdoptAnswer;
      try {
        answer = (await nc.request(adoptSubject(peer), JSON.stringify(transfer), { timeout: ADOPT_TIMEOUT_MS })).json<AdoptAnswer>();
      } catch (error) {
        lastError = `${peer}: ${errorText(error)}`;
        continue;
      }
      if (!answer.ok) {
        lastError = `${peer}: ${answer.code} ${answer.message}`;
        continue;
      }
      if (store.moved(message.origin_pk, peer, answer.pk, clock.now())) moved[peer] = (moved[peer] ?? 0) + 1;
      return true;
    }
    return false;
  };

  /** One pass over what waits; answers how many messages it moved. */
  const pass = async (nc: NatsConnection, refused: Set<number>): Promise<number> => {
    const batch = store.waiting(PASS_SIZE + refused.size).filter((message) => !refused.has(message.origin_pk));
    const targets = drainTargets(link.nodeId, link.aliveNodes());
    if (batch.length > 0 && targets.length === 0) lastError = 'no live peer to take the mail';
    let count = 0;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batch.length) {
        const index = next++;
        const message = batch[index] as StoredTransfer;
        if (await offer(nc, message, peersInTurn(targets, turn++))) count += 1;
        else refused.add(message.origin_pk);
      }
    };
    await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, batch.length) }, worker));
    return count;
  };

  const run = async (): Promise<void> => {
    await deps.announce('draining');
    await deps.intakeSettled();
    await deps.stopSending();
    const nc = link.connection();
    if (nc === null) lastError = 'not joined to the fleet';
    // Passes until nothing is left, or until a pass moves nothing (no peer would take what is left).
    const refused = new Set<number>();
    if (nc !== null) while ((await pass(nc, refused)) > 0);
    const waiting = store.waitingCount();
    phase = phaseAfterPass(waiting);
    if (phase === 'drained') {
      lastError = null;
      await deps.announce('drained');
    }
    log.info({ moved, waiting, lastError }, phase === 'drained' ? 'node drained: it may be stopped' : 'drain pass left mail waiting');
  };

  return {
    phase: () => phase,
    progress: (): DrainProgress & { running: boolean } => ({
      phase,
      moved: { ...moved },
      waiting: store.waitingCount(),
      last_error: lastError,
      running: running !== null,
    }),
    /** Starts a drain (or another pass of one that left mail); resolves when the pass is over. */
    drain(): Promise<void> {
      if (phase === 'active') phase = 'draining';
      running ??= run()
        .catch((error: unknown) => {
          lastError = errorText(error);
          log.error({ err: error }, 'drain failed');
        })
        .finally(() => (running = null));
      return running;
    },
    /** Intake's answer while draining (null while active). */
    refusal: (): AppError | null =>
      phase === 'active'
        ? null
        : new AppError('NODE_DRAINING', 'this node is draining: submit to another node of the fleet', {
            transient: true,
            details: { node_id: link.nodeId, phase },
          }),
    /** A peer hands us one of its messages. */
    async adopt(request: unknown): Promise<AdoptAnswer> {
      if (phase !== 'active') return { ok: false, code: 'NODE_DRAINING', message: `node ${link.nodeId} is draining too` };
      const transfer = request as MessageTransfer;
      const now = clock.now();
      const adopted = store.adopt(transfer, adoptedDueAt(transfer, now), now);
      if (!adopted.already) deps.wake();
      // Before the answer: a repeat of this id posted to the draining node is then told it is here.
      await deps
        .holdId(transfer.tenant_id, transfer.id)
        .catch((error: unknown) => log.warn({ err: error }, 'could not name this node as the holder of an adopted id'));
      return { ok: true, pk: adopted.pk, already: adopted.already };
    },
  };
}

export type FleetDrain = ReturnType<typeof createFleetDrain>;
