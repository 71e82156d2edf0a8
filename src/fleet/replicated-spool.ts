/**
 * A fleet node's replicated spool (issue 25): every message it has not
 * finished is also held by the cluster (spool-stream.ts), so that losing the
 * node and its disk loses no acknowledged mail; a survivor adopts the entries
 * (spool-adoption.ts).
 *
 * - Intake: a submission is answered only once its messages are committed here
 *   and their entries acknowledged by the cluster (the wrapper below). A
 *   cluster that does not acknowledge within `ackTimeoutMs` does not stop
 *   intake (FLEET.md: a node cut off goes on alone): the answer goes out,
 *   counted and logged, and the entries are written once the cluster answers.
 *   Until then the answer waits through a reconnection or a leader election.
 * - Afterwards: the store's events say, after their commit, which messages
 *   were queued or wait anew (written again) and which finished, however
 *   (sent, failed, expired, deleted, moved). The messages of one commit are
 *   written together, in one record (one replicated write for a whole batch).
 * - Finished messages: their records go together, one purge below the oldest
 *   entry still needed (the watermark). An entry above it (behind a message
 *   that waits long) cannot go yet: its end is recorded instead, so that a
 *   survivor does not send again what this node finished. Both within
 *   PRUNE_DELAY_MS of the end.
 * - A message's writes (and the record of its end) run in order, one chain per
 *   message, so a fast send never leaves a late write above its end.
 * - At the start, every waiting message is written again and stale entries go;
 *   every few moments, every waiting message is checked against the records
 *   the stream lists, and one without an entry written again (spool-check.ts).
 */
import { REWRITE_EVENTS, type SpoolRows } from '../core/cluster-spool.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { createSpoolLedger } from '../core/spool-ledger.js';
import { createPeriodicLoop } from '../runtime/periodic-loop.js';
import type { Service } from '../runtime/service.js';
import type { FleetLink } from './fleet-service.js';
import { createSpoolChains } from './spool-chains.js';
import { allWaiting, createSpoolCheck, reconcileAtStart, type SpoolCheck } from './spool-check.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';

const RECONCILE_PAGE = 1000;
/** How soon finished messages' entries go (one request for all that finished meanwhile). */
const PRUNE_DELAY_MS = 100;
/** The most entries one round writes (one record per NATS message's worth). */
const WRITE_PAGE = 1000;

export interface ReplicatedSpoolSettings {
  /** How often entries that could not be written (or removed) are tried again. */
  retryMs: number;
  /** Finished entries kept behind the oldest waiting ones before those are written again higher up (the ledger's default). */
  moveAfterEntries?: number;
  /** How often the waiting messages are checked against the records the stream lists (and any without an entry written again). */
  checkMs: number;
}

/** What the spool asks of its stream (spool-stream.ts on JetStream). */
export type SpoolWrites = Pick<
  SpoolStream,
  'putMany' | 'putEnded' | 'removeBelow' | 'holdsObject' | 'release' | 'pks' | 'removeStale' | 'subjects' | 'lastSeq'
>;

export interface ReplicatedSpoolDeps {
  link: Pick<FleetLink, 'nodeId' | 'instance' | 'connection' | 'connected'>;
  rows: SpoolRows;
  stream: SpoolWrites;
  /** Resolves when a returning node has given up what a survivor adopted: the spool is reconciled only after. */
  returned: () => Promise<void>;
  /** How many times this node's spool was adopted while it ran (the adopter removed its records): each time, all is written again. */
  adoptedWhileRunning: () => number;
  clock: Clock;
  log: Logger;
  /** Runs `run` after `ms` (setTimeout by default; a model test fires it itself); answers how to cancel it. */
  later?: (run: () => void, ms: number) => () => void;
}

const timeout = (run: () => void, ms: number): (() => void) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

export interface ReplicatedSpool extends Service {
  /** The store's events (store.onEvent): a message that finished or waits anew. */
  observe(eventType: string, messagePk: number | null | undefined): void;
  /** Resolves once the cluster holds these waiting messages' entries (or they finished): retried through reconnections and elections. */
  held(pks: readonly number[]): Promise<void>;
  /**
   * Entries waiting to be written (the cluster did not take them yet), and finished messages whose
   * end the cluster does not know yet (a survivor would send them again if this node died now).
   */
  status(): { pending: number; unrecordedEnds: number; held: number; lastCheck: SpoolCheck | null; repaired: number };
  /** Checks every waiting message against the stream now; answers how many had to be written again. */
  check(): Promise<number>;
  /** One retry round now (tests; the loop runs on its own). */
  tick(): Promise<void>;
}

export function createReplicatedSpool(settings: ReplicatedSpoolSettings, deps: ReplicatedSpoolDeps): ReplicatedSpool {
  const { link, rows, stream, log } = deps;
  const later = deps.later ?? timeout;
  const owner = (): SpoolOwner => ({ node: link.nodeId, instance: link.instance() });
  /** The sequences the cluster answered: what it holds of each message, what may be purged. */
  const ledger = createSpoolLedger(settings.moveAfterEntries);
  /** Messages whose events were written since the last flush, each with whether its content (or its waiting) is new. */
  const touched = new Map<number, boolean>();
  let reconciled = false;
  /** Waiting messages of an earlier life not yet written again: their old entries sit below, so nothing is pruned before. */
  const rewriting = new Set<number>();
  /** Each message's work in order, and the answers waiting on it. */
  const chains = createSpoolChains((pk) => rewriting.delete(pk));
  const { chain, pending } = chains;
  let stopped = false;
  /** A write failed after it may have reached the cluster: the stream's sequence is read before the next purge. */
  let unsure = false;
  let adoptionsSeen = 0;

  const reachable = () => {
    const nc = link.connection();
    if (nc === null || !link.connected()) throw new Error('the fleet cluster is not reachable');
    return nc;
  };

  /** Writes these messages' entries together (as few records as NATS messages allow). */
  const write = (entries: ReadonlyArray<readonly [number, Uint8Array]>): Promise<void> =>
    chain(
      entries.map(([pk]) => pk),
      async () => {
        const nc = reachable();
        const write = ledger.begin();
        try {
          const { seqs, subjects } = await stream.putMany(nc, owner(), entries);
          ledger.written(seqs, subjects);
        } catch (error) {
          // It may have landed all the same: a record the ledger never learns of, purged once the stream's sequence is read.
          unsure = true;
          ledger.failed(entries.map(([pk]) => pk));
          throw error;
        } finally {
          ledger.end(write);
        }
      },
    );

  /** The message finished: its entry is let go (purged or its end recorded with the next prune). */
  const finish = (pk: number): Promise<void> =>
    chain([pk], async () => {
      ledger.finished(pk, stream.holdsObject(owner(), pk));
      chains.release(pk);
      schedulePrune();
    });

  /** Each message as the store holds it now: written, or let go when it no longer waits. */
  const syncFromStore = (pks: readonly number[]): Promise<unknown> => {
    const entries = rows.entriesOf(pks);
    const writes = [...entries].flatMap(([pk, entry]) => (entry === null ? [] : [[pk, entry] as const]));
    const finishes = [...entries].flatMap(([pk, entry]) => (entry === null ? [finish(pk)] : []));
    return Promise.allSettled([...finishes, ...(writes.length > 0 ? [write(writes)] : [])]);
  };

  /**
   * After the events' commit: a message no longer waiting lets its entry go; one whose content
   * is new, or that waits anew, or that this node holds no entry for, has it written, together
   * with the rest of the commit's.
   */
  const flushTouched = (): void => {
    if (touched.size === 0) return;
    const batch = [...touched];
    touched.clear();
    const known = (pk: number): boolean => ledger.holds(pk) || chains.busy(pk) || pending.has(pk);
    // Most events change nothing of an entry (a send starting, a deferral): for those, whether the message still waits is
    // asked first, and the row read only when it has no entry yet. A message queued or waiting anew has its row read at once.
    const unchanged = batch.flatMap(([pk, rewrite]) => (rewrite ? [] : [pk]));
    const waiting = rows.waitingOf(unchanged);
    const toRead = batch.flatMap(([pk, rewrite]) => (rewrite || (waiting.has(pk) && !known(pk)) ? [pk] : []));
    for (const pk of unchanged) if (!waiting.has(pk) && known(pk)) void finish(pk).catch(() => undefined);
    const writes: Array<readonly [number, Uint8Array]> = [];
    for (const [pk, entry] of rows.entriesOf(toRead)) {
      if (entry !== null) writes.push([pk, entry]);
      else if (known(pk)) void finish(pk).catch(() => undefined);
    }
    for (let at = 0; at < writes.length; at += WRITE_PAGE) void write(writes.slice(at, at + WRITE_PAGE)).catch(() => undefined);
  };

  /** Records the end of finished messages whose entries stay above the watermark; each after its own writes. */
  const recordEnds = (pks: readonly number[]): Promise<void> =>
    chain(
      pks,
      async () => {
        const still = ledger.unrecorded(pks);
        if (still.length === 0) return;
        ledger.endsWritten(still, await stream.putEnded(reachable(), owner(), still));
      },
      false,
    );

  /**
   * Finished messages' records go together, below the watermark; the ends of those above it are
   * recorded. A message that waits long holds the watermark back: once the entries behind it
   * are many, the oldest waiting ones are written again, so the stream stays the size of the queue.
   */
  const prune = async (): Promise<void> => {
    const nc = link.connection();
    if (nc === null) return;
    if (unsure) {
      unsure = false;
      ledger.reached(await stream.lastSeq(nc));
    }
    const below = ledger.watermark();
    const above = ledger.endsAbove(below);
    if (above.length > 0) await recordEnds(above);
    if (ledger.purgeDue(below)) await stream.removeBelow(nc, owner(), below);
    for (const pk of ledger.purged(below)) {
      await stream.release(nc, owner(), pk);
      ledger.released(pk);
    }
    const longWaiters = ledger.longWaiters(RECONCILE_PAGE);
    if (longWaiters.length > 0) await syncFromStore(longWaiters);
  };

  /**
   * Soon after a message finishes: its entry is what a survivor would send again if this node
   * died now, so it goes within PRUNE_DELAY_MS, together with whatever else finished meanwhile.
   */
  let pruning: (() => void) | null = null;
  const schedulePrune = (): void => {
    if (pruning !== null || !reconciled || stopped) return;
    pruning = later(() => {
      void (rewriting.size === 0 ? prune() : Promise.resolve())
        .catch((error: unknown) => log.warn({ err: error }, 'could not remove finished spool entries; retrying'))
        .finally(() => (pruning = null));
    }, PRUNE_DELAY_MS);
  };

  let lastCheckAt = Number.NEGATIVE_INFINITY;
  const checker = createSpoolCheck({
    ledger,
    rows,
    listRecords: () => stream.subjects(reachable(), owner()),
    busy: (pk) => touched.has(pk) || chains.busy(pk) || pending.has(pk),
    writeAgain: syncFromStore,
    clock: deps.clock,
    log,
  });
  /** Not before the start's writing again is done: until then the old entries are all there is. */
  const check = async (): Promise<number> => {
    if (!reconciled || rewriting.size > 0) return 0;
    lastCheckAt = deps.clock.now();
    return checker.run();
  };

  /** These waiting messages' entries written again by the loop; nothing is purged before they all are (their old ones may be all there is). */
  const writeAllAgain = (waiting: Iterable<number>): void => {
    for (const pk of waiting) {
      pending.add(pk);
      rewriting.add(pk);
    }
  };

  const reconcile = async (): Promise<void> => {
    const nc = link.connection();
    if (nc === null) return;
    await reconcileAtStart(nc, { ledger, stream, rows, owner: owner(), writeAllAgain, log });
    reconciled = true;
  };

  const loop = createPeriodicLoop({
    name: 'fleet-spool',
    intervalMs: settings.retryMs,
    log,
    clock: deps.clock,
    run: async () => {
      if (stopped || link.connection() === null || !link.connected()) return;
      if (!reconciled) {
        await deps.returned();
        await reconcile();
      }
      // This node's spool was adopted while it ran, and the adopter removed its records: what it still holds is written again.
      const adoptions = deps.adoptedWhileRunning();
      if (adoptions !== adoptionsSeen) {
        adoptionsSeen = adoptions;
        writeAllAgain(allWaiting(rows));
        log.warn({ waiting: pending.size }, 'this node’s spool was adopted while it ran: its waiting messages written again');
      }
      while (pending.size > 0 && !stopped) {
        const before = pending.size;
        await syncFromStore([...pending].slice(0, RECONCILE_PAGE));
        if (pending.size >= before) break;
      }
      // Not before every waiting message of an earlier life is written again: their old entries sit below.
      if (rewriting.size === 0) await prune();
      if (deps.clock.now() - lastCheckAt >= settings.checkMs) await check();
    },
  });

  return {
    name: 'fleet-spool',
    observe(eventType, messagePk) {
      if (messagePk === null || messagePk === undefined) return;
      // Inside the event's transaction: read after its commit.
      if (touched.size === 0) setImmediate(flushTouched);
      touched.set(messagePk, (touched.get(messagePk) ?? false) || REWRITE_EVENTS.has(eventType));
    },
    held(pks) {
      // The commit's events have their writes under way (or get them now).
      flushTouched();
      return chains.settled(pks);
    },
    status: () => ({
      pending: pending.size,
      unrecordedEnds: ledger.counts().unrecordedEnds,
      held: ledger.counts().held,
      lastCheck: checker.last(),
      repaired: checker.repaired(),
    }),
    check,
    start() {
      loop.start();
    },
    async stop() {
      stopped = true;
      pruning?.();
      await loop.stop();
    },
    tick: () => loop.tick(),
  };
}
