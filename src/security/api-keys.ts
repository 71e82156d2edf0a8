/**
 * Tenant API keys: 32 random bytes, shown once, stored only as HMAC-SHA256
 * under a server-side key. A keyed hash lets the store look a key up by index
 * while a stolen database alone cannot be used to test guesses offline.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AdminTokenVerifier, ApiKeyIssuer } from '../core/index.js';

const KEY_PREFIX = 'mpk_';

export function createHmacApiKeyIssuer(hashKey: Buffer): ApiKeyIssuer {
  const hash = (key: string): string => createHmac('sha256', hashKey).update(key, 'utf8').digest('hex');
  return {
    issue() {
      const key = KEY_PREFIX + randomBytes(32).toString('base64url');
      return { key, hash: hash(key) };
    },
    hash,
  };
}

/**
 * Compares digests (the issuer's hash of each token) rather than the tokens
 * themselves, so that the comparison takes the same time whatever the
 * presented token's length.
 */
export function createAdminTokenVerifier(adminToken: string, keys: Pick<ApiKeyIssuer, 'hash'>): AdminTokenVerifier {
  const expected = Buffer.from(keys.hash(adminToken), 'hex');
  return {
    matches: (tokenHash) => {
      const presented = Buffer.from(tokenHash, 'hex');
      return presented.length === expected.length && timingSafeEqual(presented, expected);
    },
  };
}

/**
 * The metrics token (`http.metrics_token`), checked like the admin token. Empty
 * means there is none: nothing matches, not even the digest of an empty token.
 */
export function createMetricsTokenVerifier(metricsToken: string, keys: Pick<ApiKeyIssuer, 'hash'>): AdminTokenVerifier {
  return metricsToken === '' ? { matches: () => false } : createAdminTokenVerifier(metricsToken, keys);
}
