import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NEXT_KEY_FILE, PREVIOUS_KEYS_FILE } from './key-files.js';
import { ADMIN_TOKEN_FILE, SECRET_KEY_FILE, keyRing, loadKeyMaterial } from './key-material.js';

describe('key material in the data directory', () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('creates both files whole, private, and reads the same keys back on the next start', () => {
    const dataDir = fresh();
    const first = loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' });
    expect(first.created).toEqual({
      secretKeyFile: join(dataDir, SECRET_KEY_FILE),
      adminTokenFile: join(dataDir, ADMIN_TOKEN_FILE),
    });
    for (const file of [SECRET_KEY_FILE, ADMIN_TOKEN_FILE])
      expect(statSync(join(dataDir, file)).mode & 0o777).toBe(0o600);
    // Nothing but the two files: the temporary ones they were written through are gone.
    expect(readdirSync(dataDir).sort()).toEqual([ADMIN_TOKEN_FILE, SECRET_KEY_FILE]);

    const second = loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' });
    expect(second.created).toEqual({});
    expect(second.adminToken).toBe(first.adminToken);
    expect(second.encryptionKeys[0]?.equals(first.encryptionKeys[0] as Buffer)).toBe(true);
    expect(second.hashKey.equals(first.hashKey)).toBe(true);
  });

  it('is not stopped by a temporary file a crash left behind', () => {
    const dataDir = fresh();
    writeFileSync(join(dataDir, `${SECRET_KEY_FILE}.${process.pid}.tmp`), '');
    const keys = loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' });
    expect(keys.encryptionKeys[0]).toHaveLength(32);
    expect(
      loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' }).encryptionKeys[0]?.equals(
        keys.encryptionKeys[0] as Buffer,
      ),
    ).toBe(true);
  });

  it('refuses an empty secret key file rather than making a new key that would orphan the stored credentials', () => {
    const dataDir = fresh();
    writeFileSync(join(dataDir, SECRET_KEY_FILE), '');
    expect(() => loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' })).toThrow(/32 bytes/);
  });

  it('holds, after the current key, the ones a rotation may not have finished moving away from', () => {
    const dataDir = fresh();
    const [current, next, configured, previous] = Array.from({ length: 4 }, () => randomBytes(32));
    const text = (key: Buffer | undefined): string => (key as Buffer).toString('base64');
    writeFileSync(join(dataDir, SECRET_KEY_FILE), `${text(current)}\n`);
    writeFileSync(join(dataDir, NEXT_KEY_FILE), `${text(next)}\n`);
    writeFileSync(join(dataDir, PREVIOUS_KEYS_FILE), `${text(previous)}\n${text(current)}\n`);
    const keys = loadKeyMaterial({ dataDir, secretKey: '', adminToken: '', previousSecretKeys: [text(configured)] });
    // The current key first (it seals and wraps), each key once.
    expect(keys.masters.map(text)).toEqual([current, next, configured, previous].map(text));
    expect(keys.bodyKeys).toHaveLength(4);
    expect(keys.encryptionKeys).toHaveLength(4);
    // API keys are digested with the current key's derivation (unless the database kept another).
    expect(keys.hashKey.equals(keyRing([current as Buffer]).hashKey)).toBe(true);
  });

  it('names the file that holds a key it cannot read', () => {
    const dataDir = fresh();
    writeFileSync(join(dataDir, PREVIOUS_KEYS_FILE), 'not a key\n');
    expect(() => loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' })).toThrow(PREVIOUS_KEYS_FILE);
  });
});
