/**
 * Authentication: turns a presented token into a Principal. Failures are
 * throttled per client so that keys cannot be guessed at line speed.
 */
import { AppError } from '../app-error.js';
import type { Clock } from '../clock.js';
import type { FailureThrottle } from './failure-throttle.js';
import type { AdminTokenVerifier, ApiKeyIssuer, TenantRepository } from '../ports.js';
import type { Caller, Principal } from './principal.js';

export interface AuthenticatorDeps {
  admin: AdminTokenVerifier;
  /** The metrics token; only authenticateCaller() takes it. */
  metrics?: AdminTokenVerifier | undefined;
  keys: ApiKeyIssuer;
  tenants: Pick<TenantRepository, 'findKeyHolder'>;
  throttle: FailureThrottle;
  clock: Clock;
}

export interface Authenticator {
  /**
   * `client` identifies the caller for throttling (its address). `accepts`, when
   * given, narrows who may sign in here (SMTP AUTH names one tenant): a valid key
   * it refuses counts as a failure, so that a tenant's own good key cannot reset
   * its throttle between guesses of another's.
   */
  authenticate(token: string | null, client: string, accepts?: (principal: Principal) => boolean): Principal;
  /**
   * authenticate(), where the metrics token is taken too (the HTTP API, which
   * lets it read GET /metrics only). Everywhere else it is an invalid credential.
   */
  authenticateCaller(token: string | null, client: string): Caller;
  /**
   * authenticate(), plus a proof to keep instead of the token (a console session):
   * the token's keyed hash, which opens nothing when presented as a token.
   */
  authenticateForSession(token: string | null, client: string): { principal: Principal; proof: string };
  /**
   * Who a proof stands for now: null once its key was rotated, expired or its
   * tenant deleted, so that a session ends with its key and not hours later.
   */
  resolveProof(proof: string): Principal | null;
}

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const resolve = (hash: string, now: number): Principal | 'expired' | null => {
    if (deps.admin.matches(hash)) return { kind: 'admin' };
    const holder = deps.tenants.findKeyHolder(hash);
    if (holder === null) return null;
    if (holder.apiKeyExpiresAt !== null && holder.apiKeyExpiresAt <= now) return 'expired';
    return { kind: 'tenant', tenantId: holder.tenantId };
  };

  /** The throttle, the token's digest, then `identify`: no answer (or an expired key) is one more failure. */
  const attempt = <T extends Caller>(
    token: string | null,
    client: string,
    identify: (hash: string, now: number) => T | 'expired' | null,
  ) => {
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
    const proof = deps.keys.hash(token);
    const outcome = identify(proof, now);
    if (outcome === null || outcome === 'expired') {
      deps.throttle.recordFailure(client, now);
      throw new AppError('UNAUTHORIZED', outcome === 'expired' ? 'API key expired' : 'invalid credentials');
    }
    deps.throttle.recordSuccess(client);
    return { principal: outcome, proof };
  };

  const authenticate = (
    token: string | null,
    client: string,
    accepts?: (principal: Principal) => boolean,
  ): { principal: Principal; proof: string } =>
    attempt(token, client, (hash, now) => {
      const outcome = resolve(hash, now);
      return outcome !== null && outcome !== 'expired' && accepts !== undefined && !accepts(outcome) ? null : outcome;
    });

  return {
    authenticate: (token, client, accepts) => authenticate(token, client, accepts).principal,
    authenticateForSession: (token, client) => authenticate(token, client),
    authenticateCaller: (token, client) =>
      attempt<Caller>(token, client, (hash, now) =>
        deps.metrics?.matches(hash) === true ? { kind: 'metrics' } : resolve(hash, now),
      ).principal,
    resolveProof(proof) {
      const outcome = resolve(proof, deps.clock.now());
      return outcome === 'expired' ? null : outcome;
    },
  };
}
