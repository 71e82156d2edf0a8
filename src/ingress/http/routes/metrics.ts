/** `GET /metrics` (the admin token or the metrics token): Prometheus text, rendered by the metrics room. */
import { Hono } from 'hono';
import { requireAdmin } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { on, type RouteDoc } from '../route-doc.js';

export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

export const METRICS_ROUTES = {
  metrics: {
    method: 'get',
    path: '/metrics',
    tag: 'Operations',
    summary:
      'Prometheus metrics: outbox, mirror, reports, bounce mailboxes, sending counters, pending messages and the process',
    description:
      'Also open to the metrics token (`[http] metrics_token`), which a Prometheus server can hold instead of the admin token: it opens this route only, every other route answers it 403.',
    access: 'admin',
    responses: { 200: { description: 'Prometheus text exposition format', contentType: 'text/plain' } },
  },
} as const satisfies Record<string, RouteDoc>;

export function metricsRoutes(metrics: MetricsExposition): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  on(app, METRICS_ROUTES.metrics, async (c) => {
    // The metrics token's holder has no principal: auth.ts let it through to this route alone.
    if (c.get('metricsReader') !== true) requireAdmin(c.get('principal'));
    return c.body(await metrics.render(), 200, { 'content-type': metrics.contentType });
  });
  return app;
}
