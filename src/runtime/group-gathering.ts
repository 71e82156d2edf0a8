/**
 * When a group commit's next group goes: the submission service's `defer`. After a quiet spell,
 * in the next turn, so a lone submission waits for nothing. While groups follow one another (one
 * was gathered less than `streamMs` ago), `holdMs` later, so that the sessions and requests in
 * flight join it: a commit (its WAL pages, its fsync, the wakes after it) costs about the same
 * whatever it holds. PostgreSQL's commit_delay rests on the same idea, and waits only when other
 * transactions are active.
 */
export interface GroupGathering {
  holdMs: number;
  streamMs: number;
  /**
   * Milliseconds of a monotonic clock; performance.now by default, not the daemon's clock: a test
   * clock that stands still would make every group look like part of a stream, and hold each one.
   */
  now?: () => number;
}

export function groupGathering(options: GroupGathering): (gather: () => void) => void {
  const now = options.now ?? (() => performance.now());
  let lastGathered = Number.NEGATIVE_INFINITY;
  return (gather) => {
    const run = (): void => {
      lastGathered = now();
      gather();
    };
    if (now() - lastGathered < options.streamMs) setTimeout(run, options.holdMs);
    else setImmediate(run);
  };
}
