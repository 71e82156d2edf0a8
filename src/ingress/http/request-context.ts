/**
 * What every request gets before its route and after its answer: a request id (the caller's when
 * well-formed), the headers every answer carries, one access-log line and the request counters.
 */
import { UNSUBSCRIBE_PATH } from '../../core/tenant/index.js';
import { FILES_PATH } from '../../core/message/index.js';
import type { MiddlewareHandler } from 'hono';
import type { IdSource, Logger, HttpTelemetry } from '../../core/index.js';
import { actorOf } from './auth.js';
import type { HttpEnv } from './env.js';
import { methodLabel, routeTemplate } from './route-template.js';

export interface RequestContextDeps {
  ids: IdSource;
  log: Logger;
  requests?: HttpTelemetry | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestContext(deps: RequestContextDeps): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const incoming = c.req.header('x-request-id');
    const requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : deps.ids.uuid();
    c.set('requestId', requestId);
    // Set before the route answers, so that they are part of the response it builds: set after,
    // each would make hono copy the finished response (and node-server build a full one).
    c.header('X-Request-Id', requestId);
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    const startedAt = performance.now();
    await next();
    deps.requests?.answered(routeTemplate(c), methodLabel(c.req.method), c.res.status);
    deps.log.info(
      {
        requestId,
        method: c.req.method,
        path: loggedPath(c.req.path),
        status: c.res.status,
        durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
        actor: actorOf(c),
      },
      'http request',
    );
  };
}

/** An unsubscribe or download link's token is a capability (whoever holds it may use it): logs name the route, not the token. */
const loggedPath = (path: string): string =>
  path.startsWith(UNSUBSCRIBE_PATH)
    ? `${UNSUBSCRIBE_PATH}{token}`
    : path.startsWith(FILES_PATH)
      ? `${FILES_PATH}{token}`
      : path;
