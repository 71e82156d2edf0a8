/**
 * What a fleet node knows of its own replicated spool, the pure
 * part: which record holds each waiting message's entry, which finished
 * messages' entries a survivor could still read, and so what may be purged
 * (everything below the watermark) and what must be recorded as ended instead
 * (finished entries above it). The adapter (fleet/spool/replicated-spool.ts) writes
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
  missing(
    waiting: readonly number[],
    busy: (pk: number) => boolean,
    present: ReadonlySet<string>,
    listedAfter: number,
  ): number[];
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
  /** Reconciled at a start, the stream at `seq`: records of an earlier life sit at or below it, unknown to the ledger. */
  reconciledAt(seq: number): void;
  /** The sequence of the record holding the waiting message's latest entry; undefined when none is known. */
  heldAt(pk: number): number | undefined;
  /**
   * Every record not yet removed that holds an entry of these messages (their latest, earlier
   * ones, finished ones'); `sure` false when one may sit in a record the ledger never learnt of (a
   * write whose answer was lost, an earlier life's record not purged yet): the stream is read then.
   */
  recordsOf(pks: readonly number[]): { seqs: number[]; sure: boolean };
  /** These records are being erased: no purge passes them meanwhile (a purge leaves their bytes on the servers' disks). */
  holdForErasure(seqs: readonly number[]): void;
  /** The record at `seq` is gone for good: erased, or found removed. */
  erased(seq: number): void;
}

/**
 * A class rather than a closure: its entries, ends, records and writes under way are state that
 * most answers read together.
 */
class Ledger implements SpoolLedger {
  /** The sequence of the record holding each waiting message's entry. */
  private readonly held = new Map<number, number>();
  /** Finished messages whose entry (at that sequence) may still be read: neither purged nor its end recorded. */
  private readonly ended = new Map<number, number>();
  /** Finished messages whose entry keeps its bytes in an object: it goes once the record naming it was purged. */
  private readonly finishedObjects = new Map<number, number>();
  /** How many entries (or ends) each record holds, while above the purge. */
  private readonly recordSizes = new Map<number, number>();
  /** The subject of each record holding entries, while above the purge. */
  private readonly recordSubjects = new Map<number, string>();
  /** Messages whose last write failed (perhaps after it landed) and was not written again since. */
  private readonly unsure = new Set<number>();
  /** Writes under way, each with the highest sequence acknowledged when it was sent. */
  private readonly inFlight = new Map<symbol, number>();
  /** Every record above the purge holding an entry of each message: its latest, earlier ones, a finished one's. */
  private readonly entrySeqs = new Map<number, Set<number>>();
  /**
   * Messages a write of which may have landed in a record the ledger never learnt of, each with
   * the stream's last sequence read since (infinite until read): the record is at or below it.
   */
  private readonly doubtful = new Map<number, number>();
  /** Records being erased, held below the watermark until they are. */
  private readonly erasing = new Set<number>();
  /** Records of an earlier life sit at or below it; infinite before the start's reconciling. */
  private earlierLife = Number.POSITIVE_INFINITY;
  private highest = 0;
  private removedBelow = 0;

  constructor(private readonly moveAfterEntries: number) {}

  begin(): symbol {
    const write = Symbol('write');
    this.inFlight.set(write, this.highest);
    return write;
  }

  end(write: symbol): void {
    this.inFlight.delete(write);
  }

  written(seqs: ReadonlyMap<number, number>, subjects?: ReadonlyMap<number, string>): void {
    if (subjects !== undefined)
      for (const [seq, subject] of subjects) if (seq >= this.removedBelow) this.recordSubjects.set(seq, subject);
    for (const [pk, seq] of seqs) {
      this.held.set(pk, seq);
      this.unsure.delete(pk);
      // Written again after its end (resent): the entry is the message's again.
      this.ended.delete(pk);
      this.finishedObjects.delete(pk);
      this.recordSizes.set(seq, (this.recordSizes.get(seq) ?? 0) + 1);
      this.highest = Math.max(this.highest, seq);
      const known = this.entrySeqs.get(pk);
      if (known === undefined) this.entrySeqs.set(pk, new Set([seq]));
      else known.add(seq);
    }
  }

  failed(pks: readonly number[]): void {
    for (const pk of pks) {
      this.unsure.add(pk);
      this.doubtful.set(pk, Number.POSITIVE_INFINITY);
    }
  }

  finished(pk: number, hasObject: boolean): void {
    const seq = this.held.get(pk);
    if (seq === undefined) {
      // An entry may sit anywhere above what is purged now: its end is recorded, so that no survivor sends it again.
      if (this.unsure.delete(pk)) this.ended.set(pk, Number.POSITIVE_INFINITY);
      return;
    }
    this.held.delete(pk);
    this.ended.set(pk, seq);
    if (hasObject) this.finishedObjects.set(pk, seq);
  }

  endsWritten(pks: readonly number[], seq: number): void {
    this.highest = Math.max(this.highest, seq);
    // Counted with the entries behind a long waiter: ends recorded every few moments pile up behind it too.
    this.recordSizes.set(seq, pks.length);
    for (const pk of pks) this.ended.delete(pk);
  }

  holds(pk: number): boolean {
    return this.held.has(pk);
  }

  top(): number {
    return this.highest;
  }

  reached(seq: number): void {
    this.highest = Math.max(this.highest, seq);
    // Read after the failed writes answered: whatever they landed sits at or below it.
    for (const [pk, bound] of this.doubtful) if (bound === Number.POSITIVE_INFINITY) this.doubtful.set(pk, seq);
  }

  missing(
    waiting: readonly number[],
    busy: (pk: number) => boolean,
    present: ReadonlySet<string>,
    listedAfter: number,
  ): number[] {
    return waiting.filter((pk) => {
      if (busy(pk)) return false;
      const seq = this.held.get(pk);
      if (seq === undefined) return true;
      // Written again since the listing began: its record may not be listed yet.
      if (seq > listedAfter) return false;
      const subject = this.recordSubjects.get(seq);
      return subject !== undefined && !present.has(subject);
    });
  }

  watermark(): number {
    let lowest = this.highest + 1;
    for (const seq of this.held.values()) lowest = Math.min(lowest, seq);
    for (const floor of this.inFlight.values()) lowest = Math.min(lowest, floor + 1);
    for (const seq of this.erasing) lowest = Math.min(lowest, seq);
    return lowest;
  }

  endsAbove(below: number): number[] {
    return [...this.ended].flatMap(([pk, seq]) => (seq >= below ? [pk] : []));
  }

  unrecorded(pks: readonly number[]): number[] {
    return pks.filter((pk) => this.ended.has(pk));
  }

  purgeDue(below: number): boolean {
    return below > this.removedBelow;
  }

  purged(below: number): number[] {
    this.removedBelow = Math.max(this.removedBelow, below);
    for (const [pk, seq] of this.ended) if (seq < below) this.ended.delete(pk);
    for (const seq of this.recordSizes.keys()) if (seq < below) this.recordSizes.delete(seq);
    for (const seq of this.recordSubjects.keys()) if (seq < below) this.recordSubjects.delete(seq);
    for (const [pk, seqs] of this.entrySeqs) {
      for (const seq of seqs) if (seq < below) seqs.delete(seq);
      if (seqs.size === 0) this.entrySeqs.delete(pk);
    }
    for (const [pk, bound] of this.doubtful) if (bound < below) this.doubtful.delete(pk);
    return [...this.finishedObjects].flatMap(([pk, seq]) => (seq < below ? [pk] : []));
  }

  released(pk: number): void {
    this.finishedObjects.delete(pk);
  }

  longWaiters(limit: number): number[] {
    let behind = 0;
    for (const size of this.recordSizes.values()) behind += size;
    if (behind - this.held.size <= Math.max(this.moveAfterEntries, 4 * this.held.size)) return [];
    return [...this.held]
      .sort((a, b) => a[1] - b[1])
      .slice(0, limit)
      .map(([pk]) => pk);
  }

  counts(): { held: number; unrecordedEnds: number } {
    return { held: this.held.size, unrecordedEnds: this.ended.size };
  }

  reconciledAt(seq: number): void {
    this.reached(seq);
    this.earlierLife = seq;
  }

  heldAt(pk: number): number | undefined {
    return this.held.get(pk);
  }

  recordsOf(pks: readonly number[]): { seqs: number[]; sure: boolean } {
    const seqs = new Set(pks.flatMap((pk) => [...(this.entrySeqs.get(pk) ?? [])]));
    const earlierGone = this.earlierLife === 0 || this.removedBelow > this.earlierLife;
    return { seqs: [...seqs].sort((a, b) => a - b), sure: earlierGone && !pks.some((pk) => this.doubtful.has(pk)) };
  }

  holdForErasure(seqs: readonly number[]): void {
    for (const seq of seqs) if (seq >= this.removedBelow) this.erasing.add(seq);
  }

  erased(seq: number): void {
    this.erasing.delete(seq);
    // Found gone with entries of waiting messages in it (lost by the cluster): its subject stays, for the check to notice.
    if (![...this.held.values()].includes(seq)) {
      this.recordSizes.delete(seq);
      this.recordSubjects.delete(seq);
    }
    for (const [pk, seqs] of this.entrySeqs) if (seqs.delete(seq) && seqs.size === 0) this.entrySeqs.delete(pk);
    for (const [pk, at] of this.finishedObjects) if (at === seq) this.finishedObjects.delete(pk);
    // A finished message's end stays owed: an earlier entry of it may sit lower, which a survivor would replay.
  }
}

export function createSpoolLedger(moveAfterEntries = MOVE_AFTER_ENTRIES): SpoolLedger {
  return new Ledger(moveAfterEntries);
}
