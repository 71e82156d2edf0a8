/**
 * Authentication middleware: `Authorization: Bearer <token>` or `X-API-Token`.
 * The client address (for throttling) is the socket's peer, never a header a
 * client could forge. The metrics token passes on the metrics route only.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError } from '../../core/index.js';
import type { Authenticator, Principal } from '../../core/tenant/index.js';
import type { HttpEnv } from './env.js';

export function presentedToken(c: Context): string | null {
  return tokenOfHeaders((name) => c.req.header(name));
}

/** The credential a request presents, read by its headers (a hono request's, or a web Request's). */
export function tokenOfHeaders(header: (name: string) => string | null | undefined): string | null {
  const authorization = header('authorization');
  if (authorization !== undefined && authorization !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? '';
  }
  return header('x-api-token') ?? null;
}

export function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** `metricsPath`: the one path the metrics token opens (GET, and HEAD which hono answers as GET). */
export function requireAuth(authenticator: Authenticator, metricsPath: string): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const caller = authenticator.authenticateCaller(presentedToken(c), clientAddress(c));
    if (caller.kind !== 'metrics') {
      c.set('principal', caller);
    } else if (c.req.path === metricsPath && (c.req.method === 'GET' || c.req.method === 'HEAD')) {
      c.set('metricsReader', true);
    } else {
      // A valid credential, only not for this: 403, as a tenant key on an admin route.
      throw new AppError('FORBIDDEN', `the metrics token opens GET ${metricsPath} only`);
    }
    await next();
  };
}

/** Who the access log names: `admin`, `tenant:<id>`, `metrics` (the metrics token), or null before authentication. */
export function actorOf(c: Context<HttpEnv>): string | null {
  const principal = c.get('principal') as Principal | undefined;
  if (principal !== undefined) return principal.kind === 'admin' ? 'admin' : `tenant:${principal.tenantId}`;
  return c.get('metricsReader') === true ? 'metrics' : null;
}
