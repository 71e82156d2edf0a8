import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createHmacApiKeyIssuer, createAdminTokenVerifier } from './api-keys.js';
import { createAesGcmSecretBox } from './secret-box.js';

describe('AES-256-GCM secret box', () => {
  const box = createAesGcmSecretBox(randomBytes(32));

  it('round-trips and never contains the plaintext', () => {
    const sealed = box.seal('hunter2-password', 'account:t/a:password');
    expect(sealed).not.toContain('hunter2');
    expect(sealed).toMatch(/^v1\./);
    expect(box.open(sealed, 'account:t/a:password')).toBe('hunter2-password');
    expect(box.seal('same', 'ctx')).not.toBe(box.seal('same', 'ctx'));
  });

  it('refuses a ciphertext moved to another context, tampered with, or under another key', () => {
    const sealed = box.seal('secret', 'account:t/a:password');
    expect(() => box.open(sealed, 'account:t/b:password')).toThrow();
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    expect(() =>
      box.open([parts[0], parts[1], parts[2], body.toString('base64url')].join('.'), 'account:t/a:password'),
    ).toThrow();
    expect(() => createAesGcmSecretBox(randomBytes(32)).open(sealed, 'account:t/a:password')).toThrow();
    expect(() => box.open('garbage', 'x')).toThrow('unknown format');
  });

  it('seals under the first key of its ring and opens under any, as a key rotation needs', () => {
    const [older, newer] = [randomBytes(32), randomBytes(32)];
    const before = createAesGcmSecretBox(older).seal('kept', 'ctx');
    const ring = createAesGcmSecretBox([newer, older]);
    expect(ring.open(before, 'ctx')).toBe('kept');
    const after = ring.seal('kept', 'ctx');
    expect(createAesGcmSecretBox(newer).open(after, 'ctx')).toBe('kept');
    expect(() => createAesGcmSecretBox(older).open(after, 'ctx')).toThrow();
    expect(() => ring.open(before, 'another context')).toThrow();
  });
});

describe('API keys and the admin token', () => {
  it('issues 32-byte keys and stores only a keyed digest', () => {
    const issuer = createHmacApiKeyIssuer(randomBytes(32));
    const { key, hash } = issuer.issue();
    expect(Buffer.from(key.slice(4), 'base64url')).toHaveLength(32);
    expect(hash).toBe(issuer.hash(key));
    expect(hash).not.toContain(key);
    expect(createHmacApiKeyIssuer(randomBytes(32)).hash(key)).not.toBe(hash);
  });

  it('verifies the admin token exactly', () => {
    const keys = createHmacApiKeyIssuer(randomBytes(32));
    const verifier = createAdminTokenVerifier('admin-token-0123456789', keys);
    expect(verifier.matches(keys.hash('admin-token-0123456789'))).toBe(true);
    expect(verifier.matches(keys.hash('admin-token-012345678'))).toBe(false);
    expect(verifier.matches(keys.hash(''))).toBe(false);
    expect(verifier.matches(createHmacApiKeyIssuer(randomBytes(32)).hash('admin-token-0123456789'))).toBe(false);
  });
});
