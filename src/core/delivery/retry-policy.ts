/**
 * When to try again after a transient failure: a configurable schedule (the
 * last step repeats) with random jitter, a relay's own hint honoured, and a
 * maximum age after which the message ends in error instead.
 */

export interface RetryPolicy {
  scheduleMs: readonly number[];
  /** Fraction (0..1) by which each wait is randomised up or down. */
  jitter: number;
  maxAgeMs: number;
}

export type RetryDecision = { retry: true; at: number } | { retry: false; reason: string };

export interface RetryInput {
  /** Attempts made so far, including the one that just failed (>= 1). */
  attempts: number;
  now: number;
  createdAt: number;
  /** A wait the relay asked for ("try again in 30 seconds"). */
  hintMs: number | null;
  /** Uniform random number in [0, 1), injected. */
  random: number;
}

export function nextRetry(policy: RetryPolicy, input: RetryInput): RetryDecision {
  const step =
    policy.scheduleMs[Math.min(input.attempts, policy.scheduleMs.length) - 1] ?? policy.scheduleMs[0] ?? 60_000;
  const jittered = step * (1 + policy.jitter * (2 * input.random - 1));
  // A relay's hint wins over our schedule, but never below one second.
  const waitMs = input.hintMs !== null ? Math.max(1000, input.hintMs) : Math.max(1000, Math.round(jittered));
  const at = input.now + waitMs;
  if (at - input.createdAt > policy.maxAgeMs) {
    return {
      retry: false,
      reason: `expired: not delivered within ${Math.round(policy.maxAgeMs / 1000)} s after ${input.attempts} attempts`,
    };
  }
  return { retry: true, at };
}

/**
 * The wait after the `failures`-th failure in a row: doubling from `initialMs`
 * up to `maxMs`, randomised by `jitter` (0..1) up or down, at least 1 ms.
 * For loops that retry a peer (report rounds, the event mirror), not messages.
 */
export function exponentialBackoff(
  failures: number,
  policy: { initialMs: number; maxMs: number; jitter: number },
  random: number,
): number {
  const step = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(Math.max(failures, 1) - 1, 30));
  return Math.max(1, Math.round(step * (1 + policy.jitter * (2 * random - 1))));
}
