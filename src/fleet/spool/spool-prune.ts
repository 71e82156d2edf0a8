/**
 * Letting finished messages' entries go: their records purged together, below
 * the watermark (the oldest entry still needed); the ends of those above it
 * recorded, so that a survivor does not send again what this node finished. A
 * message that waits long holds the watermark back: once the entries behind
 * it are many, the oldest waiting ones are written again higher up, so the
 * stream stays the size of the queue.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from '../../core/index.js';
import type { SpoolLedger } from '../../core/fleet/index.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';
import type { SpoolWriter } from './spool-writer.js';

/** How soon finished messages' entries go (one request for all that finished meanwhile). */
const PRUNE_DELAY_MS = 100;

export interface SpoolPruneDeps {
  connection: () => NatsConnection | null;
  stream: Pick<SpoolStream, 'removeBelow' | 'release' | 'lastSeq'>;
  ledger: SpoolLedger;
  writer: Pick<SpoolWriter, 'recordEnds' | 'syncFromStore' | 'takeUnsure'>;
  owner: () => SpoolOwner;
  /** Whether a prune may be scheduled now (reconciled at the start, not stopped). */
  ready: () => boolean;
  /** Waiting messages of an earlier life not yet written again: their old entries sit below, so nothing is pruned before. */
  rewriting: ReadonlySet<number>;
  /** How many long waiters one prune writes again at most. */
  page: number;
  later: (run: () => void, ms: number) => () => void;
  log: Logger;
}

export function createSpoolPrune(deps: SpoolPruneDeps) {
  const { stream, ledger, writer, owner } = deps;

  const prune = async (): Promise<void> => {
    const nc = deps.connection();
    if (nc === null) return;
    if (writer.takeUnsure()) ledger.reached(await stream.lastSeq(nc));
    const below = ledger.watermark();
    const above = ledger.endsAbove(below);
    if (above.length > 0) await writer.recordEnds(above);
    if (ledger.purgeDue(below)) await stream.removeBelow(nc, owner(), below);
    for (const pk of ledger.purged(below)) {
      await stream.release(nc, owner(), pk);
      ledger.released(pk);
    }
    const longWaiters = ledger.longWaiters(deps.page);
    if (longWaiters.length > 0) await writer.syncFromStore(longWaiters);
  };

  let pruning: (() => void) | null = null;
  return {
    prune,
    /**
     * Soon after a message finishes: its entry is what a survivor would send again if this node
     * died now, so it goes within PRUNE_DELAY_MS, together with whatever else finished meanwhile.
     */
    schedule(): void {
      if (pruning !== null || !deps.ready()) return;
      pruning = deps.later(() => {
        void (deps.rewriting.size === 0 ? prune() : Promise.resolve())
          .catch((error: unknown) => deps.log.warn({ err: error }, 'could not remove finished spool entries; retrying'))
          .finally(() => (pruning = null));
      }, PRUNE_DELAY_MS);
    },
    /** The scheduled prune, if any, does not run. */
    cancel(): void {
      pruning?.();
    },
  };
}
