/**
 * Drain and leave: `drain()` refuses intake from then on, stops the
 * dispatcher (its sends in flight finish or go back to the queue), then hands
 * every waiting message to a live peer, spread over them in turn. A message is
 * removed here only after the peer answered that it committed it, so a crash
 * in between leaves it here (the peer keeps its copy; a drain run again finds
 * it there by client id and only removes it here). `adopt` is the peer's side.
 */
import { AppError, errorText, type Clock, type Logger } from '../../core/index.js';
import {
  phaseAfterPass,
  type DrainPhase,
  type DrainProgress,
  type MessageTransferStore,
} from '../../core/fleet/index.js';
import { createDrainAdoption } from './drain-adoption.js';
import { createDrainPass, DrainTally } from './drain-pass.js';
import type { FleetLink } from '../link/fleet-service.js';
import { requestRoute } from '../link/fleet-responder.js';
import { adoptAnswerCodec, messageTransferCodec } from './spool-wire-schemas.js';

export { adoptSubject } from './drain-pass.js';

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
  const { link, store, log } = deps;
  let phase: DrainPhase = 'active';
  let running: Promise<void> | null = null;
  const tally = new DrainTally();
  const pass = createDrainPass(deps, tally);
  const adopt = createDrainAdoption({ ...deps, nodeId: link.nodeId }, () => phase);

  const run = async (): Promise<void> => {
    await deps.announce('draining');
    await deps.intakeSettled();
    await deps.stopSending();
    const nc = link.connection();
    if (nc === null) tally.lastError = 'not joined to the fleet';
    // Passes until nothing is left, or until a pass moves nothing (no peer would take what is left).
    const refused = new Set<number>();
    if (nc !== null) while ((await pass(nc, refused)) > 0);
    const waiting = store.waitingCount();
    phase = phaseAfterPass(waiting);
    if (phase === 'drained') {
      tally.lastError = null;
      await deps.announce('drained');
    }
    log.info(
      { moved: tally.moved, waiting, lastError: tally.lastError },
      phase === 'drained' ? 'node drained: it may be stopped' : 'drain pass left mail waiting',
    );
  };

  return {
    phase: () => phase,
    progress: (): DrainProgress & { running: boolean } => ({
      phase,
      moved: { ...tally.moved },
      waiting: store.waitingCount(),
      last_error: tally.lastError,
      running: running !== null,
    }),
    /** Starts a drain (or another pass of one that left mail); resolves when the pass is over. */
    drain(): Promise<void> {
      if (phase === 'active') phase = 'draining';
      running ??= run()
        .catch((error: unknown) => {
          tally.lastError = errorText(error);
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
    /** A peer hands us one of its messages; a request that is not a transfer is answered with its WireError. */
    adopt: requestRoute(messageTransferCodec, adoptAnswerCodec, adopt),
  };
}
