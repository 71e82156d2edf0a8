/**
 * Durability of a commit without blocking the thread that commits. Commits run
 * at synchronous = NORMAL: their WAL frames are written, not synced. An fsync
 * of the WAL file on libuv's thread pool then makes everything committed before
 * it durable, which is what synchronous = FULL would have done inside COMMIT.
 * Callers that arrive while an fsync runs share the one after it (theirs may
 * have committed after the running one began).
 *
 * Why this holds: SQLite syncs the WAL before a checkpoint copies it and the
 * database file after, and only restarts the WAL from its start after that, so
 * frames no longer in the WAL are durable in the database file.
 */
import { closeSync, fsync, openSync } from 'node:fs';

export interface WalSync {
  /** Resolves once everything committed before the call is on disk. */
  sync(): Promise<void>;
  close(): void;
}

export function createWalSync(walPath: string): WalSync {
  // Opened at the first sync, which follows a commit, so the file exists; read-only
  // is enough for fsync on Linux, and SQLite keeps the file while it is open.
  let fd: number | null = null;
  let current: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  let closed = false;

  const run = (): Promise<void> => {
    const running = new Promise<void>((resolve, reject) => {
      if (closed) {
        reject(new Error('the WAL sync is closed'));
        return;
      }
      try {
        fd ??= openSync(walPath, 'r');
      } catch (error) {
        reject(error);
        return;
      }
      fsync(fd, (error) => (error ? reject(error) : resolve()));
    });
    current = running;
    const clear = (): void => {
      if (current === running) current = null;
    };
    running.then(clear, clear);
    return running;
  };
  const ignore = (): void => undefined;

  return {
    sync() {
      if (current === null) return run();
      queued ??= current.then(ignore, ignore).then(() => {
        queued = null;
        return run();
      });
      return queued;
    },
    close() {
      if (closed) return;
      closed = true;
      if (fd !== null) closeSync(fd);
    },
  };
}
