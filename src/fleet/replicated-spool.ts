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
 * - Afterwards: a message that finishes (sent, failed, deleted, moved) has its
 *   entry removed; one that waits anew (resent, adopted) has it written. The
 *   store's events say which, after their commit.
 * - A message's writes and its removal run in order (one chain per message), so a
 *   fast send never leaves the entry of a finished message behind its removal.
 * - At the start, the spool is reconciled with the queue (both ways).
 */
import { SPOOL_EVENTS, type SpoolRows } from '../core/cluster-spool.js';
import type { Clock } from '../core/clock.js';
import type { StoredTransfer } from '../core/fleet-drain.js';
import type { Logger } from '../core/logger.js';
import type { Principal } from '../core/principal.js';
import type { SubmissionItem, SubmissionService } from '../core/submission-service.js';
import { createPeriodicLoop } from '../runtime/periodic-loop.js';
import type { Service } from '../runtime/service.js';
import { deadline } from '../runtime/within.js';
import type { FleetLink } from './fleet-service.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';

const RECONCILE_PAGE = 1000;
/** How soon finished messages' entries go (one request for all that finished meanwhile). */
const PRUNE_DELAY_MS = 100;
/** Finished entries kept behind a long-waiting message before it is written again higher up. */
const MOVE_AFTER_ENTRIES = 10_000;

export interface ReplicatedSpoolSettings {
  /** How long an answer waits for the cluster's acknowledgement before it goes out on the local commit alone. */
  ackTimeoutMs: number;
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
  /** Wraps the submission service: answered once the cluster holds the entries. */
  submissions(inner: SubmissionService): SubmissionService;
  /** Answers given before the cluster held the entries, and entries waiting to be written or removed. */
  status(): { answeredUnreplicated: number; pending: number };
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
  const touched = new Set<number>();
  let answeredUnreplicated = 0;
  let reconciled = false;
  let stopped = false;

  /** Writes the message's entry, or (null) lets it go, after whatever is already under way for it. */
  const sync = (pk: number, entry: StoredTransfer | null): Promise<void> => {
    const run = async (): Promise<void> => {
      const nc = link.connection();
      if (nc === null || !link.connected()) throw new Error('the fleet cluster is not reachable');
      if (entry === null) {
        held.delete(pk);
        schedulePrune();
        await stream.release(nc, owner(), pk);
        return;
      }
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
      () => void pending.delete(pk),
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

  const flushTouched = (): void => {
    const pks = [...touched];
    touched.clear();
    void syncFromStore(pks);
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
      void (pending.size === 0 ? prune() : Promise.resolve())
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
    for (const pk of waiting) pending.add(pk);
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
      if (pending.size === 0) await prune();
    },
  });

  /** The tenant each accepted item was queued in, with its client ids. */
  const acceptedIds = (principal: Principal, items: readonly SubmissionItem[], rejected: ReadonlySet<number>): Map<string, string[]> => {
    const byTenant = new Map<string, string[]>();
    for (const item of items) {
      const tenantId = principal.kind === 'tenant' ? principal.tenantId : item.tenantId;
      if (rejected.has(item.index) || item.id === null || tenantId === undefined) continue;
      const ids = byTenant.get(tenantId);
      if (ids === undefined) byTenant.set(tenantId, [item.id]);
      else ids.push(item.id);
    }
    return byTenant;
  };

  return {
    name: 'fleet-spool',
    observe(eventType, messagePk) {
      if (messagePk === null || messagePk === undefined || !SPOOL_EVENTS.has(eventType)) return;
      // Inside the event's transaction: read after its commit.
      if (touched.size === 0) setImmediate(flushTouched);
      touched.add(messagePk);
    },
    submissions: (inner) => ({
      async enqueue(principal, items, defaultPriority, correlationId, alongside) {
        const result = await inner.enqueue(principal, items, defaultPriority, correlationId, alongside);
        const rejected = new Set(result.rejected.map((rejection) => rejection.index));
        const entries = [...acceptedIds(principal, items, rejected)].flatMap(([tenantId, ids]) => rows.byClientIds(tenantId, ids));
        if (entries.length === 0) return result;
        const held = await deadline(
          Promise.all(entries.map((entry) => sync(entry.origin_pk, entry))),
          settings.ackTimeoutMs,
          'the cluster acknowledging the spool entries',
        ).then(
          () => true,
          () => false,
        );
        if (!held) {
          answeredUnreplicated += 1;
          log.warn({ messages: entries.length }, 'answered before the cluster held the messages: replicated once it answers');
        }
        return result;
      },
    }),
    status: () => ({ answeredUnreplicated, pending: pending.size }),
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
