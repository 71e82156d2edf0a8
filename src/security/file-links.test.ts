import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createFileLinks, fileLinksKey } from './file-links.js';

const links = createFileLinks(fileLinksKey(randomBytes(32)));

describe('file links', () => {
  it('gives a file the same id on every attempt, and another file another id', () => {
    const id = links.fileId('acme', 'm-1', 0);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(links.fileId('acme', 'm-1', 0)).toBe(id);
    const others = [links.fileId('acme', 'm-1', 1), links.fileId('acme', 'm-2', 0), links.fileId('globex', 'm-1', 0)];
    expect(new Set([id, ...others]).size).toBe(4);
    // Fields never run together: ("ab", "c") is not ("a", "bc").
    expect(links.fileId('ab', 'c', 0)).not.toBe(links.fileId('a', 'bc', 0));
  });

  it('opens its own token to the id, and nothing else', () => {
    const id = links.fileId('acme', 'm-1', 0);
    const token = links.token(id);
    expect(token).toMatch(/^[\w-]{43}$/);
    expect(links.open(token)).toBe(id);
    const altered = `${token.slice(0, 5)}${token[5] === 'A' ? 'B' : 'A'}${token.slice(6)}`;
    const foreign = createFileLinks(fileLinksKey(randomBytes(32)));
    for (const wrong of [
      altered,
      foreign.token(id),
      randomBytes(32).toString('base64url'),
      '',
      `${token}A`,
      'x'.repeat(43),
    ])
      expect(links.open(wrong)).toBeNull();
  });
});
