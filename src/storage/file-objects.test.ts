import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileObjects } from './file-objects.js';

describe('the embedded body store', () => {
  const roots: string[] = [];
  const store = () => {
    const root = join(mkdtempSync(join(tmpdir(), 'file-objects-')), 'bodies');
    roots.push(root);
    return { root, objects: createFileObjects(root) };
  };
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(join(root, '..'), { recursive: true, force: true });
  });

  it('keeps what is put under its name, private to the daemon, and nothing else beside it', async () => {
    const { root, objects } = store();
    const name = 'ab'.repeat(16);
    await objects.put(name, Buffer.from('sealed'));
    await objects.put(name, Buffer.from('sealed again'));
    expect((await objects.get(name))?.toString()).toBe('sealed again');
    expect(readdirSync(join(root, 'ab'))).toEqual([name]);
    expect(statSync(join(root, 'ab', name)).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'ab')).mode & 0o777).toBe(0o700);
  });

  it('answers null for an object that is not there, and removes one that is gone without complaint', async () => {
    const { objects } = store();
    expect(await objects.get('cd'.repeat(16))).toBeNull();
    await objects.remove('cd'.repeat(16));
    await objects.put('cd'.repeat(16), Buffer.from('x'));
    await objects.remove('cd'.repeat(16));
    expect(await objects.get('cd'.repeat(16))).toBeNull();
  });

  it('refuses a name that is not one of ours before it reaches a path', async () => {
    const { objects } = store();
    for (const name of ['../secret.key', 'AB'.repeat(16), 'ab/cd', ''])
      await expect(objects.put(name, Buffer.from('x'))).rejects.toThrow(/not a body object name/);
  });

  it('lists the objects written before a time, and removes a put that never finished', async () => {
    const { root, objects } = store();
    await objects.put('11'.repeat(16), Buffer.from('old'));
    await objects.put('12'.repeat(16), Buffer.from('new'));
    const leftover = join(root, '11', `${'11'.repeat(16)}.abc.tmp`);
    writeFileSync(leftover, 'half');
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const path of [join(root, '11', '11'.repeat(16)), leftover]) utimesSync(path, hourAgo, hourAgo);
    expect(await objects.list(Date.now() - 60_000)).toEqual(['11'.repeat(16)]);
    expect(existsSync(leftover)).toBe(false);
    expect((await objects.list(Date.now() + 60_000)).sort()).toEqual(['11'.repeat(16), '12'.repeat(16)]);
  });

  it('lists nothing before anything was stored', async () => {
    expect(await store().objects.list(Date.now())).toEqual([]);
  });
});
