import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { describe, expect, it } from 'vitest';
import { relaxedBodyHash } from './dkim-body-hash.js';
import { fromDomain, signDkim } from './dkim-signing.js';

/** mailauth's own relaxed body hasher, the reference the fast one must agree with. */
const { dkimBody } = createRequire(import.meta.url)('mailauth/lib/dkim/body/index.js') as {
  dkimBody(
    canonicalization: string,
    algorithm: string,
    maxLength: false,
  ): {
    update(chunk: Buffer): void;
    digest(encoding: 'base64'): string;
  };
};
function mailauthBodyHash(body: Buffer, chunkSize: number): string {
  const hasher = dkimBody('relaxed', 'sha256', false);
  for (let at = 0; at < body.length; at += chunkSize) hasher.update(body.subarray(at, at + chunkSize));
  return hasher.digest('base64');
}

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

  it("hashes a body in relaxed canonicalisation exactly as mailauth's own hasher does", () => {
    // Lines of text, spaces, tabs, CRLF and bare LF (a bare CR is not mail: SMTP forbids it), in any chunking.
    const piece = fc.constantFrom('a', 'Zz', '\u00e9', ' ', '  ', '\t', ' \t ', '\r\n', '\n', '\r\n\r\n', '.');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 1, max: 64 }), (pieces, chunkSize) => {
        // Ending in CRLF, as every body relayed does (signDkim leaves any other to mailauth).
        const body = Buffer.from(`${pieces.join('')}\r\n`, 'latin1');
        expect(relaxedBodyHash(body)).toBe(mailauthBodyHash(body, chunkSize));
      }),
      { numRuns: 2000, seed: 20_261_129 },
    );
    // The empty body, and one of only empty lines and blanks: the hash of nothing.
    const nothing = mailauthBodyHash(Buffer.alloc(0), 1);
    expect(relaxedBodyHash(Buffer.alloc(0))).toBe(nothing);
    expect(relaxedBodyHash(Buffer.from(' \r\n\t\r\n\r\n'))).toBe(nothing);
  });

  it('signs what mailauth verifies: blanks to fold, bare LFs and trailing empty lines in the body', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const signer = {
      domain: 'example.com',
      selector: 's1',
      algorithm: 'ed25519-sha256' as const,
      privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
    const record = `v=DKIM1; k=ed25519; p=${publicKey.export({ type: 'spki', format: 'der' }).subarray(12).toString('base64')}`;
    const resolver = async (name: string) => (name === 's1._domainkey.example.com' ? [[record]] : []);
    for (const raw of [
      'From: a@example.com\r\nTo: b@example.net\r\nSubject:  spaced \t out\r\n\r\nline  one \t\r\n\tline two\r\n\r\n\r\n',
      'From: a@example.com\r\nTo: b@example.net\r\nSubject: bare\r\n\r\nline one\nline two  \n\n',
      'From: a@example.com\r\nTo: b@example.net\r\nSubject: no end\r\n\r\nlast line without its CRLF  ',
    ]) {
      const signed = await signDkim(Buffer.from(raw, 'latin1'), [signer]);
      const verified = await dkimVerify(signed, { resolver } as unknown as Parameters<typeof dkimVerify>[1]);
      expect(
        verified.results.map((result) => result.status.result),
        raw.slice(0, 40),
      ).toEqual(['pass']);
    }
  });
});
