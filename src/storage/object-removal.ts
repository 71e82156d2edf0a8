/**
 * Removes from the body store the objects no message needs any more (their keys are destroyed
 * already: erasure and retention take effect in the database, whatever the store does). A batch
 * at a time until the list is empty; a store that does not answer ends the run, and the next one
 * tries again, so a removal is retried until it is done and never blocks anything else.
 */
import type { Logger } from '../core/index.js';
import type { BodyObjects, ObjectRemovals } from '../core/message/index.js';
import { createPeriodicLoop, type PeriodicLoop } from '../runtime/index.js';

/** Objects removed side by side in one batch. */
const BATCH = 64;

/** One run: answers how many objects were removed. */
export function removeListedObjects(
  removals: ObjectRemovals,
  objects: Pick<BodyObjects, 'remove'>,
): () => Promise<number> {
  return async () => {
    let removed = 0;
    for (;;) {
      const names = removals.listed(BATCH);
      if (names.length === 0) return removed;
      const results = await Promise.allSettled(names.map((name) => objects.remove(name)));
      const done = names.filter((_name, index) => results[index]?.status === 'fulfilled');
      removals.removed(done);
      removed += done.length;
      const failed = results.find((result) => result.status === 'rejected');
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    }
  };
}

/** Each run probes the store first (so /ready sees it answer again), then removes what is listed. */
export function createObjectRemoval(deps: {
  removals: ObjectRemovals;
  objects: Pick<BodyObjects, 'remove' | 'probe'>;
  intervalMs: number;
  log: Logger;
}): PeriodicLoop {
  const run = removeListedObjects(deps.removals, deps.objects);
  return createPeriodicLoop({
    name: 'body-object-removal',
    intervalMs: deps.intervalMs,
    log: deps.log,
    run: async () => {
      if (!(await deps.objects.probe())) return;
      const removed = await run();
      if (removed > 0) deps.log.debug({ removed }, 'body objects removed');
    },
  });
}
