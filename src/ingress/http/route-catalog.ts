/**
 * Every route's description, in the order of the documentation. A route
 * module's table joins here; test/http/openapi.test.ts fails on a route the
 * app serves that is missing from the document, and on one it no longer serves.
 */
import { DELIVERY_REPORT_WEBHOOK } from './delivery-report-doc.js';
import type { RouteDoc, WebhookDoc } from './route-doc.js';
import { ACCOUNT_ROUTES } from './routes/accounts.js';
import { BACKUP_ROUTES } from './routes/backup.js';
import { BOUNCE_ROUTES } from './routes/bounces.js';
import { DOMAIN_ROUTES } from './routes/domains.js';
import { HEALTH_ROUTES } from './routes/health.js';
import { MESSAGE_ROUTES } from './routes/messages.js';
import { METRICS_ROUTES } from './routes/metrics.js';
import { MIRROR_ROUTES } from './routes/mirror.js';
import { FLEET_DRAIN_ROUTES } from './routes/fleet-drain.js';
import { OPENAPI_ROUTES } from './routes/openapi.js';
import { PEC_ROUTES } from './routes/pec.js';
import { STATUS_ROUTES } from './routes/status.js';
import { SYNC_STATUS_ROUTES } from './routes/sync-status.js';
import { TENANT_ROUTES } from './routes/tenants.js';
import { WEBHOOK_ROUTES } from './routes/webhooks.js';
import { UNSUBSCRIBE_ROUTES } from './routes/unsubscribe.js';
import { FILE_ROUTES } from './routes/files.js';

export const ROUTE_CATALOG: readonly RouteDoc[] = [
  HEALTH_ROUTES,
  TENANT_ROUTES,
  ACCOUNT_ROUTES,
  DOMAIN_ROUTES,
  MESSAGE_ROUTES,
  STATUS_ROUTES,
  SYNC_STATUS_ROUTES,
  BOUNCE_ROUTES,
  PEC_ROUTES,
  MIRROR_ROUTES,
  FLEET_DRAIN_ROUTES,
  METRICS_ROUTES,
  BACKUP_ROUTES,
  WEBHOOK_ROUTES,
  UNSUBSCRIBE_ROUTES,
  FILE_ROUTES,
  OPENAPI_ROUTES,
].flatMap((table): RouteDoc[] => Object.values(table));

/** The requests mailproxy makes to client applications, the document's `webhooks`. */
export const WEBHOOK_CATALOG: readonly WebhookDoc[] = [DELIVERY_REPORT_WEBHOOK];
