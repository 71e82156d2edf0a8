/**
 * Delivery report status (and a round on demand): every tenant for the admin token; one tenant for the
 * admin token or that tenant's own key (another tenant's id answers 404, as
 * everywhere, so that a key cannot learn which tenants exist).
 */
import { Hono, type Context } from 'hono';
import { notFound } from '../../../core/index.js';
import { requireAdmin, scopeTenant } from '../../../core/tenant/index.js';
import { viewSyncStatus } from '../views/sync-status-view.js';
import type { ReportSync } from '../../../core/report/index.js';
import type { HttpEnv } from '../env.js';
import { readQuery, validate } from '../request-input.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { identifier, reportLogQuery } from '../schemas.js';
import { okOnly } from '../view-schemas/field.js';
import { syncStatusAnswer, syncStatusList } from '../view-schemas/operations.js';
import { viewReportAttempt } from '../views/report-log-view.js';

const params = { id: identifier.meta({ description: 'The tenant id.', examples: ['acme'] }) };

export const SYNC_STATUS_ROUTES = {
  list: {
    method: 'get',
    path: '/tenants/sync-status',
    tag: 'Delivery reports',
    summary: 'Delivery report status of every tenant',
    access: 'admin',
    responses: { 200: json("every tenant's", syncStatusList) },
  },
  get: {
    method: 'get',
    path: '/tenant/{id}/sync-status',
    tag: 'Delivery reports',
    summary: "One tenant's delivery report status",
    description:
      '`client_sync_url`, `in_flight`, `last_attempt_ts`, `last_success_ts`, `last_error`, `last_error_ts`, `consecutive_failures`, `next_due_ts`, `do_not_disturb_until_ts`, `backlog`, `oldest_unreported_ts`, `oldest_unreported_age_seconds`.',
    access: 'tenant',
    params,
    responses: { 200: json("the tenant's", syncStatusAnswer) },
    errors: ['NOT_FOUND'],
  },
  syncNow: {
    method: 'post',
    path: '/tenant/{id}/sync-now',
    tag: 'Delivery reports',
    summary: 'A report round now, past any backoff',
    access: 'tenant',
    params,
    responses: { 202: json('a round is started', okOnly) },
    errors: ['NOT_FOUND'],
  },
  log: {
    method: 'get',
    path: '/tenant/{id}/report-log',
    tag: 'Delivery reports',
    summary: "The last attempts of posting delivery reports to the tenant's client",
    description:
      'Newest first; the last 200 per tenant are kept (across restarts). Each attempt: `report_id` (the `x-mailproxy-report-id` header it carried), ' +
      '`at_ts`, `ok` (acknowledged), `http_status` (null when no answer came), `error_code` (`http_status`, `not_acknowledged`, `timeout`, `connection`), ' +
      '`error`, `latency_ms`, `items` (0 for a heartbeat).',
    access: 'tenant',
    params,
    query: reportLogQuery,
    responses: {
      200: json('`{"report_log":[{"report_id":"...","at_ts":1767225600,"ok":false,"http_status":503,...}]}`'),
    },
    errors: ['NOT_FOUND'],
  },
} as const satisfies Record<string, RouteDoc>;

const pathId = (c: Context<HttpEnv>): string => validate(params.id, c.req.param('id'), 'tenant id');

export function syncStatusRoutes(status: ReportSync): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  const routes = SYNC_STATUS_ROUTES;

  on(app, routes.list, (c) => {
    requireAdmin(c.get('principal'));
    return c.json({ tenants: status.list().map(viewSyncStatus) });
  });

  on(app, routes.get, (c) => {
    const tenantId = scopeTenant(c.get('principal'), pathId(c));
    const found = status.get(tenantId);
    if (found === null) throw notFound('tenant', tenantId);
    return c.json({ sync_status: viewSyncStatus(found) });
  });

  // After fixing an endpoint: the backlog moves now instead of after the backoff.
  on(app, routes.syncNow, (c) => {
    const tenantId = scopeTenant(c.get('principal'), pathId(c));
    if (!status.syncNow(tenantId)) throw notFound('tenant', tenantId);
    return c.json({ ok: true }, 202);
  });

  on(app, routes.log, (c) => {
    const tenantId = scopeTenant(c.get('principal'), pathId(c));
    const query = readQuery(c, routes.log.query);
    const attempts = status.log(tenantId, query.limit ?? 50);
    if (attempts === null) throw notFound('tenant', tenantId);
    return c.json({ report_log: attempts.map(viewReportAttempt) });
  });

  return app;
}
