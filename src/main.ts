/**
 * Composition root: configuration -> settings -> keys -> store -> the rooms'
 * services, started as one ordered list (runtime/service.ts) and stopped in
 * reverse under one deadline: intake first, then the work in flight, the relay
 * threads, the event stream, the parser threads, the store last. The only
 * module (with cli/ and workers/) that wires rooms together.
 */
import { hostname } from 'node:os';
import { createAttemptLog } from './core/attempt-log.js';
import type { Clock, IdSource } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { createMessageCommands } from './core/message-commands.js';
import { createSubmissionService } from './core/submission-service.js';
import { deliveryFanOut } from './core/telemetry.js';
import { daemonSettings, type Config } from './config/index.js';
import { createBounceService, type MailboxWatchers } from './bounce/bounce-service.js';
import { createDeliveryService } from './delivery/delivery-service.js';
import type { Dispatcher } from './delivery/dispatcher.js';
import { createCommandHandler } from './ingress/commands/index.js';
import { createHttpService } from './ingress/http/http-service.js';
import { createSubmissionParsing } from './ingress/http/parser-threads.js';
import { createSmtpService, type SmtpIngress } from './ingress/smtp/index.js';
import { createMetrics } from './metrics/registry.js';
import { createMirrorService, type DaemonMirror } from './outbox/mirror-service.js';
import { createLifecycle, type PeriodicLoop } from './runtime/index.js';
import { openDaemonKeys } from './security/daemon-keys.js';
import { signReport, SIGNATURE_HEADER } from './security/report-signature.js';
import { openStoreService } from './store/store-service.js';
import type { SqliteStore } from './store/index.js';
import type { ReportLoop } from './sync/report-loop.js';
import { createReportService } from './sync/report-service.js';
import { adminServices, createApi, verpReturnPath } from './wiring.js';

export { DATABASE_FILE } from './store/store-service.js';

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
  bounces: MailboxWatchers;
  retention: PeriodicLoop;
  /** Brings the full-text index of messages up to date (GET /messages?q=). */
  searchIndex: PeriodicLoop;
  stop(deadlineMs: number): Promise<void>;
}

export async function startDaemon(deps: DaemonDeps): Promise<Daemon> {
  const { log, clock, ids } = deps;
  const random = deps.random ?? Math.random;
  const settings = daemonSettings(deps.config);
  const keys = openDaemonKeys(settings.keys, log);
  const stored = openStoreService(settings, { secrets: keys.secrets, ids, clock, log });
  const { store } = stored;
  const metrics = createMetrics();
  const attempts = createAttemptLog();
  const delivery = createDeliveryService(settings.delivery, {
    queue: store.queue, accounts: store.accounts, tenants: store.tenants, clock, log, random, owner: ids.uuid(), hostname: hostname(), logLevel: settings.logLevel,
    returnPath: verpReturnPath(settings.bounce.mailboxes), telemetry: deliveryFanOut(metrics.delivery, attempts),
  });
  const wake = (): void => delivery.dispatcher.wake();
  const reports = createReportService(settings.reports, { store: store.reports, tenants: store.tenants, onEvent: store.onEvent, sign: signReport, signatureHeader: SIGNATURE_HEADER, clock, ids, random, log, telemetry: metrics.reports });
  const parsing = createSubmissionParsing(settings.http.parser, settings.http.parseThreads, log);
  // One submission service for HTTP, SMTP and JetStream commands: requests ready in the same turn share one commit.
  const submissions = createSubmissionService({ store, queue: store.queue, messages: store.messages, clock, ids, wake, defer: setImmediate });
  const commands = createMessageCommands({ store, messages: store.messages, clock, ids, wake, queue: store.queue, maxAgeSeconds: settings.maxMessageAgeSeconds });
  const commandHandler = createCommandHandler({ store, submissions, commands, parserLimits: settings.http.parser, clock, ids });
  const mirror = createMirrorService(settings.mirror, { store: store.mirror, onEvent: store.onEvent, commands: commandHandler, clock, log });
  const bounces = createBounceService(settings, store, { clock, ids, log, random });
  metrics.readFrom({
    mirror: () => mirror.mirror.status(), reports: () => reports.status.list(), bounces: () => bounces.watchers.status(),
    queue: () => store.queueStatus.counts(null), pecAwaiting: () => store.pecReceipts.awaitingCount(), store: () => store.writeStatus(),
  });
  // Counted as each event is written (inside its transaction: a rolled-back write, rare, is counted anyway).
  store.onEvent((tenantId, eventType, accountId, text) => metrics.observe(eventType, tenantId, accountId, text));
  const admin = adminServices({ store, keys, settings, clock, ids, attempts, handoff: delivery.handoff, wake, accountsChanged: bounces.watchers.accountsChanged });
  const parts = { store, delivery, reports, mirror: mirror.mirror, bounces: bounces.watchers, parsing, metrics, submissions, commands };
  const http = createHttpService(settings.http.listen, createApi({ ...admin, ...parts, clock, ids, log, maxBodyBytes: settings.http.maxBodyBytes }), log);
  const smtp = createSmtpService(settings.smtp, { store, submissions, authenticator: admin.smtpAuthenticator, defaultHostname: hostname(), clock, ids, log, intake: metrics.intake });

  const lifecycle = createLifecycle([
    { name: 'store', services: [stored.service] },
    { name: 'threads', services: [parsing.service] },
    // A stream that conflicts refuses the start here, before anything is accepted.
    { name: 'event stream', services: [mirror.publishing] },
    { name: 'relays', services: [delivery.relaying] },
    { name: 'work', services: [delivery.dispatching, reports.service, stored.loops] },
    {
      name: 'intake',
      services: [bounces.service, mirror.commands, http.service, smtp.service],
      stopping: 'listeners closed; finishing the submissions in flight',
      stopped: 'intake closed; waiting for sends and report rounds in flight',
    },
  ], log);
  await lifecycle.start();
  return {
    http: http.address(),
    smtp: smtp.ingress(),
    store,
    dispatcher: delivery.dispatcher,
    reports: reports.loop,
    mirror: mirror.mirror,
    bounces: bounces.watchers,
    retention: stored.retention,
    searchIndex: stored.searchIndex,
    stop: (deadlineMs) => lifecycle.stop(deadlineMs),
  };
}
