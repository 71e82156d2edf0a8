/**
 * A peer's side of a drain: it adopts one message a draining node hands it, unless it drains
 * too, and names itself the holder of the message's client id before it answers, so that a
 * repeat of the id posted to the draining node is then told the message is here.
 */
import type { Clock, Logger } from '../../core/index.js';
import {
  adoptedDueAt,
  type AdoptAnswer,
  type DrainPhase,
  type MessageTransfer,
  type MessageTransferStore,
} from '../../core/fleet/index.js';

export interface DrainAdoptionDeps {
  nodeId: string;
  store: MessageTransferStore;
  /** Work arrived (an adopted message): the dispatcher looks again. */
  wake: () => void;
  /** Names this node as the holder of an adopted message's client id. */
  holdId: (tenantId: string, id: string) => Promise<void>;
  clock: Clock;
  log: Logger;
}

/** Answers a peer's adopt request; `phase` is this node's own drain phase. */
export function createDrainAdoption(deps: DrainAdoptionDeps, phase: () => DrainPhase) {
  const { store, clock, log } = deps;
  return async (transfer: MessageTransfer): Promise<AdoptAnswer> => {
    if (phase() !== 'active')
      return { ok: false, code: 'NODE_DRAINING', message: `node ${deps.nodeId} is draining too` };
    const now = clock.now();
    const adopted = store.adopt(transfer, adoptedDueAt(transfer, now), now);
    if (!adopted.already) deps.wake();
    // Before the answer: a repeat of this id posted to the draining node is then told it is here.
    await deps
      .holdId(transfer.tenant_id, transfer.id)
      .catch((error: unknown) => log.warn({ err: error }, 'could not name this node as the holder of an adopted id'));
    return { ok: true, pk: adopted.pk, already: adopted.already };
  };
}
