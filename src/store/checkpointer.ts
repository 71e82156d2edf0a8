/**
 * Copies committed WAL frames into the database file from a connection of its
 * own, so that the writer's commits never pay for it: run in a worker thread
 * (wal-checkpointer.thread.ts), it takes that work off the intake's main
 * thread. PASSIVE never waits for, nor blocks, the
 * writer; the writer restarts the WAL from its beginning once a checkpoint has
 * caught up with it.
 */
import Database from 'better-sqlite3';

/** WAL pages after which the writer checkpoints by itself, if the checkpointer is behind or gone. */
export const WRITER_CHECKPOINT_PAGES = 16_384;

/** What the checkpointer thread is asked: a checkpoint, or a last one and close. */
export type CheckpointTask = 'checkpoint' | 'close';

export interface CheckpointResult {
  /** Frames in the WAL, and how many of them are now in the database file. */
  walFrames: number;
  checkpointed: number;
}

export interface Checkpointer {
  checkpoint(): CheckpointResult;
  close(): void;
}

export function openCheckpointer(path: string): Checkpointer {
  const db = new Database(path, { fileMustExist: true });
  db.pragma('busy_timeout = 1000');
  const run = db.prepare<[], { busy: number; log: number; checkpointed: number }>('PRAGMA wal_checkpoint(PASSIVE)');
  return {
    checkpoint() {
      const row = run.get();
      return { walFrames: row?.log ?? 0, checkpointed: row?.checkpointed ?? 0 };
    },
    close: () => db.close(),
  };
}
