/**
 * withSecureDelete (database.ts): the erasure, the scrub, retention's removal of shredded bodies
 * and the background sealing delete with secure_delete ON, and the database goes back to FAST
 * after (a restored `2` would read as ON, and every later delete would zero whole pages).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, withSecureDelete, type SqliteDatabase } from '../../src/store/database.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function database(): SqliteDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-secure-delete-'));
  const { db } = openDatabase({ path: join(dir, 'db.sqlite') });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => db.close());
  return db;
}

const setting = (db: SqliteDatabase): number => db.pragma('secure_delete', { simple: true }) as number;
const FAST = 2;
const ON = 1;

describe('withSecureDelete', () => {
  it('runs with secure_delete ON and leaves the database at FAST, as it found it', () => {
    const db = database();
    expect(setting(db)).toBe(FAST);
    expect(withSecureDelete(db, () => setting(db))).toBe(ON);
    expect(setting(db)).toBe(FAST);
  });

  it('restores the setting when the work throws', () => {
    const db = database();
    expect(() =>
      withSecureDelete(db, () => {
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(setting(db)).toBe(FAST);
  });

  it('restores OFF where it found OFF (nested calls restore ON, then what was before)', () => {
    const db = database();
    db.pragma('secure_delete = OFF');
    withSecureDelete(db, () => {
      withSecureDelete(db, () => expect(setting(db)).toBe(ON));
      expect(setting(db)).toBe(ON);
    });
    expect(setting(db)).toBe(0);
  });
});
