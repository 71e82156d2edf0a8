/** The event mirror's state (admin): whether NATS is reachable and how far behind the stream is. */
import { Hono } from 'hono';
import type { MirrorStatus } from '../../../core/mirror.js';
import { requireAdmin } from '../../../core/principal.js';
import type { HttpEnv } from '../env.js';

export function mirrorRoutes(status: () => MirrorStatus): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/mirror/status', (c) => {
    requireAdmin(c.get('principal'));
    return c.json({ mirror: status() });
  });
  return app;
}
