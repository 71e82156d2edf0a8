import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromDomain, signDkim } from './dkim-signing.js';

const message = (from: string): Buffer =>
  Buffer.from(`From: ${from}\r\nTo: b@example.net\r\nSubject: hi\r\n\r\nhello\r\n`, 'latin1');
const ed25519 = (): string =>
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('DKIM signing', () => {
  it('reads the From domain: an address, a display name, a folded field, none', () => {
    expect(fromDomain(message('a@Example.COM'))).toBe('example.com');
    expect(fromDomain(message('"Billing, Dept" <billing@mail.example.com>'))).toBe('mail.example.com');
    expect(fromDomain(Buffer.from('Subject: x\r\nFrom: Ann\r\n <ann@example.org>\r\n\r\nbody'))).toBe('example.org');
    expect(fromDomain(Buffer.from('Subject: x\r\n\r\nFrom: a@example.com'))).toBeNull();
  });

  it('signs with the keys of the From domain only, and sends a broken key unsigned rather than not at all', async () => {
    const signer = {
      domain: 'example.com',
      selector: 's1',
      algorithm: 'ed25519-sha256' as const,
      privateKey: ed25519(),
    };
    const signed = (await signDkim(message('a@example.com'), [signer])).toString('latin1');
    expect(signed).toMatch(/^DKIM-Signature: v=1; a=ed25519-sha256; c=relaxed\/relaxed; d=example\.com;/);
    expect(signed).toContain('s=s1;');
    expect(signed.endsWith('\r\nhello\r\n')).toBe(true);
    const other = message('a@other.example');
    expect((await signDkim(other, [signer])).equals(other)).toBe(true);
    const broken = { ...signer, privateKey: '-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n' };
    const raw = message('a@example.com');
    expect((await signDkim(raw, [broken])).equals(raw)).toBe(true);
  });
});
