/**
 * The order of a replicated spool's work on each message: a
 * message's writes, and the record of its end, run one after the other (a
 * fast send never leaves a late write above its end), while different
 * messages' work runs together. Messages whose entry the cluster did not take
 * are pending, for the spool's loop to write again; an answer waits until a
 * message has nothing under way or owed.
 */
export interface SpoolChains {
  /**
   * Runs `run` after whatever is under way for these messages, as the next link of each one's
   * chain. `tracked`: a failure leaves the messages pending, a success clears them.
   */
  chain(pks: readonly number[], run: () => Promise<void>, tracked?: boolean): Promise<void>;
  /** Whether something is under way for the message. */
  busy(pk: number): boolean;
  /** Messages whose entry is not as it should be yet (the cluster did not answer). */
  readonly pending: Set<number>;
  /** Resolves once nothing is under way or owed for each of these messages. */
  settled(pks: readonly number[]): Promise<void>;
  /** Resolves once nothing is under way for these messages: every link of their chains has run (what is owed is not waited for). */
  idle(pks: readonly number[]): Promise<void>;
  /** The message needs nothing more (it finished): answers waiting on it go. */
  release(pk: number): void;
}

export function createSpoolChains(onSettled: (pk: number) => void): SpoolChains {
  const chains = new Map<number, Promise<void>>();
  const pending = new Set<number>();
  const waiters = new Map<number, Array<() => void>>();
  const release = (pk: number): void => {
    onSettled(pk);
    const waiting = waiters.get(pk);
    if (waiting === undefined) return;
    waiters.delete(pk);
    for (const resolve of waiting) resolve();
  };
  const settledOne = (pk: number): Promise<void> =>
    !chains.has(pk) && !pending.has(pk)
      ? Promise.resolve()
      : new Promise((resolve) => {
          const waiting = waiters.get(pk);
          if (waiting === undefined) waiters.set(pk, [resolve]);
          else waiting.push(resolve);
        });

  return {
    chain(pks, run, tracked = true) {
      const before = pks.flatMap((pk) => chains.get(pk) ?? []);
      const done = (before.length === 0 ? Promise.resolve() : Promise.allSettled(before)).then(run);
      // One link for the whole group (not one per message: a batch is hundreds); it unlinks itself before anyone is told.
      const after = (ok: boolean): void => {
        for (const pk of pks) {
          if (chains.get(pk) === step) chains.delete(pk);
          if (tracked) {
            if (ok) pending.delete(pk);
            else pending.add(pk);
          }
          if (ok) release(pk);
        }
      };
      const step: Promise<void> = done.then(
        () => after(true),
        (error: unknown) => {
          after(false);
          throw error;
        },
      );
      for (const pk of pks) chains.set(pk, step);
      void step.catch(() => undefined);
      return done;
    },
    busy: (pk) => chains.has(pk),
    pending,
    settled: (pks) => Promise.all(pks.map(settledOne)).then(() => undefined),
    async idle(pks) {
      // A link unlinks itself before it settles: once the links seen have run, only links added since are left.
      for (let under = pks.flatMap((pk) => chains.get(pk) ?? []); under.length > 0;) {
        await Promise.allSettled(under);
        under = pks.flatMap((pk) => chains.get(pk) ?? []);
      }
    },
    release,
  };
}
