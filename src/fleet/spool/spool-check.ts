/**
 * A fleet node's replicated spool held against the cluster: at the start
 * (every waiting message written again, an earlier life's records let go),
 * and every few moments after, when every waiting message must have an entry
 * a survivor would replay. One without (a record the cluster lost, a defect of
 * the spool's bookkeeping) is written again, counted and logged, so that such
 * a defect shows, and is mended, before a node is lost rather than after.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { SpoolRows, SpoolLedger } from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';

const PAGE = 1000;

/** The last check: when, how many messages waited, how many of them had an entry a survivor would replay. */
export interface SpoolCheck {
  at: number;
  waiting: number;
  entries: number;
}

export interface SpoolCheckDeps {
  ledger: Pick<SpoolLedger, 'missing' | 'top'>;
  rows: Pick<SpoolRows, 'waitingPks'>;
  /** The subjects of this node's records as the stream lists them now. */
  listRecords: () => Promise<string[]>;
  /** Whether a write of the message is under way or owed (its entry is being written): not judged. */
  busy: (pk: number) => boolean;
  /** Writes these messages' entries again. */
  writeAgain: (pks: readonly number[]) => Promise<unknown>;
  clock: Clock;
  log: Logger;
}

/** Every waiting message's pk, page by page. */
export function allWaiting(rows: Pick<SpoolRows, 'waitingPks'>): number[] {
  const waiting: number[] = [];
  for (let after = 0; ;) {
    const page = rows.waitingPks(after, PAGE);
    waiting.push(...page);
    if (page.length < PAGE) return waiting;
    after = page.at(-1) as number;
  }
}

export function createSpoolCheck(deps: SpoolCheckDeps) {
  const { ledger, clock, log } = deps;
  let last: SpoolCheck | null = null;
  let repaired = 0;
  return {
    /** Checks every waiting message now; answers how many had to be written again. */
    async run(): Promise<number> {
      const at = clock.now();
      // Every record acknowledged up to here is in the listing, unless the cluster no longer holds it.
      const listedAfter = ledger.top();
      const present = new Set(await deps.listRecords());
      // Read and judged in one turn: no write lands, and no event is flushed, in between.
      const waiting = allWaiting(deps.rows);
      const missing = ledger.missing(waiting, deps.busy, present, listedAfter);
      last = { at, waiting: waiting.length, entries: waiting.length - missing.length };
      if (missing.length === 0) return 0;
      repaired += missing.length;
      log.warn(
        { missing: missing.length, waiting: waiting.length },
        'waiting messages without a replicated spool entry: written again',
      );
      await deps.writeAgain(missing);
      return missing.length;
    },
    last: () => last,
    /** Messages found without an entry and written again since the start. */
    repaired: () => repaired,
  };
}

/**
 * At the start: the stream's sequence learnt (an earlier life's records sit below it, and go with
 * the purge once every waiting message is written again), stale large entries removed (their node
 * stopped between a message's end and its entry's removal), every waiting message to be written again.
 */
export async function reconcileAtStart(
  nc: NatsConnection,
  deps: {
    ledger: Pick<SpoolLedger, 'reconciledAt'>;
    stream: Pick<SpoolStream, 'lastSeq' | 'pks' | 'removeStale'>;
    rows: Pick<SpoolRows, 'waitingPks'>;
    owner: SpoolOwner;
    writeAllAgain: (pks: Iterable<number>) => void;
    log: Logger;
  },
): Promise<void> {
  const { stream, owner } = deps;
  deps.ledger.reconciledAt(await stream.lastSeq(nc));
  const stored = new Set(await stream.pks(nc, owner));
  const waiting = new Set(allWaiting(deps.rows));
  const stale = [...stored].filter((pk) => !waiting.has(pk));
  for (const pk of stale) await stream.removeStale(nc, owner, pk);
  deps.writeAllAgain(waiting);
  deps.log.info({ entries: stored.size, waiting: waiting.size, removed: stale.length }, 'replicated spool reconciled');
}
