/**
 * Opening the store for the daemon: key material, the SQLite store, and the
 * WAL checkpointer thread beside it.
 */
import { join } from 'node:path';
import type { Clock, IdSource } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Config } from '../config/index.js';
import { createPeriodicLoop } from '../runtime/index.js';
import { createWorkerPool, workerScript } from '../runtime/worker-pool.js';
import { loadKeyMaterial } from '../security/key-material.js';
import { createAesGcmSecretBox } from '../security/secret-box.js';
import type { CheckpointResult } from '../store/checkpointer.js';
import { createSqliteStore, removeAbandonedSnapshots, type SqliteStore } from '../store/index.js';
import type { CheckpointTask } from '../workers/wal-checkpointer.js';

export const DATABASE_FILE = 'mailproxy.db';
/** How often the checkpointer thread moves committed WAL frames into the database file, and how often when the WAL is not growing. */
const CHECKPOINT_INTERVAL_MS = 100;
const IDLE_CHECKPOINT_INTERVAL_MS = 1000;

/**
 * Checkpoints in a thread of its own (store/checkpointer.ts), every 100 ms while
 * the WAL grows and once a second while it does not: an idle appliance need not
 * wake ten times a second.
 */
function startCheckpointer(path: string, log: Logger): { stop(): Promise<void> } {
  const pool = createWorkerPool<CheckpointTask, CheckpointResult>({
    script: workerScript(import.meta.url, '../workers/wal-checkpointer.js'),
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

export function openStore(config: Readonly<Config>, log: Logger, ids: IdSource, clock: Clock): { store: SqliteStore; checkpointer: { stop(): Promise<void> }; adminToken: string; hashKey: Buffer } {
  const keys = loadKeyMaterial({ dataDir: config.data_dir, secretKey: config.security.secret_key, adminToken: config.http.admin_token });
  if (keys.created.secretKeyFile !== undefined) {
    log.warn({ path: keys.created.secretKeyFile }, 'secret key created: back it up, stored credentials cannot be read without it');
  }
  if (keys.created.adminTokenFile !== undefined) {
    log.warn({ path: keys.created.adminTokenFile }, 'admin token created: read it from this file and send it as Authorization: Bearer <token>');
  }
  const databasePath = join(config.data_dir, DATABASE_FILE);
  const abandoned = removeAbandonedSnapshots(databasePath);
  if (abandoned > 0) log.warn({ files: abandoned }, 'removed backup copies a previous run did not finish');
  const store = createSqliteStore({ path: databasePath, secrets: createAesGcmSecretBox(keys.encryptionKey), ids, now: () => clock.now(), checkpointElsewhere: true, maxBytes: config.max_database_mb * 1024 * 1024 });
  const checkpointer = startCheckpointer(databasePath, log.child({ component: 'store' }));
  if (store.migrated.length > 0) log.info({ versions: store.migrated }, 'database schema migrated');
  return { store, checkpointer, adminToken: keys.adminToken, hashKey: keys.hashKey };
}

