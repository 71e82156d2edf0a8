/**
 * The replicated spool's retry round, every few moments: reconciled once at
 * the start (after a return from being away has given up what a survivor
 * adopted), everything written again when this node's spool was adopted while
 * it ran, entries the cluster did not take written again, erasures not done
 * yet tried again, finished entries pruned, and every waiting message checked
 * against the stream now and then.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import type { SpoolRows, SpoolLedger } from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import type { SpoolChains } from './spool-chains.js';
import { allWaiting, createSpoolCheck, reconcileAtStart } from './spool-check.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';
import type { SpoolWriter } from './spool-writer.js';

/** Where the spool is in its life: reconciled at the start, stopped, and which waiting messages of an earlier life are not written again yet. */
export interface SpoolPhase {
  reconciled: boolean;
  stopped: boolean;
  readonly rewriting: Set<number>;
}

export interface SpoolUpkeepDeps {
  phase: SpoolPhase;
  connection: () => NatsConnection | null;
  connected: () => boolean;
  /** The cluster's connection; throws when it is not reachable. */
  reachable: () => NatsConnection;
  owner: () => SpoolOwner;
  ledger: SpoolLedger;
  chains: SpoolChains;
  stream: Pick<SpoolStream, 'lastSeq' | 'pks' | 'removeStale' | 'subjects'>;
  rows: SpoolRows;
  writer: Pick<SpoolWriter, 'syncFromStore'>;
  /** Whether an event of the message waits to be acted on. */
  noted: (pk: number) => boolean;
  prune: () => Promise<void>;
  /** Erasures not done yet, tried again. */
  erase: () => Promise<void>;
  returned: () => Promise<void>;
  adoptedWhileRunning: () => number;
  /** How many messages one step reads at most. */
  page: number;
  checkMs: number;
  clock: Clock;
  log: Logger;
}

export function createSpoolUpkeep(deps: SpoolUpkeepDeps) {
  const { phase, chains, rows, log } = deps;
  const { pending } = chains;
  let adoptionsSeen = 0;
  let lastCheckAt = Number.NEGATIVE_INFINITY;
  const checker = createSpoolCheck({
    ledger: deps.ledger,
    rows,
    listRecords: () => deps.stream.subjects(deps.reachable(), deps.owner()),
    busy: (pk) => deps.noted(pk) || chains.busy(pk) || pending.has(pk),
    writeAgain: deps.writer.syncFromStore,
    clock: deps.clock,
    log,
  });
  /** Not before the start's writing again is done: until then the old entries are all there is. */
  const check = async (): Promise<number> => {
    if (!phase.reconciled || phase.rewriting.size > 0) return 0;
    lastCheckAt = deps.clock.now();
    return checker.run();
  };
  /** These waiting messages' entries written again by the round; nothing is purged before they all are (their old ones may be all there is). */
  const writeAllAgain = (waiting: Iterable<number>): void => {
    for (const pk of waiting) {
      pending.add(pk);
      phase.rewriting.add(pk);
    }
  };
  const reconcile = async (): Promise<void> => {
    const nc = deps.connection();
    if (nc === null) return;
    await reconcileAtStart(nc, {
      ledger: deps.ledger,
      stream: deps.stream,
      rows,
      owner: deps.owner(),
      writeAllAgain,
      log,
    });
    phase.reconciled = true;
  };

  const round = async (): Promise<void> => {
    if (phase.stopped || deps.connection() === null || !deps.connected()) return;
    if (!phase.reconciled) {
      await deps.returned();
      await reconcile();
    }
    // This node's spool was adopted while it ran, and the adopter removed its records: what it still holds is written again.
    const adoptions = deps.adoptedWhileRunning();
    if (adoptions !== adoptionsSeen) {
      adoptionsSeen = adoptions;
      writeAllAgain(allWaiting(rows));
      log.warn(
        { waiting: pending.size },
        'this node’s spool was adopted while it ran: its waiting messages written again',
      );
    }
    while (pending.size > 0 && !phase.stopped) {
      const before = pending.size;
      await deps.writer.syncFromStore([...pending].slice(0, deps.page));
      if (pending.size >= before) break;
    }
    // Not awaited: an erasure waits for its messages' writes under way; the round goes on meanwhile.
    void deps.erase();
    // Not before every waiting message of an earlier life is written again: their old entries sit below.
    if (phase.rewriting.size === 0) await deps.prune();
    if (deps.clock.now() - lastCheckAt >= deps.checkMs) await check();
  };

  return { round, check, lastCheck: checker.last, repaired: checker.repaired };
}
