/**
 * The key files of the data directory, written so that a crash at any point
 * leaves either the old file or the new one whole, never a torn or empty one:
 * `secret.key` (the master secret), `secret.key.next` (the master a rotation is
 * moving to, until it takes secret.key's place) and `secret.key.previous` (masters
 * replaced while something may still be wrapped by them, one per line).
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

export const SECRET_KEY_FILE = 'secret.key';
export const NEXT_KEY_FILE = 'secret.key.next';
export const PREVIOUS_KEYS_FILE = 'secret.key.previous';

export function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A private temporary file beside `path` holding `text`, synced: ready to be linked or renamed into place. */
function writeTemporary(path: string, text: string): string {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return temporary;
}

/**
 * The file's value, or a new one written whole: to a temporary file, synced, then
 * linked into place, so that a crash leaves either no file or the complete one.
 * (Written in place, a kill between open and write left an empty secret.key,
 * and the daemon refused to start.) link() fails if another process created the
 * file meanwhile; its value is then the one read.
 */
export function readOrCreate(path: string, make: () => string): { value: string; created: boolean } {
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), created: false };
  const value = make();
  const temporary = writeTemporary(path, `${value}\n`);
  try {
    linkSync(temporary, path);
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
    return { value: readFileSync(path, 'utf8').trim(), created: false };
  } finally {
    unlinkSync(temporary);
  }
  syncDirectory(dirname(path));
  return { value, created: true };
}

/** Puts `lines` in place of the file (mode 0600) in one rename, made durable. */
export function replaceFile(path: string, lines: readonly string[]): void {
  renameSync(writeTemporary(path, lines.map((line) => `${line}\n`).join('')), path);
  syncDirectory(dirname(path));
}

/** Moves `from` over `to` in one rename, made durable. */
export function moveFile(from: string, to: string): void {
  renameSync(from, to);
  syncDirectory(dirname(to));
}

export function removeFile(path: string): void {
  if (!existsSync(path)) return;
  unlinkSync(path);
  syncDirectory(dirname(path));
}

/** The file's non-empty lines, trimmed; none when there is no file. */
export function readLines(path: string): string[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
