/**
 * The HTTP API as a hono app built from its dependencies. Order of concerns per
 * request: request id -> access log -> body limit -> authentication -> route.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { AppError, type IdSource, type Logger, type HttpTelemetry, type IntakeTelemetry } from '../../core/index.js';
import type { AccountService } from '../../core/account/index.js';
import type { BounceLedger, MailboxStatus } from '../../core/bounce/index.js';
import type { PecReceiptReader } from '../../core/pec/index.js';
import type {
  SuppressionService,
  Authenticator,
  SendingDomainService,
  TenantService,
  UnsubscribeService,
} from '../../core/tenant/index.js';
import { UNSUBSCRIBE_PATH } from '../../core/tenant/index.js';
import type { BulkCommands, MessageCommands, MessageSearch, SubmissionService } from '../../core/message/index.js';
import type { FleetView, FleetMessages } from '../../core/fleet/index.js';
import type { MirrorStatus } from '../../core/events/index.js';
import type { ReportSync } from '../../core/report/index.js';
import type { WebhookReceiver } from '../../core/provider/index.js';
import { requireAuth } from './auth.js';
import type { HttpEnv } from './env.js';
import { fleetPart } from './daemon-health.js';
import { createErrorHandler, errorResponse } from './errors.js';
import { bodyLimit } from './request-body.js';
import { requestContext } from './request-context.js';
import { ROUTE_CATALOG, WEBHOOK_CATALOG } from './route-catalog.js';
import { accountRoutes } from './routes/accounts.js';
import { domainRoutes } from './routes/domains.js';
import { backupRoutes, type DatabaseBackups } from './routes/backup.js';
import { bounceRoutes } from './routes/bounces.js';
import { healthRoutes, type ReadinessCheck } from './routes/health.js';
import { messageRoutes } from './routes/messages.js';
import { METRICS_ROUTES, metricsRoutes, type MetricsExposition } from './routes/metrics.js';
import { mirrorRoutes } from './routes/mirror.js';
import { fleetDrainRoutes, type FleetDrainControl } from './routes/fleet-drain.js';
import { openapiRoutes } from './routes/openapi.js';
import { pecRoutes } from './routes/pec.js';
import type { SubmissionParser } from './submission-parser.js';
import { statusRoutes, type StatusRoutesDeps } from './routes/status.js';
import { syncStatusRoutes } from './routes/sync-status.js';
import { tenantRoutes } from './routes/tenants.js';
import { webhookRoutes } from './routes/webhooks.js';
import { UNSUBSCRIBE_MAX_BODY_BYTES, unsubscribeRoutes } from './routes/unsubscribe.js';
import { fileRoutes } from './routes/files.js';
import { FILES_PATH, type FileDownloads } from '../../core/message/index.js';

export interface HttpAppDeps {
  authenticator: Authenticator;
  tenants: TenantService;
  accounts: AccountService;
  submissions: SubmissionService;
  commands: MessageCommands;
  bulk: BulkCommands;
  syncStatus: ReportSync;
  mirrorStatus: () => MirrorStatus;
  /** This node's view of the fleet; null for a single node. */
  fleetStatus: () => FleetView | null;
  /** A fleet node's drain; null for a single node. */
  fleetDrain?: FleetDrainControl | null;
  suppressions: SuppressionService;
  domains: SendingDomainService;
  /** The bounce mailbox: what it handled, and each poller's state. */
  bounces: { ledger: BounceLedger; status: () => MailboxStatus[] };
  /** PEC receipts read from PEC accounts' mailboxes, with their original bytes. */
  pecReceipts: PecReceiptReader;
  metrics: MetricsExposition;
  /** GET /backup: consistent copies of the database while it is written. */
  backups: DatabaseBackups;
  search: MessageSearch;
  /** Fleet-wide message reads and commands; null for a single node. */
  fleetMessages?: FleetMessages | null;
  /** GET /status: the queue overview and the loops' health. */
  status: StatusRoutesDeps;
  /** Parses /add-messages bodies: on this thread or in worker threads (composition decides). */
  parseSubmission: SubmissionParser;
  /** Told of each /add-messages answered after its commit (intake latency). */
  intake?: IntakeTelemetry;
  /** Told of every request answered: its route template, method and status (request counters). */
  requests?: HttpTelemetry;
  /** Provider webhooks. */
  webhooks: WebhookReceiver;
  /** One-click unsubscribe links (public). */
  unsubscribe: UnsubscribeService;
  /** Offloaded attachments' download links (public). */
  files: FileDownloads;
  readiness: readonly ReadinessCheck[];
  log: Logger;
  ids: IdSource;
  /** http.max_body_bytes: the body of every route but the webhooks'. */
  maxBodyBytes: number;
  /** webhooks.max_body_bytes: a provider's notification; the route is public, so its limit is small. */
  webhookMaxBodyBytes: number;
}

// The API's description is public like liveness: it is the contract a client reads before it has a key.
const PUBLIC_PATHS = new Set(['/health', '/ready', '/openapi.json', '/docs']);
const WEBHOOK_PREFIX = '/webhooks/';

export function createHttpApp(deps: HttpAppDeps): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.use('*', requestContext(deps));
  app.use('*', bodyLimits(deps.maxBodyBytes, deps.webhookMaxBodyBytes));
  app.use('*', authGate(deps.authenticator));
  mountRoutes(app, deps);
  app.notFound((c) =>
    errorResponse(
      c,
      new AppError('NOT_FOUND', 'no such route', { details: { method: c.req.method, path: c.req.path } }),
    ),
  );
  app.onError(createErrorHandler(deps.log));
  return app;
}

/** Before authentication and before any provider's signature is checked: an over-limit body is refused unread. */
function bodyLimits(maxBodyBytes: number, webhookMaxBodyBytes: number): MiddlewareHandler<HttpEnv> {
  const apiLimit = bodyLimit<HttpEnv>(maxBodyBytes);
  const webhookLimit = bodyLimit<HttpEnv>(webhookMaxBodyBytes);
  const unsubscribeLimit = bodyLimit<HttpEnv>(UNSUBSCRIBE_MAX_BODY_BYTES);
  return (c, next) =>
    (c.req.path.startsWith(WEBHOOK_PREFIX)
      ? webhookLimit
      : c.req.path.startsWith(UNSUBSCRIBE_PATH) || c.req.path.startsWith(FILES_PATH)
        ? unsubscribeLimit
        : apiLimit)(c, next);
}

/**
 * A provider's webhook holds no API key: it is verified by its provider's own signature (routes/webhooks.ts).
 * An unsubscribe link's token is its own proof (routes/unsubscribe.ts), as is a download link's (routes/files.ts).
 */
function authGate(authenticator: Authenticator): MiddlewareHandler<HttpEnv> {
  const auth = requireAuth(authenticator, METRICS_ROUTES.metrics.path);
  return async (c, next) =>
    PUBLIC_PATHS.has(c.req.path) ||
    c.req.path.startsWith(WEBHOOK_PREFIX) ||
    c.req.path.startsWith(UNSUBSCRIBE_PATH) ||
    c.req.path.startsWith(FILES_PATH)
      ? next()
      : auth(c, next);
}

/**
 * /ready is public: of each bounce mailbox only whether it is watched, not its errors (those are in /bounce/status).
 * Unnamed when a tenant's (a tenant mailbox, a PEC account's): /ready must not tell strangers who the tenants are.
 */
function bounceSummary(status: () => MailboxStatus[]) {
  return status().map(({ mailbox, tenant_id: tenantId, state, connected }) => ({
    mailbox: tenantId === null ? mailbox : mailbox.startsWith('pec:') ? 'pec' : 'tenant',
    state,
    connected,
  }));
}

function mountRoutes(app: Hono<HttpEnv>, deps: HttpAppDeps): void {
  app.route(
    '/',
    healthRoutes(deps.readiness, () => ({
      mirror: deps.mirrorStatus(),
      bounce: bounceSummary(deps.bounces.status),
      ...fleetPart(deps.fleetStatus()),
    })),
  );
  // Before the tenant routes, whose admin-only guard would answer a tenant key's own sync-status with 403.
  app.route('/', syncStatusRoutes(deps.syncStatus));
  app.route('/', tenantRoutes(deps.tenants));
  app.route('/', accountRoutes(deps.accounts));
  app.route('/', domainRoutes(deps.domains));
  app.route('/', mirrorRoutes(deps.mirrorStatus));
  app.route('/', fleetDrainRoutes(deps.fleetDrain ?? null));
  app.route('/', statusRoutes(deps.status));
  app.route(
    '/',
    bounceRoutes({ suppressions: deps.suppressions, ledger: deps.bounces.ledger, status: deps.bounces.status }),
  );
  app.route('/', pecRoutes({ receipts: deps.pecReceipts }));
  app.route('/', metricsRoutes(deps.metrics));
  app.route('/', backupRoutes(deps.backups, deps.log));
  app.route(
    '/',
    messageRoutes({
      submissions: deps.submissions,
      commands: deps.commands,
      bulk: deps.bulk,
      parseSubmission: deps.parseSubmission,
      search: deps.search,
      fleet: deps.fleetMessages ?? null,
      intake: deps.intake,
    }),
  );
  app.route('/', webhookRoutes(deps.webhooks));
  app.route('/', unsubscribeRoutes(deps.unsubscribe));
  app.route('/', fileRoutes(deps.files));
  app.route('/', openapiRoutes(ROUTE_CATALOG, WEBHOOK_CATALOG));
}
