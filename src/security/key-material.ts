/**
 * Key material in the data directory. The master secret comes from config or
 * `secret.key`; the admin token from config or `admin-token`. Files are created
 * on first start with mode 0600 and never printed. Purpose keys are derived
 * with HKDF so one master secret never serves two purposes.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { hkdfSync, randomBytes } from 'node:crypto';
import { keyEncryptionKey, type KeyEncryptionKey } from './body-seal.js';

export interface KeyMaterial {
  /** AES-256-GCM key for secrets at rest. */
  encryptionKey: Buffer;
  /** HMAC key for API key and token digests. */
  hashKey: Buffer;
  /** Key-encryption keys of message bodies' data keys: the current one, then those of `previousSecretKeys`. */
  bodyKeys: KeyEncryptionKey[];
  adminToken: string;
  /** Files created on this start, so the operator can be told where to look. */
  created: { secretKeyFile?: string; adminTokenFile?: string };
}

export const SECRET_KEY_FILE = 'secret.key';
export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * The file's value, or a new one written whole: to a temporary file, synced, then
 * linked into place, so that a crash leaves either no file or the complete one.
 * (Written in place, a kill between open and write left an empty secret.key,
 * and the daemon refused to start.) link() fails if another process created the
 * file meanwhile; its value is then the one read.
 */
function readOrCreate(path: string, make: () => string): { value: string; created: boolean } {
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), created: false };
  const value = make();
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600);
  try {
    writeSync(fd, `${value}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
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

function syncDirectory(directory: string): void {
  const fd = openSync(directory, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function decodeMasterKey(text: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error('the secret key must be 32 bytes, base64-encoded');
  return key;
}

const derive = (master: Buffer, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `mailproxy:${purpose}`, 32));

export function loadKeyMaterial(options: {
  dataDir: string;
  secretKey: string;
  adminToken: string;
  /** Master secrets replaced by `mailproxy keys rotate`, kept until every data key is rewrapped. */
  previousSecretKeys?: readonly string[];
}): KeyMaterial {
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const created: KeyMaterial['created'] = {};

  let masterText = options.secretKey;
  if (masterText === '') {
    const file = join(options.dataDir, SECRET_KEY_FILE);
    const read = readOrCreate(file, () => randomBytes(32).toString('base64'));
    if (read.created) created.secretKeyFile = file;
    masterText = read.value;
  }
  const master = decodeMasterKey(masterText);

  let adminToken = options.adminToken;
  if (adminToken === '') {
    const file = join(options.dataDir, ADMIN_TOKEN_FILE);
    const read = readOrCreate(file, () => `mpa_${randomBytes(32).toString('base64url')}`);
    if (read.created) created.adminTokenFile = file;
    adminToken = read.value;
    if (adminToken.length < 16) throw new Error(`${file} holds no usable admin token (at least 16 characters)`);
  }

  return {
    encryptionKey: derive(master, 'secrets-at-rest'),
    hashKey: derive(master, 'token-digest'),
    bodyKeys: [master, ...(options.previousSecretKeys ?? []).map(decodeMasterKey)].map((secret) =>
      keyEncryptionKey(derive(secret, 'body-keys')),
    ),
    adminToken,
    created,
  };
}
