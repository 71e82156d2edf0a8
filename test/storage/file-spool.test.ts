/**
 * The spool beside the body store (src/storage/file-spool.ts): each part sealed as it arrives and
 * appended to a file of its own, read back as the body store takes it, gone when discarded or
 * abandoned, and nothing of a stop's left over after the next start.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBodySeal, keyEncryptionKey } from '../../src/security/body-seal.js';
import { partsOf } from '../../src/core/message/index.js';
import { createFileSpool } from '../../src/storage/file-spool.js';

describe('the spool beside the body store', () => {
  const seal = createBodySeal([keyEncryptionKey(randomBytes(32))]);
  const dirs: string[] = [];
  const directory = () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'file-spool-')), 'spool');
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(join(dir, '..'), { recursive: true, force: true });
  });

  it('seals each part as it arrives, and reads them back in order under the spool key', () => {
    const dir = directory();
    const spool = createFileSpool(dir, seal);
    const id = spool.open(Date.now(), 'acme');
    spool.append(id, 0, Buffer.from('first part of a large message'));
    spool.append(id, 1, Buffer.from('second part'));
    // Sealed on disk: nothing of the message in the file.
    const file = readFileSync(join(dir, readdirSync(dir)[0] ?? ''));
    expect(file.includes('large message')).toBe(false);
    const { key, framed } = spool.read(id);
    const parts = partsOf(framed);
    expect(seal.open({ tenantId: 'acme', key, parts }).toString()).toBe('first part of a large messagesecond part');
    expect(() => seal.open({ tenantId: 'beta', key, parts })).toThrow();
  });

  it('removes the file of a discarded spool, and reads a gone spool as empty', () => {
    const dir = directory();
    const spool = createFileSpool(dir, seal);
    const id = spool.open(Date.now(), 'acme');
    spool.append(id, 0, Buffer.from('x'));
    spool.discard(id);
    expect(readdirSync(dir)).toEqual([]);
    expect(spool.read(id)).toEqual({ key: Buffer.alloc(0), framed: Buffer.alloc(0) });
    expect(() => spool.append(id, 1, Buffer.from('y'))).toThrow(/not open/);
  });

  it('sweeps spools opened before a time, and files no open spool owns', () => {
    const dir = directory();
    const spool = createFileSpool(dir, seal);
    const old = spool.open(1_000, 'acme');
    const fresh = spool.open(5_000, 'acme');
    writeFileSync(join(dir, 'stray.spool'), 'left by a failure');
    expect(spool.sweep(2_000)).toBe(1);
    expect(spool.read(old).key).toEqual(Buffer.alloc(0));
    expect(readdirSync(dir)).toEqual([`${fresh}.spool`]);
  });

  it('clears what a stop left when it starts: those keys are gone', () => {
    const dir = directory();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, '7.spool'), 'sealed parts of a transfer cut by a stop');
    createFileSpool(dir, seal);
    expect(existsSync(join(dir, '7.spool'))).toBe(false);
  });
});
