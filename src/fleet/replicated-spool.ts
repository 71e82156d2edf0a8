/**
 * A fleet node's replicated spool (issue 25): every message it has not
 * finished is also held by the cluster (spool-stream.ts), so that losing the
 * node and its disk loses no acknowledged mail; a survivor adopts the entries
 * (spool-adoption.ts).
 *
 * - Intake: a submission is answered only once its messages are committed here
 *   and their entries acknowledged by the cluster (the wrapper below). A
 *   cluster that does not acknowledge within `ackTimeoutMs` does not stop
 *   intake (FLEET.md: a node cut off goes on alone): the answer goes out,
 *   counted and logged, and the entries are written once the cluster answers.
 *   Until then the answer waits through a reconnection or a leader election.
 * - Afterwards: the store's events say, after their commit, which messages
 *   were queued or wait anew (written again) and which finished, however
 *   (sent, failed, expired, deleted, moved). Finished messages' entries go
 *   together: one purge below the oldest entry still needed (the watermark).
 * - A message's writes run in order (one chain per message), so a fast send
 *   never leaves a late write of a finished message's entry above the mark.
 * - At the start, every waiting message is written again and stale entries go.
 */
import { REWRITE_EVENTS, type SpoolRows } from '../core/cluster-spool.js';
import type { Clock } from '../core/clock.js';
import type { StoredTransfer } from '../core/fleet-drain.js';
import type { Logger } from '../core/logger.js';
import { createPeriodicLoop } from '../runtime/periodic-loop.js';
import type { Service } from '../runtime/service.js';
import type { FleetLink } from './fleet-service.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';

const RECONCILE_PAGE = 1000;
/** How soon finished messages' entries go (one request for all that finished meanwhile). */
const PRUNE_DELAY_MS = 100;
/** Finished entries kept behind a long-waiting message before it is written again higher up. */
const MOVE_AFTER_ENTRIES = 10_000;

export interface ReplicatedSpoolSettings {
  /** How often entries that could not be written (or removed) are tried again. */
  retryMs: number;
}

export interface ReplicatedSpoolDeps {
  link: FleetLink;
  rows: SpoolRows;
  stream: SpoolStream;
  /** Resolves when a returning node has given up what a survivor adopted: the spool is reconciled only after. */
  returned: () => Promise<void>;
  clock: Clock;
  log: Logger;
}

export interface ReplicatedSpool extends Service {
  /** The store's events (store.onEvent): a message that finished or waits anew. */
  observe(eventType: string, messagePk: number | null | undefined): void;
  /** Resolves once the cluster holds these waiting messages' entries (or they finished): retried through reconnections and elections. */
  held(pks: readonly number[]): Promise<void>;
  /** Entries waiting to be written (the cluster did not take them yet). */
  status(): { pending: number };
  /** One retry round now (tests; the loop runs on its own). */
  tick(): Promise<void>;
}

export function createReplicatedSpool(settings: ReplicatedSpoolSettings, deps: ReplicatedSpoolDeps): ReplicatedSpool {
  const { link, rows, stream, log } = deps;
  const owner = (): SpoolOwner => ({ node: link.nodeId, instance: link.instance() });
  const chains = new Map<number, Promise<void>>();
  /** The stream sequence of each waiting message's entry, as written by this process. */
  const held = new Map<number, number>();
  /** Writes under way: the sequence each will get is above the highest acknowledged when it was sent. */
  const inFlight = new Map<symbol, number>();
  /** The highest sequence acknowledged for this node's entries. */
  let top = 0;
  /** Entries below this sequence were removed. */
  let removedBelow = 0;
  /** Messages whose entry is not as it should be yet (the cluster did not answer): the loop retries them. */
  const pending = new Set<number>();
  /** Messages whose events were written since the last flush, each with whether its content (or its waiting) is new. */
  const touched = new Map<number, boolean>();
  let reconciled = false;
  /** Waiting messages of an earlier life not yet written again: their old entries sit below, so nothing is pruned before. */
  const rewriting = new Set<number>();
  /** Answers waiting for a message's entry to be held (or for the message to finish). */
  const waiters = new Map<number, Array<() => void>>();
  const settle = (pk: number): void => {
    rewriting.delete(pk);
    const waiting = waiters.get(pk);
    if (waiting === undefined) return;
    waiters.delete(pk);
    for (const resolve of waiting) resolve();
  };
  /** Resolves once the message's entry is held by the cluster, or the message no longer needs one. */
  const heldOrDone = (pk: number): Promise<void> =>
    held.has(pk) && !chains.has(pk)
      ? Promise.resolve()
      : new Promise((resolve) => {
          const waiting = waiters.get(pk);
          if (waiting === undefined) waiters.set(pk, [resolve]);
          else waiting.push(resolve);
        });
  let stopped = false;

  /** Writes the message's entry, or (null) lets it go, after whatever is already under way for it. */
  const sync = (pk: number, entry: StoredTransfer | null): Promise<void> => {
    const run = async (): Promise<void> => {
      if (entry === null) {
        // Finished: its entry goes with the next prune; an object of its own goes now.
        held.delete(pk);
        settle(pk);
        schedulePrune();
        const nc = link.connection();
        if (stream.holdsObject(owner(), pk)) {
          if (nc === null || !link.connected()) throw new Error('the fleet cluster is not reachable');
          await stream.release(nc, owner(), pk);
        }
        return;
      }
      const nc = link.connection();
      if (nc === null || !link.connected()) throw new Error('the fleet cluster is not reachable');
      const token = Symbol(pk);
      inFlight.set(token, top);
      try {
        const seq = await stream.put(nc, owner(), entry);
        held.set(pk, seq);
        top = Math.max(top, seq);
      } finally {
        inFlight.delete(token);
      }
    };
    const next = (chains.get(pk) ?? Promise.resolve()).then(run, run).then(
      () => {
        pending.delete(pk);
        settle(pk);
      },
      (error: unknown) => {
        pending.add(pk);
        throw error;
      },
    );
    chains.set(pk, next);
    void next.catch(() => undefined).finally(() => chains.get(pk) === next && chains.delete(pk));
    return next;
  };

  const syncFromStore = (pks: readonly number[]): Promise<unknown> => {
    const entries = rows.byPks(pks);
    return Promise.allSettled([...entries].map(([pk, entry]) => sync(pk, entry)));
  };

  /**
   * After the events' commit: a message no longer waiting lets its entry go; one whose content
   * is new, or that waits anew, or that this node holds no entry for, has it written.
   */
  const flushTouched = (): void => {
    if (touched.size === 0) return;
    const batch = [...touched];
    touched.clear();
    const entries = rows.byPks(batch.map(([pk]) => pk));
    for (const [pk, rewrite] of batch) {
      const entry = entries.get(pk) ?? null;
      const known = held.has(pk) || chains.has(pk) || pending.has(pk);
      if (entry === null ? known : rewrite || !known) void sync(pk, entry).catch(() => undefined);
    }
  };

  /**
   * The lowest sequence this node may still need: every entry below it belongs to a finished
   * message (or was written again higher up). A write under way will land above the highest
   * sequence acknowledged when it was sent.
   */
  const watermark = (): number => {
    let lowest = top + 1;
    for (const seq of held.values()) lowest = Math.min(lowest, seq);
    for (const floor of inFlight.values()) lowest = Math.min(lowest, floor + 1);
    return lowest;
  };

  /**
   * Finished messages' entries go together, below the watermark. A message that waits long holds
   * the watermark back: once the entries behind it are many, the oldest waiting ones are written
   * again (replacing themselves: one entry per subject), so the stream stays the size of the queue.
   */
  const prune = async (): Promise<void> => {
    const nc = link.connection();
    if (nc === null) return;
    const below = watermark();
    if (below > removedBelow) {
      await stream.removeBelow(nc, owner(), below);
      removedBelow = below;
    }
    if (top - below > Math.max(MOVE_AFTER_ENTRIES, 4 * held.size)) {
      const oldest = [...held].sort((a, b) => a[1] - b[1]).slice(0, RECONCILE_PAGE);
      await syncFromStore(oldest.map(([pk]) => pk));
    }
  };

  /**
   * Soon after a message finishes: its entry is what a survivor would send again if this node
   * died now, so it goes within PRUNE_DELAY_MS, together with whatever else finished meanwhile.
   */
  let pruning: NodeJS.Timeout | null = null;
  const schedulePrune = (): void => {
    if (pruning !== null || !reconciled || stopped) return;
    pruning = setTimeout(() => {
      void (rewriting.size === 0 ? prune() : Promise.resolve())
        .catch((error: unknown) => log.warn({ err: error }, 'could not remove finished spool entries; retrying'))
        .finally(() => (pruning = null));
    }, PRUNE_DELAY_MS);
  };

  /** At the start: every waiting message written again (their sequences known), stale entries' objects removed, the rest pruned below. */
  const reconcile = async (): Promise<void> => {
    const nc = link.connection();
    if (nc === null) return;
    const stored = new Set(await stream.pks(nc, owner()));
    const waiting = new Set<number>();
    for (let after = 0; ;) {
      const page = rows.waitingPks(after, RECONCILE_PAGE);
      for (const pk of page) waiting.add(pk);
      if (page.length < RECONCILE_PAGE) break;
      after = page.at(-1) as number;
    }
    // Left by an earlier life of this node (it stopped between a message's end and its entry's removal).
    const stale = [...stored].filter((pk) => !waiting.has(pk));
    for (const pk of stale) await stream.removeStale(nc, owner(), pk);
    for (const pk of waiting) {
      pending.add(pk);
      rewriting.add(pk);
    }
    reconciled = true;
    log.info({ entries: stored.size, waiting: waiting.size, removed: stale.length }, 'replicated spool reconciled');
  };

  const loop = createPeriodicLoop({
    name: 'fleet-spool',
    intervalMs: settings.retryMs,
    log,
    clock: deps.clock,
    run: async () => {
      if (stopped || link.connection() === null || !link.connected()) return;
      if (!reconciled) {
        await deps.returned();
        await reconcile();
      }
      while (pending.size > 0 && !stopped) {
        const before = pending.size;
        await syncFromStore([...pending].slice(0, RECONCILE_PAGE));
        if (pending.size >= before) break;
      }
      // Not before every waiting message of an earlier life is written again: their old entries sit below.
      if (rewriting.size === 0) await prune();
    },
  });

  return {
    name: 'fleet-spool',
    observe(eventType, messagePk) {
      if (messagePk === null || messagePk === undefined) return;
      // Inside the event's transaction: read after its commit.
      if (touched.size === 0) setImmediate(flushTouched);
      touched.set(messagePk, (touched.get(messagePk) ?? false) || REWRITE_EVENTS.has(eventType));
    },
    held(pks) {
      // The commit's events have their writes under way (or get them now).
      flushTouched();
      return Promise.all(pks.map(heldOrDone)).then(() => undefined);
    },
    status: () => ({ pending: pending.size }),
    start() {
      loop.start();
    },
    async stop() {
      stopped = true;
      if (pruning !== null) clearTimeout(pruning);
      await loop.stop();
    },
    tick: () => loop.tick(),
  };
}
