/**
 * Authentication middleware: `Authorization: Bearer <token>` or `X-API-Token`.
 * The client address (for throttling) is the socket's peer, never a header a
 * client could forge.
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import type { Authenticator } from '../../core/authenticator.js';
import type { HttpEnv } from './env.js';

export function presentedToken(c: Context): string | null {
  const authorization = c.req.header('authorization');
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? '';
  }
  return c.req.header('x-api-token') ?? null;
}

export function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function requireAuth(authenticator: Authenticator): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    c.set('principal', authenticator.authenticate(presentedToken(c), clientAddress(c)));
    await next();
  };
}
