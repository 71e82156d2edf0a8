/**
 * The store as the daemon runs it: the SQLite database (its backups a previous
 * run left half-made removed), the WAL checkpointer thread beside it, and the
 * store's own periodic work (retention, the search index and the erasures' scrub). Stopped last.
 */
import { join } from 'node:path';
import type { Clock, Logger } from '../core/index.js';
import {
  createPeriodicLoop,
  type PeriodicLoop,
  type Service,
  createWorkerPool,
  workerScript,
} from '../runtime/index.js';
import { createBodySealerLoop } from './body-sealer.js';
import type { CheckpointResult, CheckpointTask } from './checkpointer.js';
import { lockDataDir } from './data-dir-lock.js';
import {
  createSqliteStore,
  removeAbandonedSnapshots,
  type SqliteStore,
  type SqliteStoreOptions,
} from './sqlite-store.js';
import { runRetention, type RetentionSettings } from './retention.js';

export const DATABASE_FILE = 'mailproxy.db';
/** How often the checkpointer thread moves committed WAL frames into the database file, and how often when the WAL is not growing. */
const CHECKPOINT_INTERVAL_MS = 100;
const IDLE_CHECKPOINT_INTERVAL_MS = 1000;
const SEARCH_INDEX_INTERVAL_MS = 500;
const SEARCH_INDEX_BATCH = 2000;
const SEARCH_INDEX_BATCHES = 10;

export interface StoreSettings {
  dataDir: string;
  maxDatabaseBytes: number;
  retention: RetentionSettings;
}

export interface StoreService {
  store: SqliteStore;
  /** The database and its checkpointer: stopped last. */
  service: Service;
  retention: PeriodicLoop;
  /** Brings the full-text index of messages up to date (GET /messages?q=). */
  searchIndex: PeriodicLoop;
  /** Seals the bodies an earlier version stored in clear, in the background. */
  bodySealer: PeriodicLoop;
  /** Retention, the search index and the body sealer, stopped with the other loops. */
  loops: Service;
}

/**
 * Checkpoints in a thread of its own (store/checkpointer.ts), every 100 ms while
 * the WAL grows and once a second while it does not: an idle appliance need not
 * wake ten times a second.
 */
function startCheckpointer(path: string, log: Logger): { stop(): Promise<void> } {
  const pool = createWorkerPool<CheckpointTask, CheckpointResult>({
    script: workerScript(new URL('./wal-checkpointer.thread.js', import.meta.url)),
    size: 1,
    name: 'wal-checkpointer',
    log,
    data: { path },
  });
  let lastFrames = -1;
  let quietUntil = 0;
  const loop = createPeriodicLoop({
    name: 'wal-checkpoint',
    intervalMs: CHECKPOINT_INTERVAL_MS,
    log,
    run: async () => {
      if (performance.now() < quietUntil) return;
      const { walFrames } = await pool.run('checkpoint');
      if (walFrames === lastFrames) quietUntil = performance.now() + IDLE_CHECKPOINT_INTERVAL_MS;
      lastFrames = walFrames;
    },
  });
  loop.start();
  return {
    async stop() {
      await loop.stop();
      await pool.close('close');
    },
  };
}

function createSearchIndexLoop(store: SqliteStore, log: Logger): PeriodicLoop {
  return createPeriodicLoop({
    name: 'search-index',
    intervalMs: SEARCH_INDEX_INTERVAL_MS,
    log,
    run: async () => {
      // Batches of a bounded size, so that intake never waits long on the writer; a long backlog takes several ticks.
      for (
        let batch = 0;
        batch < SEARCH_INDEX_BATCHES && store.search.index(SEARCH_INDEX_BATCH) === SEARCH_INDEX_BATCH;
        batch += 1
      );
      // Then the scrub the erasures since the last tick owe (message-erasure.ts), a turn of the event
      // loop between its batches: an erasure of 10,000 messages is scrubbed within the tick after it.
      for (
        let batch = 0;
        batch < SEARCH_INDEX_BATCHES && store.erasure.scrub(SEARCH_INDEX_BATCH) === SEARCH_INDEX_BATCH;
        batch += 1
      )
        await new Promise((resolve) => setImmediate(resolve));
    },
  });
}

export function openStoreService(
  settings: StoreSettings,
  deps: Pick<SqliteStoreOptions, 'secrets' | 'bodies' | 'blindIndex' | 'ids' | 'objects'> & {
    clock: Clock;
    log: Logger;
  },
): StoreService {
  const { log, clock } = deps;
  // Before anything is read or removed: what follows assumes no other daemon runs here.
  const lock = lockDataDir(settings.dataDir);
  const path = join(settings.dataDir, DATABASE_FILE);
  let store: SqliteStore;
  try {
    const abandoned = removeAbandonedSnapshots(path);
    if (abandoned > 0) log.warn({ files: abandoned }, 'removed backup copies a previous run did not finish');
    store = createSqliteStore({
      path,
      secrets: deps.secrets,
      bodies: deps.bodies,
      blindIndex: deps.blindIndex,
      ids: deps.ids,
      objects: deps.objects ?? null,
      now: () => clock.now(),
      checkpointElsewhere: true,
      maxBytes: settings.maxDatabaseBytes,
    });
  } catch (error) {
    lock.release();
    throw error;
  }
  const checkpointer = startCheckpointer(path, log.child({ component: 'store' }));
  if (store.migrated.length > 0) log.info({ versions: store.migrated }, 'database schema migrated');
  // Nothing is being received yet: every spool no message took is left from before a crash.
  const spools = store.spool.sweep(Number.MAX_SAFE_INTEGER);
  if (spools > 0) log.warn({ spools }, 'removed smtp spools of transfers a previous run did not finish');

  const retention = createPeriodicLoop({
    name: 'retention',
    intervalMs: settings.retention.intervalMs,
    log,
    run: () => runRetention(store, settings.retention, clock.now(), log),
  });
  const searchIndex = createSearchIndexLoop(store, log);
  const bodySealer = createBodySealerLoop(store.bodySealer, { clock, log: log.child({ component: 'store' }) });
  let closed = false;
  return {
    store,
    retention,
    searchIndex,
    bodySealer,
    // Periodic store work: nothing of theirs is worth waiting for past their current run.
    loops: {
      name: 'store-loops',
      start: () => {
        retention.start();
        searchIndex.start();
        bodySealer.start();
      },
      stop: async () => {
        await Promise.all([retention.stop(), searchIndex.stop(), bodySealer.stop()]);
      },
    },
    service: {
      name: 'store',
      stop: async () => {
        if (closed) return;
        closed = true;
        await checkpointer.stop();
        store.close();
        lock.release();
      },
    },
  };
}
