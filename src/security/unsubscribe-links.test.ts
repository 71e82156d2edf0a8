import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createUnsubscribeLinks } from './unsubscribe-links.js';

const CLAIM = { tenantId: 'acme', messageId: 'inv-1', recipient: 'Ann@Example.NET', list: 'weekly' };

describe('unsubscribe links', () => {
  const links = createUnsubscribeLinks(randomBytes(32));

  it('open to what they were issued for (the recipient normalized), and reveal none of it', () => {
    const token = links.issue(CLAIM);
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    for (const part of ['acme', 'inv-1', 'example', 'weekly']) expect(token.toLowerCase()).not.toContain(part);
    expect(links.open(token)).toEqual({ ...CLAIM, recipient: 'ann@example.net' });
    expect(links.open(links.issue({ ...CLAIM, list: null }))?.list).toBeNull();
    // Each issue is sealed afresh: two links for the same claim differ.
    expect(links.issue(CLAIM)).not.toBe(token);
  });

  it('open to null when altered anywhere, forged, sealed under another key, or not a token at all', () => {
    const token = links.issue(CLAIM);
    const parts = token.split('.');
    for (let part = 1; part < 4; part += 1) {
      const changed = [...parts];
      // The first character of a part: all its bits are the part's (the last one's may be padding).
      const text = changed[part] ?? '';
      changed[part] = `${text.startsWith('A') ? 'B' : 'A'}${text.slice(1)}`;
      expect(links.open(changed.join('.')), `part ${part}`).toBeNull();
    }
    expect(createUnsubscribeLinks(randomBytes(32)).open(token)).toBeNull();
    for (const junk of ['', 'v1.AAAA.BBBB.CCCC', 'v2.a.b.c', 'v1.a.b', `v1.${'A'.repeat(3000)}.b.c`, 'v1.a.b.c.d'])
      expect(links.open(junk), junk.slice(0, 20)).toBeNull();
  });
});
