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
