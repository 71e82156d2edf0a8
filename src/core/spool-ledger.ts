/**
 * What a fleet node knows of its own replicated spool (issue 25), the pure
 * part: which record holds each waiting message's entry, which finished
 * messages' entries a survivor could still read, and so what may be purged
 * (everything below the watermark) and what must be recorded as ended instead
 * (finished entries above it). The adapter (fleet/replicated-spool.ts) writes
 * and purges; this ledger only keeps the sequences the cluster answered.
 */

/** Finished entries kept behind the oldest waiting ones before those are written again higher up. */
export const MOVE_AFTER_ENTRIES = 10_000;

export interface SpoolLedger {
  /** A write is under way: whatever sequence it gets is above the highest acknowledged now. */
  begin(): symbol;
  end(write: symbol): void;
  /** The cluster holds these messages' entries, each at its record's sequence (`subjects`: each record's subject). */
  written(seqs: ReadonlyMap<number, number>, subjects?: ReadonlyMap<number, string>): void;
  /** A write of these messages failed after it may have reached the cluster: each may have an entry the ledger never learns of. */
  failed(pks: readonly number[]): void;
  /** The message finished: its entry, if the cluster holds one, is now a finished one. */
  finished(pk: number, hasObject: boolean): void;
  /** The end of these messages is recorded at `seq`. */
  endsWritten(pks: readonly number[], seq: number): void;
  /** Whether the cluster holds an entry of this waiting message. */
  holds(pk: number): boolean;
  /** The highest sequence the cluster acknowledged to this node. */
  top(): number;
  /**
   * The stream had reached `seq`: records of this node below it that the ledger never learned of
   * (an earlier life's, a write whose acknowledgement was lost) go with the next purge, unless
   * an entry the ledger holds sits below.
   */
  reached(seq: number): void;
  /**
   * Of these waiting messages (read from the store), those a survivor could not replay: none of
   * their entries known (and none under way: `busy`), or known in a record missing from the
   * stream's listing (`present`, listed once every record up to `listedAfter` was acknowledged).
   */
  missing(waiting: readonly number[], busy: (pk: number) => boolean, present: ReadonlySet<string>, listedAfter: number): number[];
  /** The lowest sequence the node may still need: every record below it holds only finished (or superseded) entries. */
  watermark(): number;
  /** Finished messages whose entry sits at or above `below`: a purge there leaves them, so their end is recorded. */
  endsAbove(below: number): number[];
  /** Those of these messages still finished with their end unrecorded (one written again since is not). */
  unrecorded(pks: readonly number[]): number[];
  /** Whether a purge below `below` would remove anything not removed yet. */
  purgeDue(below: number): boolean;
  /** Everything below `below` was purged: answers the finished messages whose objects may go now. */
  purged(below: number): number[];
  /** The object of a finished message is gone. */
  released(pk: number): void;
  /**
   * The oldest waiting messages (at most `limit`) to write again higher up, when the finished
   * entries behind them are many; none otherwise.
   */
  longWaiters(limit: number): number[];
  counts(): { held: number; unrecordedEnds: number };
}

export function createSpoolLedger(moveAfterEntries = MOVE_AFTER_ENTRIES): SpoolLedger {
  /** The sequence of the record holding each waiting message's entry. */
  const held = new Map<number, number>();
  /** Finished messages whose entry (at that sequence) may still be read: neither purged nor its end recorded. */
  const ended = new Map<number, number>();
  /** Finished messages whose entry keeps its bytes in an object: it goes once the record naming it was purged. */
  const finishedObjects = new Map<number, number>();
  /** How many entries (or ends) each record holds, while above the purge. */
  const recordSizes = new Map<number, number>();
  /** The subject of each record holding entries, while above the purge. */
  const recordSubjects = new Map<number, string>();
  /** Messages whose last write failed (perhaps after it landed) and was not written again since. */
  const unsure = new Set<number>();
  /** Writes under way, each with the highest sequence acknowledged when it was sent. */
  const inFlight = new Map<symbol, number>();
  let top = 0;
  let removedBelow = 0;

  return {
    begin() {
      const write = Symbol('write');
      inFlight.set(write, top);
      return write;
    },
    end: (write) => void inFlight.delete(write),
    written(seqs, subjects) {
      if (subjects !== undefined) for (const [seq, subject] of subjects) if (seq >= removedBelow) recordSubjects.set(seq, subject);
      for (const [pk, seq] of seqs) {
        held.set(pk, seq);
        unsure.delete(pk);
        // Written again after its end (resent): the entry is the message's again.
        ended.delete(pk);
        finishedObjects.delete(pk);
        recordSizes.set(seq, (recordSizes.get(seq) ?? 0) + 1);
        top = Math.max(top, seq);
      }
    },
    failed(pks) {
      for (const pk of pks) unsure.add(pk);
    },
    finished(pk, hasObject) {
      const seq = held.get(pk);
      if (seq === undefined) {
        // An entry may sit anywhere above what is purged now: its end is recorded, so that no survivor sends it again.
        if (unsure.delete(pk)) ended.set(pk, Number.POSITIVE_INFINITY);
        return;
      }
      held.delete(pk);
      ended.set(pk, seq);
      if (hasObject) finishedObjects.set(pk, seq);
    },
    endsWritten(pks, seq) {
      top = Math.max(top, seq);
      // Counted with the entries behind a long waiter: ends recorded every few moments pile up behind it too.
      recordSizes.set(seq, pks.length);
      for (const pk of pks) ended.delete(pk);
    },
    holds: (pk) => held.has(pk),
    top: () => top,
    reached(seq) {
      top = Math.max(top, seq);
    },
    missing(waiting, busy, present, listedAfter) {
      return waiting.filter((pk) => {
        if (busy(pk)) return false;
        const seq = held.get(pk);
        if (seq === undefined) return true;
        // Written again since the listing began: its record may not be listed yet.
        if (seq > listedAfter) return false;
        const subject = recordSubjects.get(seq);
        return subject !== undefined && !present.has(subject);
      });
    },
    watermark() {
      let lowest = top + 1;
      for (const seq of held.values()) lowest = Math.min(lowest, seq);
      for (const floor of inFlight.values()) lowest = Math.min(lowest, floor + 1);
      return lowest;
    },
    endsAbove: (below) => [...ended].flatMap(([pk, seq]) => (seq >= below ? [pk] : [])),
    unrecorded: (pks) => pks.filter((pk) => ended.has(pk)),
    purgeDue: (below) => below > removedBelow,
    purged(below) {
      removedBelow = Math.max(removedBelow, below);
      for (const [pk, seq] of ended) if (seq < below) ended.delete(pk);
      for (const seq of recordSizes.keys()) if (seq < below) recordSizes.delete(seq);
      for (const seq of recordSubjects.keys()) if (seq < below) recordSubjects.delete(seq);
      return [...finishedObjects].flatMap(([pk, seq]) => (seq < below ? [pk] : []));
    },
    released: (pk) => void finishedObjects.delete(pk),
    longWaiters(limit) {
      let behind = 0;
      for (const size of recordSizes.values()) behind += size;
      if (behind - held.size <= Math.max(moveAfterEntries, 4 * held.size)) return [];
      return [...held]
        .sort((a, b) => a[1] - b[1])
        .slice(0, limit)
        .map(([pk]) => pk);
    },
    counts: () => ({ held: held.size, unrecordedEnds: ended.size }),
  };
}
