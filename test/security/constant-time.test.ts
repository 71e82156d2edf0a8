/**
 * Token checks in constant time: the admin token is compared as a fixed-size
 * keyed digest through timingSafeEqual, whatever the length of the token
 * presented, and tenant keys are looked up by that digest only (never by the
 * key itself). SMTP AUTH goes through the same authenticator.
 */
import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

vi.mock('node:crypto', async (original) => {
  const actual = await original<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const { createAdminTokenVerifier, createHmacApiKeyIssuer, createMetricsTokenVerifier } =
  await import('../../src/security/api-keys.js');
const { createAuthenticator } = await import('../../src/core/tenant/authenticator.js');
const { createFailureThrottle } = await import('../../src/core/tenant/failure-throttle.js');
const { createFileLinks } = await import('../../src/security/file-links.js');

const ADMIN = 'admin-token-0123456789abcdef';
const METRICS = 'metrics-token-0123456789abcdef';

function setup(metricsToken = '') {
  const keys = createHmacApiKeyIssuer(crypto.randomBytes(32));
  const lookups: string[] = [];
  const auth = createAuthenticator({
    admin: createAdminTokenVerifier(ADMIN, keys),
    metrics: createMetricsTokenVerifier(metricsToken, keys),
    keys,
    tenants: { findKeyHolder: (hash) => (lookups.push(hash), null) },
    throttle: createFailureThrottle({ maxFailures: 1_000_000, windowMs: 60_000 }),
    clock: { now: () => 0 },
  });
  return { auth, lookups };
}

describe('constant-time token comparison', () => {
  it('compares every presented token, of any length, as a 32-byte digest with timingSafeEqual', () => {
    const { auth, lookups } = setup();
    const safeEqual = vi.mocked(crypto.timingSafeEqual);
    const tokens = [
      'x',
      ADMIN.slice(0, -1),
      `${ADMIN}x`,
      ADMIN.replace(/.$/, 'g'),
      'a'.repeat(4096),
      `mpk_${'z'.repeat(43)}`,
    ];
    for (const token of tokens) {
      safeEqual.mockClear();
      expect(() => auth.authenticate(token, 'client')).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
      expect(safeEqual, token.slice(0, 20)).toHaveBeenCalledTimes(1);
      const [presented, expected] = safeEqual.mock.calls[0] as [Buffer, Buffer];
      expect([presented.length, expected.length]).toEqual([32, 32]);
      // The presented token itself is never compared, only its digest.
      expect(presented.equals(Buffer.from(token))).toBe(false);
    }
    safeEqual.mockClear();
    expect(auth.authenticate(ADMIN, 'client')).toEqual({ kind: 'admin' });
    expect(safeEqual).toHaveBeenCalledTimes(1);
    // Tenant keys: looked up by the 64-hex-digit digest, never by the key.
    expect(lookups).toHaveLength(tokens.length);
    for (const [index, hash] of lookups.entries()) {
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hash).not.toContain(tokens[index]);
    }
  });

  it('compares the metrics token the same way, and an empty one matches nothing', () => {
    const { auth } = setup(METRICS);
    const safeEqual = vi.mocked(crypto.timingSafeEqual);
    for (const token of [METRICS.slice(0, -1), `${METRICS}x`, 'm'.repeat(4096)]) {
      safeEqual.mockClear();
      expect(() => auth.authenticateCaller(token, 'client')).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
      // The metrics token's digest and the admin token's: each one fixed-size comparison.
      expect(safeEqual.mock.calls.map(([presented, expected]) => [presented.byteLength, expected.byteLength])).toEqual([
        [32, 32],
        [32, 32],
      ]);
    }
    expect(auth.authenticateCaller(METRICS, 'client')).toEqual({ kind: 'metrics' });
    safeEqual.mockClear();
    // Without a metrics token nothing is compared to it (not even the digest of '').
    expect(() => setup('').auth.authenticateCaller(METRICS, 'client')).toThrow(
      expect.objectContaining({ code: 'UNAUTHORIZED' }),
    );
    expect(safeEqual).toHaveBeenCalledTimes(1);
  });

  it('SMTP AUTH goes through the same authenticator as HTTP', async () => {
    const read = async (path: string): Promise<string> =>
      (await import('node:fs')).readFileSync(new URL(path, import.meta.url), 'utf8');
    // One authenticator factory for both, over the same API keys; SMTP's admits no admin token.
    const wiring = await read('../../src/composition/api.ts');
    // Whitespace as the formatter lays the call out: the same arguments in the same order.
    expect(wiring).toMatch(/createAuthenticator\(\{\s*admin,\s*keys: keys\.apiKeys,\s*tenants: store\.tenants,/);
    expect(wiring).toMatch(/smtpAuthenticator: authenticator\(\{ matches: \(\) => false \}, /);
    expect(await read('../../src/composition/intake.ts')).toMatch(
      /createSmtpService\(settings\.smtp, \{[^}]*authenticator: admin\.smtpAuthenticator[ ,}]/,
    );
    expect(await read('../../src/ingress/smtp/smtp-service.ts')).toContain(
      'deps.authenticator.authenticate(password, client, accepts)',
    );
  });

  it("checks a download link's token with one fixed-size comparison, whichever file it names or forges", () => {
    const links = createFileLinks(crypto.randomBytes(32));
    const safeEqual = vi.mocked(crypto.timingSafeEqual);
    const real = links.token(links.fileId('acme', 'm-1', 0));
    const other = links.token(links.fileId('globex', 'm-2', 1));
    // Another tenant's file id under this MAC, a guess, and the real one: the same work for each.
    for (const token of [
      `${other.slice(0, 21)}${real.slice(21)}`,
      crypto.randomBytes(32).toString('base64url'),
      real,
    ]) {
      safeEqual.mockClear();
      links.open(token);
      expect(safeEqual.mock.calls.map(([presented, expected]) => [presented.byteLength, expected.byteLength])).toEqual([
        [16, 16],
      ]);
    }
  });
});
