/**
 * Delivery report status (and a round on demand): every tenant for the admin token; one tenant for the
 * admin token or that tenant's own key (another tenant's id answers 404, as
 * everywhere, so that a key cannot learn which tenants exist).
 */
import { Hono, type Context } from 'hono';
import { notFound } from '../../../core/app-error.js';
import { requireAdmin, scopeTenant } from '../../../core/principal.js';
import type { ReportSync } from '../../../core/report.js';
import type { HttpEnv } from '../env.js';
import { validate } from '../request-input.js';
import { identifier } from '../schemas.js';

const pathId = (c: Context<HttpEnv>): string => validate(identifier, c.req.param('id'), 'tenant id');

export function syncStatusRoutes(status: ReportSync): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();

  app.get('/tenants/sync-status', (c) => {
    requireAdmin(c.get('principal'));
    return c.json({ tenants: status.list() });
  });

  app.get('/tenant/:id/sync-status', (c) => {
    const tenantId = scopeTenant(c.get('principal'), pathId(c));
    const found = status.get(tenantId);
    if (found === null) throw notFound('tenant', tenantId);
    return c.json({ sync_status: found });
  });

  // After fixing an endpoint: the backlog moves now instead of after the backoff.
  app.post('/tenant/:id/sync-now', (c) => {
    const tenantId = scopeTenant(c.get('principal'), pathId(c));
    if (!status.syncNow(tenantId)) throw notFound('tenant', tenantId);
    return c.json({ ok: true }, 202);
  });

  return app;
}
