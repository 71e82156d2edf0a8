/**
 * The template of the route that answered a request (`/tenant/:id`), for the
 * request counters: a label from the routes we registered, never from the path
 * a client wrote, so that scanners cannot grow the metric without bound.
 */
import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';

/** What `app.use` registers (middleware) is matched under this method; routes are under their own. */
const MIDDLEWARE_METHOD = 'ALL';
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** The last route (not middleware) matching the request, or null when none did (the 404 of an unknown path). */
export function routeTemplate(c: Context): string | null {
  const routes = matchedRoutes(c);
  for (let index = routes.length - 1; index >= 0; index -= 1) {
    const route = routes[index];
    if (route !== undefined && route.method !== MIDDLEWARE_METHOD) return route.path;
  }
  return null;
}

/** The request's method, or OTHER for one no route of ours answers (any token is a valid HTTP method). */
export const methodLabel = (method: string): string => (METHODS.has(method) ? method : 'OTHER');
