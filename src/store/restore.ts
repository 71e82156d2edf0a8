/**
 * Putting a backup in place of the database, offline. Nothing is deleted: the
 * current database and its -wal/-shm are renamed aside under one name, so the
 * set still opens together. The backup arrives whole or not at all (a copy
 * beside the target, synced, then renamed over it).
 */
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { checkDatabaseFile, databaseInUse, type DatabaseCheckCode } from './backup.js';

export interface RestoreRequest {
  /** The backup file. */
  source: string;
  /** The database path the daemon opens (data_dir/mailproxy.db). */
  target: string;
  /** Names the set moved aside (`<target>.before-restore-<stamp>`). */
  stamp: string;
  /** Replace an existing database; without it an existing one is refused. */
  force: boolean;
}

export type RestoreResult =
  | {
      ok: true;
      restored: string;
      movedAside: string[];
      schemaVersion: number;
      supportedVersion: number;
      messages: number;
      bytes: number;
    }
  | { ok: false; code: DatabaseCheckCode | 'DATABASE_IN_USE' | 'DATABASE_EXISTS'; problem: string };

const SIDE_FILES = ['-wal', '-shm', '-journal'];

export function restoreDatabase(request: RestoreRequest): RestoreResult {
  const { source, target } = request;
  const check = checkDatabaseFile(source);
  if (!check.ok) return check;
  if (databaseInUse(target)) {
    return {
      ok: false,
      code: 'DATABASE_IN_USE',
      problem: `${target} is open in another process (is the daemon running?): stop it first`,
    };
  }
  const present = ['', ...SIDE_FILES].filter((suffix) => existsSync(target + suffix));
  if (present.includes('') && !request.force) {
    return {
      ok: false,
      code: 'DATABASE_EXISTS',
      problem: `${target} exists: pass --force to move it aside and restore over it`,
    };
  }

  // A fresh data directory is created as the daemon would create it (openDatabase, loadKeyMaterial).
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  const copy = join(dirname(target), `.${basename(target)}.restore-${request.stamp}.tmp`);
  try {
    copyFileSync(source, copy);
    syncFile(copy);
  } catch (error) {
    rmSync(copy, { force: true });
    throw error;
  }
  // Moved aside only once the copy is safely written: a failed copy leaves the current database as it was.
  const aside = `${target}.before-restore-${request.stamp}`;
  const movedAside = present.map((suffix) => {
    renameSync(target + suffix, aside + suffix);
    return aside + suffix;
  });
  renameSync(copy, target);
  syncFile(dirname(target));
  return {
    ok: true,
    restored: target,
    movedAside,
    schemaVersion: check.schemaVersion,
    supportedVersion: check.supportedVersion,
    messages: check.messages,
    bytes: check.bytes,
  };
}

/** fsync a file or a directory (a rename is durable once its directory is synced). */
export function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
