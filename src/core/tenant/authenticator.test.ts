import { describe, expect, it } from 'vitest';
import { createAuthenticator } from './authenticator.js';
import { createFailureThrottle } from './failure-throttle.js';

const tenant = (tenantId: string, apiKeyExpiresAt: number | null) => ({ tenantId, apiKeyExpiresAt });

function setup(now = 1_000) {
  const byHash = new Map([
    ['h:key-a', tenant('a', null)],
    ['h:key-old', tenant('b', 500)],
  ]);
  return createAuthenticator({
    admin: { matches: (hash) => hash === 'h:admin-token-0123456789' },
    metrics: { matches: (hash) => hash === 'h:metrics-token-0123456789' },
    keys: { issue: () => ({ key: '', hash: '' }), hash: (key) => `h:${key}` },
    tenants: { findKeyHolder: (hash) => byHash.get(hash) ?? null },
    throttle: createFailureThrottle({ maxFailures: 2, windowMs: 60_000 }),
    clock: { now: () => now },
  });
}

describe('authenticator', () => {
  it('resolves the admin token and tenant keys', () => {
    const auth = setup();
    expect(auth.authenticate('admin-token-0123456789', 'c')).toEqual({ kind: 'admin' });
    expect(auth.authenticate('key-a', 'c')).toEqual({ kind: 'tenant', tenantId: 'a' });
  });

  it('refuses missing, unknown and expired credentials with stable codes', () => {
    const auth = setup();
    expect(() => auth.authenticate(null, 'c')).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
    expect(() => auth.authenticate('nope', 'c')).toThrow(
      expect.objectContaining({ code: 'UNAUTHORIZED', message: 'invalid credentials' }),
    );
    expect(() => auth.authenticate('key-old', 'd')).toThrow(
      expect.objectContaining({ code: 'UNAUTHORIZED', message: 'API key expired' }),
    );
  });

  it('throttles a client after repeated failures, but not a missing token', () => {
    const auth = setup();
    for (let i = 0; i < 5; i += 1)
      expect(() => auth.authenticate(null, 'c')).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
    expect(() => auth.authenticate('x', 'c')).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
    expect(() => auth.authenticate('y', 'c')).toThrow(expect.objectContaining({ code: 'UNAUTHORIZED' }));
    expect(() => auth.authenticate('key-a', 'c')).toThrow(
      expect.objectContaining({ code: 'AUTH_THROTTLED', transient: true }),
    );
    expect(auth.authenticate('key-a', 'other-client')).toEqual({ kind: 'tenant', tenantId: 'a' });
  });

  it('takes the metrics token as its own caller through authenticateCaller only', () => {
    const auth = setup();
    expect(auth.authenticateCaller('metrics-token-0123456789', 'c')).toEqual({ kind: 'metrics' });
    expect(auth.authenticateCaller('admin-token-0123456789', 'c')).toEqual({ kind: 'admin' });
    expect(auth.authenticateCaller('key-a', 'c')).toEqual({ kind: 'tenant', tenantId: 'a' });
    // The console's sign-in and SMTP AUTH never take it: there it is an invalid credential.
    expect(() => auth.authenticate('metrics-token-0123456789', 'd')).toThrow(
      expect.objectContaining({ code: 'UNAUTHORIZED', message: 'invalid credentials' }),
    );
    expect(() => auth.authenticateForSession('metrics-token-0123456789', 'e')).toThrow(
      expect.objectContaining({ code: 'UNAUTHORIZED' }),
    );
  });

  it('throttles guesses of the metrics token like any other', () => {
    const auth = setup();
    expect(() => auth.authenticateCaller('metrics-guess-1', 'c')).toThrow(
      expect.objectContaining({ code: 'UNAUTHORIZED' }),
    );
    expect(() => auth.authenticateCaller('metrics-guess-2', 'c')).toThrow(
      expect.objectContaining({ code: 'UNAUTHORIZED' }),
    );
    expect(() => auth.authenticateCaller('metrics-token-0123456789', 'c')).toThrow(
      expect.objectContaining({ code: 'AUTH_THROTTLED' }),
    );
  });
});
