/**
 * `mailproxy keys rotate`, the keys' side: the new master secret and the seals the
 * database is rotated with, and, when the master lives in `secret.key`, the files
 * around the database's one transaction, ordered so that a crash anywhere leaves a
 * daemon that starts and opens everything:
 *
 *   1. the new master is written to secret.key.next (the daemon's ring takes it);
 *   2. the database rewraps and reseals under it, in one transaction;
 *   3. the old master joins secret.key.previous, and secret.key.next becomes secret.key;
 *   4. secret.key.previous goes, as nothing is under any old master any more.
 *
 * Run again after a crash, it takes up the master step 1 wrote and finishes.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { SecretBox } from '../core/index.js';
import type { BodySeal } from '../core/message/index.js';
import { createBodySeal } from './body-seal.js';
import {
  NEXT_KEY_FILE,
  PREVIOUS_KEYS_FILE,
  SECRET_KEY_FILE,
  moveFile,
  readLines,
  removeFile,
  replaceFile,
} from './key-files.js';
import { decodeMasterKey, keyRing, loadMasters, type MasterSources } from './key-material.js';
import { createAesGcmSecretBox } from './secret-box.js';

/** What the database is rotated with (store: StoredKeyRotation). */
export interface KeyRotation {
  /** Wraps with the new master's key-encryption key; opens what any master of the ring wrapped. */
  bodies: BodySeal;
  /** Seals under the new master; opens what any master of the ring sealed. */
  secrets: SecretBox;
  /** The API keys' digest key of the current master, which the database keeps if it keeps none yet. */
  tokenDigest: Buffer;
  /** The blind index key of the current master, which the database keeps if it keeps none yet. */
  blindIndex: Buffer;
  /** The unsubscribe links' key of the current master, which the database keeps if it keeps none yet. */
  unsubscribeLinks: Buffer;
}

export type RotationStart =
  | {
      ok: true;
      /** The ring before the rotation: the current master first. */
      masters: Buffer[];
      next: Buffer;
      /** secret.key.next was there already: an interrupted rotation is being finished. */
      resumed: boolean;
      rotation: KeyRotation;
    }
  | { ok: false; problem: string };

function rotationTo(next: Buffer, masters: Buffer[]): KeyRotation {
  const ring = keyRing([next, ...masters]);
  return {
    bodies: createBodySeal(ring.bodyKeys),
    secrets: createAesGcmSecretBox(ring.encryptionKeys),
    tokenDigest: keyRing(masters).hashKey,
    blindIndex: keyRing(masters).blindKey,
    unsubscribeLinks: keyRing(masters).unsubscribeKey,
  };
}

/** A key given in a file (`--new-key-file`): its one line, base64 of 32 bytes. */
export function readKeyFile(path: string): Buffer {
  const lines = readLines(path);
  if (lines.length !== 1) throw new Error(`${path} must hold one key: 32 random bytes, base64-encoded`);
  return decodeMasterKey(lines[0] ?? '');
}

/** Rotation of a master given in the configuration (`security.secret_key`) to `next`: no file of the data directory changes. */
export function beginConfiguredRotation(sources: MasterSources, next: Buffer): RotationStart {
  const loaded = loadMasters(sources, false);
  if (loaded === null) return { ok: false, problem: 'no secret key is configured' };
  if (loaded.masters[0]?.equals(next) === true)
    return { ok: false, problem: 'the new key is the current security.secret_key: give a new one' };
  return { ok: true, masters: loaded.masters, next, resumed: false, rotation: rotationTo(next, loaded.masters) };
}

/**
 * Step 1 of a rotation of `secret.key`: the new master (`given`, else a random one) written
 * to secret.key.next, or the one an interrupted rotation left there.
 */
export function beginFileRotation(sources: Omit<MasterSources, 'secretKey'>, given: Buffer | null): RotationStart {
  const loaded = loadMasters({ ...sources, secretKey: '' }, false);
  if (loaded === null) return { ok: false, problem: `there is no ${join(sources.dataDir, SECRET_KEY_FILE)} to rotate` };
  const nextFile = join(sources.dataDir, NEXT_KEY_FILE);
  const left = readLines(nextFile);
  let next: Buffer;
  if (left.length > 0) {
    next = decodeMasterKey(left[0] ?? '');
    if (given !== null && !given.equals(next))
      return {
        ok: false,
        problem: `${nextFile} holds the key of an interrupted rotation: run keys rotate without --new-key-file to finish it`,
      };
  } else {
    next = given ?? randomBytes(32);
    if (loaded.masters[0]?.equals(next) === true)
      return { ok: false, problem: 'the new key is the current secret.key: give a new one' };
    replaceFile(nextFile, [next.toString('base64')]);
  }
  return {
    ok: true,
    masters: loaded.masters,
    next,
    resumed: left.length > 0,
    rotation: rotationTo(next, loaded.masters),
  };
}

/**
 * Steps 3 and 4, once the database committed: `old` (the master secret.key held) kept in
 * secret.key.previous until secret.key.next has taken its place, then the previous masters
 * dropped, unless something could not be moved off them (`keepPrevious`).
 */
export function finishFileRotation(dataDir: string, old: Buffer, keepPrevious: boolean): void {
  const previousFile = join(dataDir, PREVIOUS_KEYS_FILE);
  const previous = readLines(previousFile);
  const oldText = old.toString('base64');
  if (!previous.includes(oldText)) replaceFile(previousFile, [...previous, oldText]);
  moveFile(join(dataDir, NEXT_KEY_FILE), join(dataDir, SECRET_KEY_FILE));
  if (!keepPrevious) removeFile(previousFile);
}
