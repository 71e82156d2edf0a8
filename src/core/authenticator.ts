/**
 * Authentication: turns a presented token into a Principal. Failures are
 * throttled per client so that keys cannot be guessed at line speed.
 */
import { AppError } from './app-error.js';
import type { Clock } from './clock.js';
import type { FailureThrottle } from './failure-throttle.js';
import type { AdminTokenVerifier, ApiKeyIssuer, TenantRepository } from './ports.js';
import type { Principal } from './principal.js';

export interface AuthenticatorDeps {
  admin: AdminTokenVerifier;
  keys: ApiKeyIssuer;
  tenants: Pick<TenantRepository, 'findKeyHolder'>;
  throttle: FailureThrottle;
  clock: Clock;
}

export interface Authenticator {
  /** `client` identifies the caller for throttling (its address). */
  authenticate(token: string | null, client: string): Principal;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const resolve = (token: string, now: number): Principal | 'expired' | null => {
    const hash = deps.keys.hash(token);
    if (deps.admin.matches(hash)) return { kind: 'admin' };
    const holder = deps.tenants.findKeyHolder(hash);
    if (holder === null) return null;
    if (holder.apiKeyExpiresAt !== null && holder.apiKeyExpiresAt <= now) return 'expired';
    return { kind: 'tenant', tenantId: holder.tenantId };
  };

  return {
    authenticate(token, client) {
      const now = deps.clock.now();
      const waitMs = deps.throttle.blockedForMs(client, now);
      if (waitMs > 0) {
        throw new AppError('AUTH_THROTTLED', 'too many failed authentication attempts', {
          details: { retry_after_seconds: Math.ceil(waitMs / 1000) },
          transient: true,
        });
      }
      if (token === null || token === '') {
        throw new AppError('UNAUTHORIZED', 'missing credentials: send Authorization: Bearer <token> or X-API-Token');
      }
      const outcome = resolve(token, now);
      if (outcome === null || outcome === 'expired') {
        deps.throttle.recordFailure(client, now);
        throw new AppError('UNAUTHORIZED', outcome === 'expired' ? 'API key expired' : 'invalid credentials');
      }
      deps.throttle.recordSuccess(client);
      return outcome;
    },
  };
}
