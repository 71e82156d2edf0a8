/**
 * Response headers of every console answer: the API's (nosniff, no-store)
 * plus a Content-Security-Policy that allows this origin only, no framing,
 * and no referrer to other sites (a message id in a URL stays here).
 */
import type { MiddlewareHandler } from 'hono';
import type { ConsoleEnv } from './env.js';

const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function securityHeaders(): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Content-Security-Policy', CSP);
    c.header('X-Frame-Options', 'DENY');
    // same-origin, not no-referrer: under no-referrer a browser sends `Origin: null` with its forms, and the origin check refuses them.
    c.header('Referrer-Policy', 'same-origin');
    await next();
  };
}
