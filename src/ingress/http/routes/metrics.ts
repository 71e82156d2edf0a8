/** `GET /metrics` (admin token): Prometheus text, rendered by the metrics room. */
import { Hono } from 'hono';
import { requireAdmin } from '../../../core/principal.js';
import type { HttpEnv } from '../env.js';

export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

export function metricsRoutes(metrics: MetricsExposition): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/metrics', async (c) => {
    requireAdmin(c.get('principal'));
    return c.body(await metrics.render(), 200, { 'content-type': metrics.contentType });
  });
  return app;
}
