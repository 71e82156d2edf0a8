/**
 * Key material in the data directory. The master secret comes from config or
 * `secret.key`; the admin token from config or `admin-token`. Files are created
 * on first start with mode 0600 and never printed. Purpose keys are derived
 * with HKDF so one master secret never serves two purposes.
 *
 * The master is a ring: the current one (which seals and wraps), then the ones
 * `mailproxy keys rotate` may not have finished moving away from: a
 * `secret.key.next` a rotation left, `security.previous_secret_keys`, and
 * `secret.key.previous`. Anything sealed under any of them opens.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { hkdfSync, randomBytes } from 'node:crypto';
import { keyEncryptionKey, type KeyEncryptionKey } from './body-seal.js';
import { NEXT_KEY_FILE, PREVIOUS_KEYS_FILE, SECRET_KEY_FILE, readLines, readOrCreate } from './key-files.js';

export { SECRET_KEY_FILE } from './key-files.js';

/** What each master of a ring gives: the current master's keys first. */
export interface KeyRing {
  /** The master secrets, the current one first. */
  masters: Buffer[];
  /** AES-256-GCM keys for secrets at rest. */
  encryptionKeys: Buffer[];
  /** Key-encryption keys of message bodies' data keys. */
  bodyKeys: KeyEncryptionKey[];
  /**
   * HMAC key for API key and token digests, from the current master. A database a
   * rotation went through keeps the one its API keys were digested with (store: token digest key).
   */
  hashKey: Buffer;
  /**
   * AES key of the blind index (keyed digests of addresses and words), from the current master. Like
   * the hash key, a database a rotation went through keeps the one its digests were made with.
   */
  blindKey: Buffer;
  /**
   * AES key of one-click unsubscribe links, from the current master. Links live in mail already
   * delivered, so a database a rotation went through keeps the one they were sealed with.
   */
  unsubscribeKey: Buffer;
}

export interface KeyMaterial extends KeyRing {
  adminToken: string;
  /** Files created on this start, so the operator can be told where to look. */
  created: { secretKeyFile?: string; adminTokenFile?: string };
}

export const ADMIN_TOKEN_FILE = 'admin-token';

export function decodeMasterKey(text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes, base64-encoded');
  return key;
}

const decodeIn = (file: string, text: string): Buffer => {
  try {
    return decodeMasterKey(text);
  } catch {
    throw new Error(`${file} holds a key that is not 32 bytes, base64-encoded`);
  }
};

const derive = (master: Buffer, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `mailproxy:${purpose}`, 32));

/** The purpose keys of each master, in the ring's order (duplicates dropped). */
export function keyRing(masters: readonly Buffer[]): KeyRing {
  const unique = masters.filter((master, index) => masters.findIndex((other) => other.equals(master)) === index);
  const current = unique[0];
  if (current === undefined) throw new Error('a key ring needs a master secret');
  return {
    masters: unique,
    encryptionKeys: unique.map((master) => derive(master, 'secrets-at-rest')),
    bodyKeys: unique.map((master) => keyEncryptionKey(derive(master, 'body-keys'))),
    hashKey: derive(current, 'token-digest'),
    blindKey: derive(current, 'blind-index'),
    unsubscribeKey: derive(current, 'unsubscribe-links'),
  };
}

export interface MasterSources {
  dataDir: string;
  /** `security.secret_key`; empty: `secret.key` in the data directory. */
  secretKey: string;
  /** Master secrets replaced by `mailproxy keys rotate`, kept until every data key is rewrapped. */
  previousSecretKeys?: readonly string[];
}

/**
 * The ring of master secrets. `create`: a missing `secret.key` is made (the daemon's first
 * start); otherwise a missing one answers null (nothing to rotate).
 */
export function loadMasters(
  sources: MasterSources,
  create: boolean,
): { masters: Buffer[]; createdFile?: string } | null {
  const file = join(sources.dataDir, SECRET_KEY_FILE);
  let current: Buffer;
  let createdFile: string | undefined;
  if (sources.secretKey !== '') {
    current = decodeMasterKey(sources.secretKey);
  } else {
    if (!create && !existsSync(file)) return null;
    const read = readOrCreate(file, () => randomBytes(32).toString('base64'));
    if (read.created) createdFile = file;
    current = decodeMasterKey(read.value);
  }
  const fromFile = (name: string): Buffer[] => {
    const path = join(sources.dataDir, name);
    return readLines(path).map((line) => decodeIn(path, line));
  };
  const masters = [
    current,
    ...fromFile(NEXT_KEY_FILE),
    ...(sources.previousSecretKeys ?? []).map(decodeMasterKey),
    ...fromFile(PREVIOUS_KEYS_FILE),
  ];
  return createdFile === undefined ? { masters } : { masters, createdFile };
}

export function loadKeyMaterial(options: MasterSources & { adminToken: string }): KeyMaterial {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const created: KeyMaterial['created'] = {};
  const loaded = loadMasters(options, true);
  if (loaded === null) throw new Error('no master secret');
  if (loaded.createdFile !== undefined) created.secretKeyFile = loaded.createdFile;

  let adminToken = options.adminToken;
  if (adminToken === '') {
    const file = join(options.dataDir, ADMIN_TOKEN_FILE);
    const read = readOrCreate(file, () => `mpa_${randomBytes(32).toString('base64url')}`);
    if (read.created) created.adminTokenFile = file;
    adminToken = read.value;
    if (adminToken.length < 16) throw new Error(`${file} holds no usable admin token (at least 16 characters)`);
  }

  return { ...keyRing(loaded.masters), adminToken, created };
}
