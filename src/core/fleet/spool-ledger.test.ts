import { describe, expect, it } from 'vitest';
import { createSpoolLedger, MOVE_AFTER_ENTRIES } from './spool-ledger.js';

const seqs = (pairs: Array<[number, number]>) => new Map(pairs);

describe('a node’s ledger of its replicated spool', () => {
  it('purges below its oldest waiting entry, and records the ends of finished entries above it', () => {
    const ledger = createSpoolLedger();
    // A message scheduled for later (pk 1, record 1), then a batch (pks 2-4, record 2), then one more (pk 5, record 3).
    ledger.written(seqs([[1, 1]]));
    ledger.written(
      seqs([
        [2, 2],
        [3, 2],
        [4, 2],
      ]),
    );
    ledger.written(seqs([[5, 3]]));
    for (const pk of [2, 3, 5]) ledger.finished(pk, false);
    expect(ledger.watermark()).toBe(1);
    // Nothing below the scheduled message: every finished entry sits above the mark; their end is recorded.
    expect(ledger.endsAbove(ledger.watermark()).sort()).toEqual([2, 3, 5]);
    ledger.endsWritten([2, 3, 5], 4);
    expect(ledger.counts()).toEqual({ held: 2, unrecordedEnds: 0 });
    // The scheduled message goes: the mark moves to the batch still holding pk 4.
    ledger.finished(1, false);
    expect(ledger.watermark()).toBe(2);
    expect(ledger.purgeDue(2)).toBe(true);
    expect(ledger.endsAbove(2)).toEqual([]);
    ledger.purged(2);
    expect(ledger.counts()).toEqual({ held: 1, unrecordedEnds: 0 });
    expect(ledger.purgeDue(2)).toBe(false);
    // The last one goes: everything written so far is below the mark, the end record included.
    ledger.finished(4, false);
    expect(ledger.watermark()).toBe(5);
  });

  it('never lets a purge pass a write under way', () => {
    const ledger = createSpoolLedger();
    ledger.written(seqs([[1, 7]]));
    const write = ledger.begin();
    ledger.finished(1, false);
    // The write will land above 7: only what is below that may go.
    expect(ledger.watermark()).toBe(8);
    ledger.end(write);
    expect(ledger.watermark()).toBe(8);
  });

  it('forgets the end of a message written again (resent): its new entry is what a survivor must send', () => {
    const ledger = createSpoolLedger();
    ledger.written(seqs([[1, 1]]));
    ledger.written(seqs([[2, 2]]));
    ledger.finished(2, false);
    expect(ledger.unrecorded([2])).toEqual([2]);
    ledger.written(seqs([[2, 3]]));
    expect(ledger.unrecorded([2])).toEqual([]);
    expect(ledger.holds(2)).toBe(true);
  });

  it('lets a finished message’s object go only once the record naming it was purged', () => {
    const ledger = createSpoolLedger();
    ledger.written(seqs([[1, 1]]));
    ledger.written(seqs([[2, 2]]));
    ledger.finished(2, true);
    expect(ledger.purged(ledger.watermark())).toEqual([]);
    ledger.finished(1, false);
    expect(ledger.purged(ledger.watermark())).toEqual([2]);
    ledger.released(2);
    expect(ledger.purged(ledger.watermark())).toEqual([]);
  });

  it('writes the oldest waiting messages again once many finished entries sit behind them', () => {
    const ledger = createSpoolLedger();
    ledger.written(seqs([[1, 1]]));
    let seq = 1;
    for (let pk = 2; pk <= MOVE_AFTER_ENTRIES + 1; pk += 1) ledger.written(seqs([[pk, (seq += 1)]]));
    for (let pk = 2; pk <= MOVE_AFTER_ENTRIES + 1; pk += 1) ledger.finished(pk, false);
    expect(ledger.longWaiters(10)).toEqual([]);
    ledger.written(seqs([[MOVE_AFTER_ENTRIES + 2, (seq += 1)]]));
    ledger.finished(MOVE_AFTER_ENTRIES + 2, false);
    expect(ledger.longWaiters(10)).toEqual([1]);
  });

  it('counts recorded ends behind a long waiter too: they pile up while it waits', () => {
    const ledger = createSpoolLedger();
    ledger.written(seqs([[1, 1]]));
    let seq = 1;
    // 6,000 entries alone would not be enough; with their 6,000 ends they are.
    for (let round = 0; round < (MOVE_AFTER_ENTRIES * 6) / 10; round += 1) {
      const pk = round + 2;
      ledger.written(seqs([[pk, (seq += 1)]]));
      ledger.finished(pk, false);
      ledger.endsWritten([pk], (seq += 1));
    }
    expect(ledger.longWaiters(10)).toEqual([1]);
  });

  it('names the waiting messages a survivor could not replay: no entry known, or a record the stream no longer lists', () => {
    const ledger = createSpoolLedger();
    ledger.written(
      seqs([
        [1, 1],
        [2, 1],
      ]),
      new Map([[1, 'g-1']]),
    );
    ledger.written(seqs([[3, 2]]), new Map([[2, 'g-2']]));
    const listedAfter = ledger.top();
    // Written again after the listing began: its record may not be listed yet.
    ledger.written(seqs([[2, 3]]), new Map([[3, 'g-3']]));
    const busy = (pk: number) => pk === 5;
    // Record g-1 is gone from the stream; pk 4 waits with no entry known; pk 5 is being written.
    expect(ledger.missing([1, 2, 3, 4, 5], busy, new Set(['g-2']), listedAfter)).toEqual([1, 4]);
  });

  it('records the end of a message whose write failed after it may have landed', () => {
    const ledger = createSpoolLedger();
    ledger.written(seqs([[1, 1]]));
    ledger.failed([2]);
    ledger.finished(2, false);
    // Wherever its entry landed, it is above anything purged now: its end is recorded.
    expect(ledger.endsAbove(ledger.watermark())).toEqual([2]);
    ledger.endsWritten([2], 5);
    expect(ledger.counts().unrecordedEnds).toBe(0);
  });

  it('lets the purge pass records it never learned of once the stream is known to have reached further', () => {
    const ledger = createSpoolLedger();
    expect(ledger.watermark()).toBe(1);
    ledger.reached(40);
    expect(ledger.watermark()).toBe(41);
    ledger.written(seqs([[7, 50]]));
    expect(ledger.watermark()).toBe(50);
  });

  it('knows every record holding an erased message’s entries, and holds them from the purge until erased', () => {
    const ledger = createSpoolLedger();
    ledger.reconciledAt(0);
    // pk 1 written, then updated (a second entry), in records shared with pks 2 and 3.
    ledger.written(
      seqs([
        [1, 1],
        [2, 1],
      ]),
    );
    ledger.written(
      seqs([
        [1, 2],
        [3, 2],
      ]),
    );
    ledger.finished(1, false);
    expect(ledger.recordsOf([1])).toEqual({ seqs: [1, 2], sure: true });
    // pk 2 goes: record 1 holds nothing waiting, yet no purge may take it before it is erased.
    ledger.finished(2, false);
    ledger.holdForErasure([1, 2]);
    expect(ledger.watermark()).toBe(1);
    ledger.erased(1);
    expect(ledger.watermark()).toBe(2);
    ledger.erased(2);
    expect(ledger.recordsOf([1])).toEqual({ seqs: [], sure: true });
    // pk 3, still waiting, is its record's: the record's subject is kept for the check while it is held there.
    expect(ledger.heldAt(3)).toBe(2);
  });

  it('cannot say where an erased message’s entries are before the start’s records are purged, or after a failed write', () => {
    const ledger = createSpoolLedger();
    expect(ledger.recordsOf([1]).sure).toBe(false);
    ledger.reconciledAt(30);
    ledger.written(seqs([[1, 31]]));
    expect(ledger.recordsOf([1]).sure).toBe(false);
    ledger.purged(31);
    expect(ledger.recordsOf([1])).toEqual({ seqs: [31], sure: true });
    // A write of pk 2 whose answer was lost: it may sit anywhere up to the stream's sequence read next.
    ledger.failed([2]);
    expect(ledger.recordsOf([2]).sure).toBe(false);
    ledger.reached(40);
    ledger.purged(40);
    expect(ledger.recordsOf([2]).sure).toBe(false);
    ledger.purged(41);
    expect(ledger.recordsOf([2]).sure).toBe(true);
  });
});
