/**
 * fast-check settings for the hostile-input properties: a fixed default seed
 * (the same inputs on every run and machine), CI-sized run counts, and both
 * raised from the environment for longer local runs:
 *   HOSTILE_SEED=123 HOSTILE_RUNS_SCALE=20 npx vitest run test/security
 * fast-check names the seed and the shrunk counterexample when a property fails.
 */
import fc from 'fast-check';

const DEFAULT_SEED = 20_261_123;

export function hostileSeed(): number {
  const text = process.env.HOSTILE_SEED;
  return text === undefined || text === '' ? DEFAULT_SEED : Number(text);
}

export function hostileRuns(ciRuns: number): number {
  const scale = Number(process.env.HOSTILE_RUNS_SCALE ?? '1');
  return Math.max(1, Math.round(ciRuns * (Number.isFinite(scale) && scale > 0 ? scale : 1)));
}

/**
 * Checks `predicate` on `numRuns` inputs of `arbitrary` with the hostile settings
 * and prints how many inputs were tried (and the seed), whether it held or not.
 * Shrinking is off unless HOSTILE_SHRINK=1: each try is a round trip to a real
 * daemon whose state moves on, so a replay from the seed is the better tool.
 */
export async function checkProperty<T>(
  name: string,
  ciRuns: number,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  options: { tally?: () => string; seedOffset?: number } = {},
): Promise<void> {
  const seed = hostileSeed() + (options.seedOffset ?? 0);
  const tally = options.tally ?? (() => '');
  const numRuns = hostileRuns(ciRuns);
  let tried = 0;
  const property = fc.asyncProperty(arbitrary, async (value) => {
    tried += 1;
    await predicate(value);
  });
  try {
    await fc.assert(property, { seed, numRuns, endOnFailure: process.env.HOSTILE_SHRINK !== '1' });
  } finally {
    const extra = tally();
    console.log(
      `[hostile] ${name}: ${tried} inputs tried (numRuns ${numRuns}, seed ${seed})${extra === '' ? '' : `; ${extra}`}`,
    );
  }
}
