import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openCheckpointer, WRITER_CHECKPOINT_PAGES } from './checkpointer.js';
import { openDatabase } from './database.js';

describe('WAL checkpointer', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('moves what the writer committed into the database file, from its own connection, while the writer leaves it alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-ckpt-'));
    dirs.push(dir);
    const path = join(dir, 'db.sqlite');
    const { db } = openDatabase({ path, walAutocheckpointPages: WRITER_CHECKPOINT_PAGES });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(WRITER_CHECKPOINT_PAGES);
    db.exec('CREATE TABLE filler (x TEXT)');
    const insert = db.prepare('INSERT INTO filler (x) VALUES (?)');
    // ~18 MB: beyond SQLite's default of 1000 pages (of 16 KiB), which the writer would have checkpointed itself.
    db.transaction(() => {
      for (let i = 0; i < 9000; i += 1) insert.run('y'.repeat(2000));
    })();
    const before = statSync(path).size;

    const checkpointer = openCheckpointer(path);
    try {
      const result = checkpointer.checkpoint();
      expect(result.walFrames).toBeGreaterThan(1000);
      expect(result.checkpointed).toBe(result.walFrames);
      expect(statSync(path).size).toBeGreaterThan(before + 15_000_000);
      // The writer goes on, and the next checkpoint sees only its new frames.
      insert.run('z');
      expect(db.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(9001);
    } finally {
      checkpointer.close();
      db.close();
    }
  });
});

describe('database pages', () => {
  it('creates a new database with 16 KiB pages', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-pages-'));
    try {
      const { db } = openDatabase({ path: join(dir, 'db.sqlite') });
      expect(db.pragma('page_size', { simple: true })).toBe(16384);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
