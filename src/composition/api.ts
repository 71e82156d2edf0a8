/**
 * The admin use-cases over the store (one authenticator and one throttle of
 * failed sign-ins for the API and the console, another for SMTP AUTH), and the
 * HTTP API with the web console in front of it. Composition only: no behaviour
 * of its own.
 */
import { createAccountService, warmingUp, type AttemptLog } from '../core/account/index.js';
import {
  createAuthenticator,
  createFailureThrottle,
  createSuppressionService,
  createTenantService,
  createSendingDomainService,
  createUnsubscribeService,
  type FailingDomain,
  type UnsubscribeLinks,
} from '../core/tenant/index.js';
import type { Clock, IdSource, Logger } from '../core/index.js';
import type { BulkCommands, FileDownloads, MessageCommands, SubmissionService } from '../core/message/index.js';
import type { AccountFailovers, AccountPaces, Handoff } from '../core/delivery/index.js';
import type { WebhookReceiver } from '../core/provider/index.js';
import type { DaemonSettings } from '../config/index.js';
import { type DeliveryService, createDomainDnsReader, createRelayProbe } from '../delivery/index.js';
import type { MailboxWatchers } from '../bounce/index.js';
import { createConsoleApp, createSessionStore, withConsole } from '../ingress/console/index.js';
import { withMcp } from '../ingress/mcp/index.js';
import { daemonHealth, createHttpApp, type SubmissionParsing } from '../ingress/http/index.js';
import type { Metrics } from '../metrics/index.js';
import type { DaemonMirror } from '../outbox/index.js';
import { type DaemonKeys, dkimKeyMaker, newSigningSecret } from '../security/index.js';
import type { SqliteStore } from '../store/index.js';
import type { ReportService } from '../sync/index.js';
import type { BodyStore, NodeIntake, NodeMode } from './node-mode.js';

/** Web console sessions: signed out after 30 idle minutes or 12 hours, whichever comes first; at most this many at once. */
const CONSOLE_IDLE_MS = 30 * 60_000;
const CONSOLE_MAX_AGE_MS = 12 * 3600_000;
const CONSOLE_MAX_SESSIONS = 10_000;

export function adminServices(deps: {
  store: SqliteStore;
  keys: DaemonKeys;
  settings: Pick<DaemonSettings, 'http' | 'smtp' | 'dns'>;
  clock: Clock;
  ids: IdSource;
  attempts: AttemptLog;
  handoff: Handoff;
  /** Adaptive backoff's paces and failover's routes (delivery-service.ts). */
  paces: AccountPaces;
  failovers: AccountFailovers;
  /** Accounts were saved or deleted: the dispatcher and the PEC watchers follow at once. */
  wake(): void;
  accountsChanged(): void;
  /** Alone or in a fleet: in a fleet, configuration writes go to the fleet's bucket first. */
  node: NodeMode;
}) {
  const { store, keys, clock, ids } = deps;
  const authenticator = (
    admin: DaemonKeys['admin'],
    throttle: { maxFailures: number; windowMs: number },
    metrics?: DaemonKeys['metrics'],
  ) =>
    createAuthenticator({
      admin,
      keys: keys.apiKeys,
      tenants: store.tenants,
      throttle: createFailureThrottle(throttle),
      clock,
      metrics,
    });
  return deps.node.shareAdmin({
    // The metrics token is the API's alone (GET /metrics); the console and SMTP AUTH never take it.
    authenticator: authenticator(keys.admin, deps.settings.http.authThrottle, keys.metrics),
    // SMTP AUTH takes tenant keys only: the admin token is never a mailbox password.
    smtpAuthenticator: authenticator({ matches: () => false }, deps.settings.smtp.authThrottle),
    tenants: createTenantService({ store, holds: store.messages, keys: keys.apiKeys, newSigningSecret, clock, ids }),
    accounts: createAccountService({
      store,
      clock,
      ids,
      wake: () => {
        deps.wake();
        deps.accountsChanged();
      },
      tester: createRelayProbe({ clock }).probe,
      activity: {
        usage: store.queue.usage,
        waiting: store.queueStatus.waitingByAccount,
        connections: () => deps.handoff.connections(),
        attempts: deps.attempts.of,
        pace: (tenantId, accountId) => deps.paces.of(tenantId, accountId),
        failover: (tenantId, accountId) => deps.failovers.of(tenantId, accountId),
      },
    }),
    suppressions: createSuppressionService({ store, clock, ids }),
    domains: createSendingDomainService({
      store,
      keys: dkimKeyMaker,
      dns: createDomainDnsReader(deps.settings.dns.servers),
      clock,
      ids,
    }),
  });
}

type AdminServices = ReturnType<typeof adminServices>;

/** What the API and the console are made with. */
type ApiDeps = AdminServices &
  NodeIntake['api'] & {
    store: SqliteStore;
    delivery: DeliveryService;
    /** The sending domains whose last DNS check failed, for GET /status and the console. */
    failingDomains: () => FailingDomain[];
    reports: ReportService;
    mirror: DaemonMirror;
    bounces: MailboxWatchers;
    /** Provider webhooks: they also record what a recipient's unsubscribe link tells, where its message is. */
    webhooks: WebhookReceiver;
    unsubscribeLinks: UnsubscribeLinks;
    /** Offloaded attachments' download links. */
    files: FileDownloads;
    parsing: SubmissionParsing;
    metrics: Metrics;
    submissions: SubmissionService;
    commands: MessageCommands;
    bulk: BulkCommands;
    clock: Clock;
    ids: IdSource;
    log: Logger;
    maxBodyBytes: number;
    webhookMaxBodyBytes: number;
    /** The MCP server at /mcp; null: off. */
    mcp: DaemonSettings['mcp'];
    version: string;
    /** The SMTP session processes configured and running (null: the sessions run on the main thread). */
    smtpSessions: () => { configured: number; running: number } | null;
    bodyStore: BodyStore | null;
  };

const bodyStoreAnswers = (bodyStore: BodyStore | null): boolean => bodyStore?.objects.health().state !== 'failing';

/** GET /status's parts and /ready's checks: the store, the dispatcher, the parser threads, and the node's own. */
function daemonStatus(deps: ApiDeps) {
  const { store, delivery, reports, bounces, mirror, parsing, clock } = deps;
  return {
    health: daemonHealth({
      dispatcherRunning: () => delivery.dispatcher.isRunning(),
      store,
      relays: () => delivery.handoff.connections(),
      paces: () => delivery.paces.all(),
      failovers: () => delivery.failovers.all(),
      warmUps: () => {
        const now = clock.now();
        return warmingUp(store.accounts.list(null), (tenantId, id) => store.queue.usage(tenantId, id, now).day, now);
      },
      failingDomains: deps.failingDomains,
      bodyStore: () =>
        deps.bodyStore === null
          ? null
          : { ...deps.bodyStore.objects.health(), objects_to_remove: store.bodyObjectRows.count() },
      parserReady: parsing.ready,
      smtpSessions: deps.smtpSessions,
      reports: () => reports.status.list(),
      bounces: () => bounces.status(),
      mirror: () => mirror.status(),
      fleet: deps.fleetStatus,
      fleetQueues: deps.fleetQueues,
    }),
    readiness: [
      { name: 'store', check: () => (store.ping(), true) },
      { name: 'dispatcher', check: () => delivery.dispatcher.isRunning() },
      // Intake needs its parser threads; a relay thread being replaced only delays delivery.
      ...(parsing.ready === null ? [] : [{ name: 'parser', check: parsing.ready }]),
      // Large bodies need their store: one that fails refuses them (small ones are still taken).
      ...(deps.bodyStore === null ? [] : [{ name: 'body_store', check: () => bodyStoreAnswers(deps.bodyStore) }]),
      ...deps.readiness,
    ],
  };
}

/** The API, and the web console in front of it on the same listener. */
export function createApi(deps: ApiDeps) {
  const { store, reports, mirror, bounces, parsing, clock, log } = deps;
  const { health, readiness } = daemonStatus(deps);
  const api = createHttpApp({
    ...deps,
    syncStatus: reports.status,
    mirrorStatus: () => mirror.status(),
    bounces: { ledger: store.bounceLedger, status: () => bounces.status() },
    pecReceipts: store.pecReceipts,
    backups: store,
    parseSubmission: parsing.parse,
    intake: deps.metrics.intake,
    requests: deps.metrics.http,
    search: store.search,
    status: { queue: store.queueStatus, clock, health },
    readiness,
    unsubscribe: createUnsubscribeService({
      links: deps.unsubscribeLinks,
      tenants: store.tenants,
      suppressions: deps.suppressions,
      events: deps.webhooks,
      clock,
      log: log.child({ component: 'unsubscribe' }),
    }),
    log: log.child({ component: 'http' }),
  });
  const webConsole = createConsoleApp({
    ...deps,
    search: store.search,
    headers: store.headers,
    queue: store.queueStatus,
    throughput: store.throughput,
    reports: reports.status,
    mirror: () => mirror.status(),
    bounces: () => bounces.status(),
    pecReceipts: store.pecReceipts,
    sessions: createSessionStore({
      clock,
      idleMs: CONSOLE_IDLE_MS,
      maxAgeMs: CONSOLE_MAX_AGE_MS,
      maxSessions: CONSOLE_MAX_SESSIONS,
    }),
    log: log.child({ component: 'console' }),
  });
  const front = withConsole(webConsole, api);
  if (deps.mcp === null) return front;
  return withMcp(front, api, {
    ...deps.mcp,
    authenticator: deps.authenticator,
    maxBodyBytes: deps.maxBodyBytes,
    now: () => clock.now(),
    version: deps.version,
    log: log.child({ component: 'mcp' }),
  });
}
