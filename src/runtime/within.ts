/**
 * A bounded wait: the one way a stop waits for work in flight. Plain
 * scheduling, no library: every room's loop may import it.
 */

/** Waits for `work`, or for `ms`, whichever comes first. */
export async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `work`, or a rejection once `ms` have passed: for a loop's step that must not hang the loop for
 * good (a JetStream read can stall without ever failing while the cluster elects a leader). The
 * work itself is not cancelled; its late result is dropped.
 */
export async function deadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
