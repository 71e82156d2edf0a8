/**
 * A fleet node's replicated spool: every message it has not
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
 *   (sent, failed, expired, deleted, moved). The messages of one commit are
 *   written together, in one record (one replicated write for a whole batch).
 * - Finished messages: their records go together, one purge below the oldest
 *   entry still needed (the watermark). An entry above it (behind a message
 *   that waits long) cannot go yet: its end is recorded instead, so that a
 *   survivor does not send again what this node finished. Both within
 *   PRUNE_DELAY_MS of the end.
 * - A message's writes (and the record of its end) run in order, one chain per
 *   message, so a fast send never leaves a late write above its end.
 * - An erased message (GDPR): every record holding its entries overwritten at
 *   once, the other waiting messages' entries in them written again first.
 * - At the start, every waiting message is written again and stale entries go;
 *   every few moments, every waiting message is checked against the records
 *   the stream lists, and one without an entry written again (spool-check.ts).
 *
 * The writes are spool-writer.ts, the events spool-events.ts, the purge
 * spool-prune.ts, the erasures spool-erasure.ts, the retry round spool-upkeep.ts;
 * this file joins them.
 */
import type { NatsConnection } from '@nats-io/nats-core';
import { type SpoolRows, createSpoolLedger } from '../../core/fleet/index.js';
import type { Clock, Logger } from '../../core/index.js';
import { createPeriodicLoop, type Service } from '../../runtime/index.js';
import type { FleetLink } from '../link/fleet-service.js';
import { createSpoolChains } from './spool-chains.js';
import type { SpoolCheck } from './spool-check.js';
import { createSpoolErasure } from './spool-erasure.js';
import { createSpoolEvents } from './spool-events.js';
import { createSpoolPrune } from './spool-prune.js';
import type { SpoolOwner, SpoolStream } from './spool-stream.js';
import { createSpoolUpkeep, type SpoolPhase } from './spool-upkeep.js';
import { createSpoolWriter } from './spool-writer.js';

/** A message erased on request: its entries leave the cluster at once (spool-erasure.ts). */
const ERASED_EVENT = 'message.erased';

/** The most messages one step of a round reads (and one prune writes again). */
const RECONCILE_PAGE = 1000;

export interface ReplicatedSpoolSettings {
  /** How often entries that could not be written (or removed) are tried again. */
  retryMs: number;
  /** Finished entries kept behind the oldest waiting ones before those are written again higher up (the ledger's default). */
  moveAfterEntries?: number;
  /** How often the waiting messages are checked against the records the stream lists (and any without an entry written again). */
  checkMs: number;
}

/** What the spool asks of its stream (spool-stream.ts on JetStream). */
export type SpoolWrites = Pick<
  SpoolStream,
  | 'putMany'
  | 'putEnded'
  | 'removeBelow'
  | 'holdsObject'
  | 'release'
  | 'pks'
  | 'removeStale'
  | 'subjects'
  | 'lastSeq'
  | 'recordAt'
  | 'recordsHolding'
  | 'eraseRecord'
>;

export interface ReplicatedSpoolDeps {
  link: Pick<FleetLink, 'nodeId' | 'instance' | 'connection' | 'connected'>;
  rows: SpoolRows;
  stream: SpoolWrites;
  /** Resolves when a returning node has given up what a survivor adopted: the spool is reconciled only after. */
  returned: () => Promise<void>;
  /** How many times this node's spool was adopted while it ran (the adopter removed its records): each time, all is written again. */
  adoptedWhileRunning: () => number;
  clock: Clock;
  log: Logger;
  /** Runs `run` after `ms` (setTimeout by default; a model test fires it itself); answers how to cancel it. */
  later?: (run: () => void, ms: number) => () => void;
}

const timeout = (run: () => void, ms: number): (() => void) => {
  const timer = setTimeout(run, ms);
  return () => clearTimeout(timer);
};

export interface ReplicatedSpool extends Service {
  /** The store's events (store.onEvent): a message that finished or waits anew. */
  observe(eventType: string, messagePk: number | null | undefined): void;
  /** Resolves once the cluster holds these waiting messages' entries (or they finished): retried through reconnections and elections. */
  held(pks: readonly number[]): Promise<void>;
  /**
   * Entries waiting to be written (the cluster did not take them yet), and finished messages whose
   * end the cluster does not know yet (a survivor would send them again if this node died now).
   */
  status(): {
    pending: number;
    unrecordedEnds: number;
    held: number;
    lastCheck: SpoolCheck | null;
    repaired: number;
    /** Erased messages whose records are not all overwritten yet. */
    erasing: number;
  };
  /** Checks every waiting message against the stream now; answers how many had to be written again. */
  check(): Promise<number>;
  /** One retry round now (tests; the loop runs on its own). */
  tick(): Promise<void>;
}

/** The cluster's connection, for a write: one that is not reachable now throws. */
const reachableVia = (link: ReplicatedSpoolDeps['link']) => (): NatsConnection => {
  const nc = link.connection();
  if (nc === null || !link.connected()) throw new Error('the fleet cluster is not reachable');
  return nc;
};

/**
 * The spool's parts, joined: the ledger of what the cluster answered, each message's chain of
 * writes, the writer, the store's events, the prune of finished records and the upkeep rounds.
 */
function createSpoolParts(settings: ReplicatedSpoolSettings, deps: ReplicatedSpoolDeps) {
  const { link, rows, stream, log } = deps;
  const owner = (): SpoolOwner => ({ node: link.nodeId, instance: link.instance() });
  const reachable = reachableVia(link);
  /** The sequences the cluster answered: what it holds of each message, what may be purged. */
  const ledger = createSpoolLedger(settings.moveAfterEntries);
  const phase: SpoolPhase = { reconciled: false, stopped: false, rewriting: new Set() };
  /** Each message's work in order, and the answers waiting on it. */
  const chains = createSpoolChains((pk) => phase.rewriting.delete(pk));
  // A message that finishes schedules the prune, which writes through the writer: the one refers to the other when called.
  const writer = createSpoolWriter({
    ledger,
    chains,
    stream,
    rows,
    owner,
    reachable,
    finished: () => pruner.schedule(),
  });
  const events = createSpoolEvents({ rows, ledger, chains, writer });
  const erasure = createSpoolErasure({ ledger, chains, stream, writer, owner, reachable, flush: events.flush, log });
  const connection = () => link.connection();
  const pruner = createSpoolPrune({
    connection,
    stream,
    ledger,
    writer,
    owner,
    ready: () => phase.reconciled && !phase.stopped,
    rewriting: phase.rewriting,
    page: RECONCILE_PAGE,
    later: deps.later ?? timeout,
    log,
  });
  const upkeep = createSpoolUpkeep({
    phase,
    connection,
    connected: () => link.connected(),
    reachable,
    owner,
    ledger,
    chains,
    stream,
    rows,
    writer,
    noted: events.noted,
    prune: pruner.prune,
    erase: erasure.retry,
    returned: deps.returned,
    adoptedWhileRunning: deps.adoptedWhileRunning,
    page: RECONCILE_PAGE,
    checkMs: settings.checkMs,
    clock: deps.clock,
    log,
  });
  return { phase, ledger, chains, events, erasure, pruner, upkeep };
}

export function createReplicatedSpool(settings: ReplicatedSpoolSettings, deps: ReplicatedSpoolDeps): ReplicatedSpool {
  const { phase, ledger, chains, events, erasure, pruner, upkeep } = createSpoolParts(settings, deps);
  const loop = createPeriodicLoop({
    name: 'fleet-spool',
    intervalMs: settings.retryMs,
    log: deps.log,
    clock: deps.clock,
    run: upkeep.round,
  });

  return {
    name: 'fleet-spool',
    observe(eventType, messagePk) {
      // Inside the event's transaction: read after its commit.
      if (messagePk === null || messagePk === undefined) return;
      events.observe(eventType, messagePk);
      if (eventType === ERASED_EVENT) erasure.erased(messagePk);
    },
    held(pks) {
      // The commit's events have their writes under way (or get them now).
      events.flush();
      return chains.settled(pks);
    },
    status: () => ({
      pending: chains.pending.size,
      unrecordedEnds: ledger.counts().unrecordedEnds,
      held: ledger.counts().held,
      lastCheck: upkeep.lastCheck(),
      repaired: upkeep.repaired(),
      erasing: erasure.pending(),
    }),
    check: upkeep.check,
    start() {
      loop.start();
    },
    async stop() {
      phase.stopped = true;
      pruner.cancel();
      await loop.stop();
    },
    tick: () => loop.tick(),
  };
}
