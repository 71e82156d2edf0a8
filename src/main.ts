/**
 * Composition root: config -> key material -> store -> services -> dispatcher
 * -> HTTP and SMTP. The only module (with cli/, daemon/ and workers/) that wires
 * rooms together. Stop runs in reverse (daemon/stop.ts): intake first, then
 * in-flight sends and report rounds, then the event stream, the store last.
 */
import { createAccountService } from './core/account-service.js';
import { createAttemptLog } from './core/attempt-log.js';
import { deliveryFanOut, type DeliveryTelemetry } from './core/telemetry.js';
import { createSuppressionService } from './core/suppression-service.js';
import { verpAddress } from './core/verp.js';
import { createAuthenticator } from './core/authenticator.js';
import type { Clock, IdSource } from './core/clock.js';
import { createFailureThrottle } from './core/failure-throttle.js';
import type { Logger } from './core/logger.js';
import { createMessageCommands } from './core/message-commands.js';
import { createSubmissionService } from './core/submission-service.js';
import { createTenantService } from './core/tenant-service.js';
import { parseListenAddress, type Config } from './config/index.js';
import { createCommandHandler } from './daemon/commands.js';
import { createHandoff } from './daemon/handoff.js';
import { createMirror, type DaemonMirror } from './daemon/mirror.js';
import { createBounces, type DaemonBounces } from './daemon/bounces.js';
import { createReports } from './daemon/reports.js';
import { startSmtp } from './daemon/smtp.js';
import { daemonHealth } from './daemon/health.js';
import { stopDaemon, type StoppableDaemon } from './daemon/stop.js';
import { openStore } from './daemon/store.js';
import { createDispatcher, type Dispatcher } from './delivery/dispatcher.js';
import { createHttpApp, startHttpServer } from './ingress/http/index.js';
import { createConsoleApp, createSessionStore, withConsole } from './ingress/console/index.js';
import { createMetrics } from './metrics/registry.js';
import { inlineSubmissionParser, unwrap, type ParseOutcome, type SubmissionParser } from './ingress/http/submission-parser.js';
import type { SmtpIngress } from './ingress/smtp/index.js';
import { createPeriodicLoop, type PeriodicLoop } from './runtime/index.js';
import { createWorkerPool, workerScript } from './runtime/worker-pool.js';
import { createAdminTokenVerifier, createHmacApiKeyIssuer } from './security/api-keys.js';
import { newSigningSecret } from './security/report-signature.js';
import type { ReportLoop } from './sync/report-loop.js';
import type { SqliteStore } from './store/index.js';

export { DATABASE_FILE } from './daemon/store.js';

export interface DaemonDeps {
  config: Readonly<Config>;
  log: Logger;
  clock: Clock;
  ids: IdSource;
  /** Uniform [0, 1): retry jitter. */
  random?: () => number;
}

export interface Daemon {
  http: { host: string; port: number };
  /** The SMTP listeners; null when both are off. */
  smtp: Pick<SmtpIngress, 'plain' | 'implicitTls' | 'reloadTls'> | null;
  store: SqliteStore;
  dispatcher: Dispatcher;
  reports: ReportLoop;
  mirror: DaemonMirror;
  bounces: DaemonBounces;
  retention: PeriodicLoop;
  /** Brings the full-text index of messages up to date (GET /messages?q=). */
  searchIndex: PeriodicLoop;
  stop(deadlineMs: number): Promise<void>;
}

function createDelivery(config: Readonly<Config>, store: SqliteStore, deps: DaemonDeps, telemetry: DeliveryTelemetry) {
  const { dispatch } = config;
  const handoff = createHandoff(config, deps.log);
  const dispatcher = createDispatcher({
    queue: store.queue,
    accounts: store.accounts,
    tenants: store.tenants,
    handoff,
    clock: deps.clock,
    log: deps.log.child({ component: 'dispatcher' }),
    random: deps.random ?? Math.random,
    owner: deps.ids.uuid(),
    returnPath: verpReturnPath(config),
    telemetry,
    config: {
      leaseMs: dispatch.lease_seconds * 1000,
      claimBatch: dispatch.claim_batch,
      retry: { scheduleMs: dispatch.retry_schedule_seconds.map((seconds) => seconds * 1000), jitter: dispatch.retry_jitter, maxAgeMs: dispatch.max_age_seconds * 1000 },
    },
  });
  return { handoff, dispatcher };
}

const SEARCH_INDEX_INTERVAL_MS = 500;
const SEARCH_INDEX_BATCH = 2000;
const SEARCH_INDEX_BATCHES = 10;
/** Bodies up to this size (a few messages) are parsed on the main thread; see parseSubmission below. */
const INLINE_PARSE_MAX_BYTES = 16 * 1024;
/** Web console sessions: signed out after 30 idle minutes or 12 hours, whichever comes first; at most this many at once. */
const CONSOLE_IDLE_MS = 30 * 60_000;
const CONSOLE_MAX_AGE_MS = 12 * 3600_000;
const CONSOLE_MAX_SESSIONS = 10_000;

/** VERP (core/verp.ts): a tenant with a mailbox of its own uses its template, the others the instance's. */
function verpReturnPath(config: Readonly<Config>): ((tenantId: string, messagePk: number) => string | null) | undefined {
  const byTenant = new Map(config.bounce.tenant_mailboxes.filter((mailbox) => mailbox.verp_return_path !== '').map((mailbox) => [mailbox.tenant_id, mailbox.verp_return_path]));
  const instance = config.bounce.host === '' ? '' : config.bounce.verp_return_path;
  if (byTenant.size === 0 && instance === '') return undefined;
  return (tenantId, messagePk) => {
    const template = byTenant.get(tenantId) ?? instance;
    return template === '' ? null : verpAddress(template, messagePk);
  };
}

export async function startDaemon(deps: DaemonDeps): Promise<Daemon> {
  const { config, log, clock, ids } = deps;
  const { store, checkpointer, adminToken, hashKey } = openStore(config, log, ids, clock);
  // Made first so that every part can report to it; its sources are read at scrape time only.
  const metrics = createMetrics({
    mirror: () => mirror.status(), reports: () => reports.status.list(), bounces: () => bounces.status(), queue: () => store.queueStatus.counts(null), pecAwaiting: () => store.pecReceipts.awaitingCount(),
    store: () => store.writeStatus(),
  });
  const attempts = createAttemptLog();
  const { handoff, dispatcher } = createDelivery(config, store, deps, deliveryFanOut(metrics.delivery, attempts));
  const reports = createReports(config, store, { clock, ids, log, random: deps.random ?? Math.random, telemetry: metrics.reports });
  const retention = createPeriodicLoop({
    name: 'retention',
    intervalMs: config.retention.interval_seconds * 1000,
    log,
    run: () => {
      const now = clock.now();
      const removed = store.messages.removeReported(null, now - config.retention.report_retention_seconds * 1000);
      if (removed > 0) log.info({ removed }, 'retention removed reported messages');
      store.mirror.pruneAdminEvents(now - config.retention.outbox_retention_seconds * 1000);
      store.inbox.prune(now - config.retention.outbox_retention_seconds * 1000);
      store.bounceLedger.prune(now - config.retention.report_retention_seconds * 1000);
      if (config.pec.receipt_retention_days > 0) store.pecReceipts.prune(now - config.pec.receipt_retention_days * 86_400_000);
      // No SMTP transfer outlives its data timeout: an older spool no message took was abandoned.
      const spools = store.spool.sweep(now - 2 * config.smtp.data_timeout_seconds * 1000);
      if (spools > 0) log.warn({ spools }, 'retention removed abandoned smtp spools');
    },
  });
  const searchIndex = createPeriodicLoop({
    name: 'search-index',
    intervalMs: SEARCH_INDEX_INTERVAL_MS,
    log,
    run: () => {
      // Batches of a bounded size, so that intake never waits long on the writer; a long backlog takes several ticks.
      for (let batch = 0; batch < SEARCH_INDEX_BATCHES && store.search.index(SEARCH_INDEX_BATCH) === SEARCH_INDEX_BATCH; batch += 1);
    },
  });
  // Nothing is being received yet: every spool no message took is left from before a crash.
  const abandoned = store.spool.sweep(Number.MAX_SAFE_INTEGER);
  if (abandoned > 0) log.warn({ spools: abandoned }, 'removed smtp spools of transfers a previous run did not finish');

  const parserLimits = { maxBatchMessages: config.http.max_batch_messages, maxMessageBytes: config.http.max_message_bytes, maxRecipients: config.http.max_recipients };
  const parserPool = config.http.parse_threads === 0
    ? null
    : createWorkerPool<ArrayBuffer, ParseOutcome>({
        script: workerScript(import.meta.url, './workers/submission-parser.js'),
        size: config.http.parse_threads,
        name: 'submission-parser',
        log,
        data: parserLimits,
      });
  // Large bodies move to the worker (transferred, not copied); small ones are parsed here, where
  // they cost less than the two thread hand-offs a worker round trip needs.
  const parseInline = inlineSubmissionParser(parserLimits);
  const parseSubmission: SubmissionParser = parserPool === null
    ? parseInline
    : async (body) => (body.byteLength <= INLINE_PARSE_MAX_BYTES ? parseInline(body) : unwrap(await parserPool.run(body, [body])));

  // One submission service for HTTP, SMTP and JetStream commands: requests ready in the same turn share one commit.
  const submissions = createSubmissionService({ store, queue: store.queue, messages: store.messages, clock, ids, wake: () => dispatcher.wake(), defer: setImmediate });
  const commands = createMessageCommands({
    store, messages: store.messages, clock, ids, wake: () => dispatcher.wake(), queue: store.queue, maxAgeSeconds: config.dispatch.max_age_seconds,
  });
  const mirror = createMirror(config, store, { clock, log, commands: createCommandHandler({ store, submissions, commands, parserLimits, clock, ids }) });
  const bounces = createBounces(config, store, { clock, ids, log, random: deps.random ?? Math.random });

  const stoppable = (http: StoppableDaemon['http'], smtpIngress: StoppableDaemon['smtp']): StoppableDaemon => ({
    http, smtp: smtpIngress, mirror, bounces, dispatcher, reports: reports.loop, loops: [retention, searchIndex], handoff, parserPool, checkpointer, store,
  });
  let smtp: SmtpIngress | null = null;
  let httpServer: Awaited<ReturnType<typeof startHttpServer>> | null = null;
  try {
    // A stream that conflicts refuses the start here, before anything is accepted.
    await mirror.start();
    dispatcher.start();
    reports.loop.start();
    bounces.start();
    retention.start();
    searchIndex.start();
    const apiKeys = createHmacApiKeyIssuer(hashKey);
    // Counted as each event is written (inside its transaction: a rolled-back write, rare, is counted anyway).
    store.onEvent((tenantId, eventType, accountId, text) => metrics.observe(eventType, tenantId, accountId, text));
    // One authenticator (and one throttle of failed attempts) for the API and the console's sign-in.
    const authenticator = createAuthenticator({
      admin: createAdminTokenVerifier(adminToken, apiKeys),
      keys: apiKeys,
      tenants: store.tenants,
      throttle: createFailureThrottle({ maxFailures: config.http.auth_max_failures, windowMs: config.http.auth_failure_window_seconds * 1000 }),
      clock,
    });
    const tenants = createTenantService({ store, holds: store.messages, keys: apiKeys, newSigningSecret, clock, ids });
    const accounts = createAccountService({
      store, clock, ids, wake: () => {
        dispatcher.wake();
        bounces.accountsChanged();
      }, activity: { usage: store.queue.usage, waiting: store.queueStatus.waitingByAccount, connections: () => handoff.connections(), attempts: attempts.of },
    });
    const suppressions = createSuppressionService({ store, clock, ids });
    const app = createHttpApp({
      authenticator,
      tenants,
      accounts,
      submissions,
      commands,
      syncStatus: reports.status,
      mirrorStatus: () => mirror.status(),
      suppressions,
      bounces: { ledger: store.bounceLedger, status: () => bounces.status() },
      pecReceipts: store.pecReceipts,
      metrics,
      backups: store,
      parseSubmission,
      intake: metrics.intake,
      search: store.search,
      status: {
        queue: store.queueStatus,
        clock,
        health: daemonHealth({
          dispatcherRunning: () => dispatcher.isRunning(),
          store,
          relays: () => handoff.connections(),
          parserReady: parserPool === null ? null : () => parserPool.ready(),
          reports: () => reports.status.list(),
          bounces: () => bounces.status(),
          mirror: () => mirror.status(),
        }),
      },
      readiness: [
        { name: 'store', check: () => (store.ping(), true) },
        { name: 'dispatcher', check: () => dispatcher.isRunning() },
        // Intake needs its parser threads; a relay thread being replaced only delays delivery.
        ...(parserPool === null ? [] : [{ name: 'parser', check: () => parserPool.ready() }]),
      ],
      log: log.child({ component: 'http' }),
      ids,
      maxBodyBytes: config.http.max_body_bytes,
    });
    const listen = parseListenAddress(config.http.listen);
    if (listen === null) throw new Error('http.listen was validated but does not parse');
    const webConsole = createConsoleApp({
      authenticator, tenants, accounts, commands, suppressions, search: store.search, headers: store.headers, queue: store.queueStatus, throughput: store.throughput,
      reports: reports.status, mirror: () => mirror.status(), bounces: () => bounces.status(), pecReceipts: store.pecReceipts,
      sessions: createSessionStore({ clock, idleMs: CONSOLE_IDLE_MS, maxAgeMs: CONSOLE_MAX_AGE_MS, maxSessions: CONSOLE_MAX_SESSIONS }),
      clock, ids, log: log.child({ component: 'console' }),
    });
    const http = await startHttpServer(withConsole(webConsole, app), listen);
    httpServer = http;
    log.info({ host: http.address.host, port: http.address.port }, 'http listening');
    smtp = await startSmtp({
      config,
      store,
      submissions,
      authenticator: createAuthenticator({
        admin: { matches: () => false },
        keys: apiKeys,
        tenants: store.tenants,
        throttle: createFailureThrottle({ maxFailures: config.smtp.auth_max_failures, windowMs: config.smtp.auth_failure_window_seconds * 1000 }),
        clock,
      }),
      clock,
      ids,
      log,
      intake: metrics.intake,
    });
    const smtpIngress = smtp;

    return {
      http: http.address,
      smtp: smtpIngress,
      store,
      dispatcher,
      reports: reports.loop,
      mirror,
      bounces,
      retention,
      searchIndex,
      stop: (deadlineMs) => stopDaemon(stoppable(http, smtpIngress), deadlineMs, log),
    };
  } catch (error) {
    await stopDaemon(stoppable(httpServer, smtp), 0, log);
    throw error;
  }
}
