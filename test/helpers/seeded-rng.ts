/**
 * A small seeded PRNG for fuzz inputs: the same seed gives the same bytes on
 * every machine, so a failing input is reproduced from its seed alone.
 */

export interface Rng {
  /** In [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  bytes(length: number): Buffer;
}

/** mulberry32: 32-bit state, fast and well spread; plenty for varying fuzz inputs (never for secrets). */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T,
    bytes: (length: number): Buffer => {
      const out = Buffer.alloc(length);
      for (let i = 0; i < length; i += 1) out[i] = int(0, 255);
      return out;
    },
  };
}
