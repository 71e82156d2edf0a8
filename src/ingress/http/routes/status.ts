/**
 * GET /status: the queue at a glance and, for the admin, the health of every
 * loop (dispatcher, worker threads, bounce pollers, report loop, mirror). A
 * tenant key sees its own tenant's queue.
 */
import { Hono } from 'hono';
import type { Clock } from '../../../core/index.js';
import type { QueueStatusStore } from '../../../core/message/index.js';
import { scopeTenantOrAll } from '../../../core/tenant/index.js';
import type { HttpEnv } from '../env.js';
import { readQuery } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { tenantScopeQuery } from '../schemas.js';
import { statusAnswer } from '../view-schemas/operations.js';
import { queueOverview } from '../views/queue-overview.js';

export interface StatusRoutesDeps {
  queue: QueueStatusStore;
  clock: Clock;
  /** The daemon's loops and threads, by name (the composition decides what is in it). */
  health: () => Record<string, unknown> | Promise<Record<string, unknown>>;
}

export const STATUS_ROUTES = {
  status: {
    method: 'get',
    path: '/status',
    tag: 'Messages',
    summary: 'The queue at a glance',
    description:
      "Waiting messages (`queued`, `deferred`, `sending`, `suspended`) in total, by status, priority, tenant and account, and `oldest_due`. The admin also gets `dispatcher`, `store` (writes refused or not, the last refusal, size against the cap, bodies still to be sealed), `threads`, `reports`, `bounce` and `mirror`; a tenant key its own tenant's queue only.",
    access: 'tenant',
    query: tenantScopeQuery,
    responses: { 200: json("the queue, for the admin with the loops' health beside it", statusAnswer) },
  },
} as const satisfies Record<string, RouteDoc>;

export function statusRoutes(deps: StatusRoutesDeps): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  on(app, STATUS_ROUTES.status, async (c) => {
    const query = readQuery(c, STATUS_ROUTES.status.query);
    const principal = c.get('principal');
    const tenantId = scopeTenantOrAll(principal, query.tenant_id);
    const now = deps.clock.now();
    const queue = queueOverview(deps.queue.counts(tenantId), deps.queue.oldestDue(tenantId, now), now);
    return c.json(principal.kind === 'admin' ? { queue, ...(await deps.health()) } : { queue });
  });
  return app;
}
