/** Ports for time and identity: core never reads the clock or randomness itself. */

export interface Clock {
  /** Current instant, UTC epoch milliseconds. */
  now(): number;
}

export interface IdSource {
  /** A new globally unique id (UUID) for events and audit entries. */
  uuid(): string;
}

/** Epoch milliseconds -> the API's epoch seconds (`_ts`); no instant (null, or a time never planned) is null. */
export const epochSeconds = (at: number | null): number | null =>
  at === null || !Number.isFinite(at) ? null : Math.floor(at / 1000);

/** Whole seconds from `at` to `now`, never negative; null without an `at`. */
export const ageSeconds = (at: number | null, now: number): number | null =>
  at === null ? null : Math.max(0, Math.floor((now - at) / 1000));
