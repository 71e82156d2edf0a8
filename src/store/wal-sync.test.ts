import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWalSync } from './wal-sync.js';

describe('WAL sync off the committing thread', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const walFile = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'mailproxy-walsync-'));
    dirs.push(dir);
    const path = join(dir, 'db-wal');
    writeFileSync(path, 'frames');
    return path;
  };

  it('gives callers that arrive during an fsync the one after it, and resolves them in order', async () => {
    const sync = createWalSync(walFile());
    const order: string[] = [];
    const first = sync.sync().then(() => order.push('first'));
    const second = sync.sync();
    const third = sync.sync();
    // Both came while the first ran: they share the next fsync.
    expect(third).toBe(second);
    await Promise.all([first, second.then(() => order.push('second'))]);
    expect(order).toEqual(['first', 'second']);
    await expect(sync.sync()).resolves.toBeUndefined();
    sync.close();
  });

  it('fails, never hangs, when the file is missing or the sync is closed', async () => {
    await expect(createWalSync(join(tmpdir(), 'no-such-dir-mailproxy', 'db-wal')).sync()).rejects.toMatchObject({
      code: 'ENOENT',
    });
    const sync = createWalSync(walFile());
    await sync.sync();
    sync.close();
    await expect(sync.sync()).rejects.toThrow('closed');
  });
});
