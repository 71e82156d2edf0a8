/**
 * The walk the background sealing kinds share (body-sealer.ts, record-sealer.ts,
 * personal-fields.ts): the next rows still in clear, each read and sealed in turn,
 * until the batch's budget of rows (and, roughly, bytes) is spent.
 */

/** A sealer's share of a batch: how many rows and about how many bytes it may still take. */
export type SealingBudget = { rows: number; bytes: number };

export function rowSealing<Row>(walk: {
  /** The ids of up to `limit` rows still to seal, in order. */
  next(limit: number): number[];
  read(id: number): Row | undefined;
  /** Seals the row at `now`; answers about how many clear bytes it replaced. */
  seal(id: number, row: Row, now: number): number;
}): (budget: SealingBudget, now: number) => number {
  return (budget, now) => {
    let sealed = 0;
    for (const id of walk.next(budget.rows)) {
      const row = walk.read(id);
      if (row === undefined) continue;
      budget.bytes -= walk.seal(id, row, now);
      budget.rows -= 1;
      sealed += 1;
      if (budget.bytes <= 0) break;
    }
    return sealed;
  };
}
