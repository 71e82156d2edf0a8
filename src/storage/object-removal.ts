/**
 * Removes from the body store the objects no message needs any more (their keys are destroyed
 * already: erasure and retention take effect in the database, whatever the store does). A batch
 * at a time until the list is empty; a store that does not answer ends the run, and the next one
 * tries again, so a removal is retried until it is done and never blocks anything else.
 */
import type { Clock, Logger } from '../core/index.js';
import type { BodyObjects, MessageSpool, BodyObjectRows } from '../core/message/index.js';
import { createPeriodicLoop, type PeriodicLoop } from '../runtime/index.js';

/** Objects removed side by side in one batch. */
const BATCH = 64;
/** Expired files one run takes (a short transaction); the rest wait for the next run. */
const EXPIRY_BATCH = 500;

/** One run: answers how many objects were removed. */
export function removeListedObjects(
  removals: BodyObjectRows,
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

/**
 * The sweep of objects no message names: written for a submission that was then not committed
 * (the daemon stopped between the write and the commit, or the commit failed). Their keys were
 * never stored, so they can never be read: only their space is reclaimed. An object is looked at
 * once it is older than `graceMs`, by which time its submission has long been committed or refused.
 */
export function sweepUnnamedObjects(
  removals: Pick<BodyObjectRows, 'unnamed' | 'forgetHandedGone'>,
  objects: Pick<BodyObjects, 'list' | 'remove'>,
  graceMs: number,
): (now: number) => Promise<number> {
  return async (now) => {
    const found = await objects.list(now - graceMs);
    // An object handed over before then was written before then too: were it still there, it would be listed.
    removals.forgetHandedGone(found, now - graceMs);
    let removed = 0;
    for (let at = 0; at < found.length; at += BATCH) {
      const unnamed = removals.unnamed(found.slice(at, at + BATCH));
      await Promise.all(unnamed.map((name) => objects.remove(name)));
      removed += unnamed.length;
    }
    return removed;
  };
}

/** How old an object must be before the sweep asks whether a message names it, and how often it sweeps. */
const SWEEP_GRACE_MS = 3_600_000;
const SWEEP_EVERY_MS = 3_600_000;

/**
 * Each run removes the spools of abandoned transfers, expires the offloaded files whose links
 * expired, probes the store (so /ready sees it answer again), then removes what is listed; the first run after the start, and one an hour after, also
 * sweeps what no message names.
 */
export function createObjectRemoval(deps: {
  removals: BodyObjectRows;
  objects: Pick<BodyObjects, 'remove' | 'probe' | 'list'>;
  /** The spool beside the store, and how old a spool no message took is when it was abandoned. */
  spool: Pick<MessageSpool, 'sweep'>;
  abandonedSpoolMs: number;
  /** Takes key and object from offloaded files whose links expired (store/message-files.ts), a batch at a time. */
  expireFiles: (now: number, limit: number) => number;
  intervalMs: number;
  clock: Clock;
  log: Logger;
}): PeriodicLoop {
  const { clock, log } = deps;
  const run = removeListedObjects(deps.removals, deps.objects);
  const sweep = sweepUnnamedObjects(deps.removals, deps.objects, SWEEP_GRACE_MS);
  let sweepAt = 0;
  return createPeriodicLoop({
    name: 'body-object-removal',
    intervalMs: deps.intervalMs,
    clock,
    log,
    run: async () => {
      const abandoned = deps.spool.sweep(clock.now() - deps.abandonedSpoolMs);
      if (abandoned > 0) log.info({ spools: abandoned }, 'removed smtp spools of transfers that were abandoned');
      // In the database first, whatever the store does: an expired link is gone once its key is.
      const expired = deps.expireFiles(clock.now(), EXPIRY_BATCH);
      if (expired > 0) log.info({ files: expired }, 'offloaded attachments whose links expired: keys destroyed');
      if (!(await deps.objects.probe())) return;
      const removed = await run();
      if (removed > 0) log.debug({ removed }, 'body objects removed');
      const now = clock.now();
      if (now < sweepAt) return;
      sweepAt = now + SWEEP_EVERY_MS;
      const swept = await sweep(now);
      if (swept > 0) log.info({ objects: swept }, 'removed body objects no message names (submissions not committed)');
    },
  });
}
