import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN_FILE, SECRET_KEY_FILE, loadKeyMaterial } from './key-material.js';

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
    expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
    expect(second.hashKey.equals(first.hashKey)).toBe(true);
  });

  it('is not stopped by a temporary file a crash left behind', () => {
    const dataDir = fresh();
    writeFileSync(join(dataDir, `${SECRET_KEY_FILE}.${process.pid}.tmp`), '');
    const keys = loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' });
    expect(keys.encryptionKey).toHaveLength(32);
    expect(loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' }).encryptionKey.equals(keys.encryptionKey)).toBe(
      true,
    );
  });

  it('refuses an empty secret key file rather than making a new key that would orphan the stored credentials', () => {
    const dataDir = fresh();
    writeFileSync(join(dataDir, SECRET_KEY_FILE), '');
    expect(() => loadKeyMaterial({ dataDir, secretKey: '', adminToken: '' })).toThrow(/32 bytes/);
  });
});
