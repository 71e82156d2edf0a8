/** The event mirror's state (admin): whether NATS is reachable and how far behind the stream is. */
import { Hono } from 'hono';
import type { MirrorStatus } from '../../../core/events/index.js';
import { requireAdmin } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { json, on, type RouteDoc } from '../route-doc.js';

export const MIRROR_ROUTES = {
  status: {
    method: 'get',
    path: '/mirror/status',
    tag: 'Operations',
    summary:
      'The event mirror: connection state, outbox backlog and oldest unpublished age, events published, last error, commands handled / dead-lettered / waiting',
    access: 'admin',
    responses: { 200: json('`{"mirror":{...}}`') },
  },
} as const satisfies Record<string, RouteDoc>;

export function mirrorRoutes(status: () => MirrorStatus): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  on(app, MIRROR_ROUTES.status, (c) => {
    requireAdmin(c.get('principal'));
    return c.json({ mirror: status() });
  });
  return app;
}
