/**
 * The daemon's work behind intake: delivery (dispatcher and relay threads),
 * the delivery reports, the /add-messages parsing, and the submission and
 * message-command use-cases that HTTP, SMTP and JetStream share. Composition
 * only: no behaviour of its own.
 */
import { hostname } from 'node:os';
import type { AttemptLog } from '../core/attempt-log.js';
import type { Clock, IdSource } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { createBulkCommands } from '../core/message-bulk.js';
import { createMessageCommands, SHARED_COMMANDS, type MessageCommands } from '../core/message-commands.js';
import { replicateMethods, type ReplicatedWrites } from '../core/replicated-writes.js';
import { createSubmissionService } from '../core/submission-service.js';
import { deliveryFanOut } from '../core/telemetry.js';
import { verpReturnPathOf } from '../core/verp.js';
import type { DaemonSettings } from '../config/index.js';
import { createDeliveryService } from '../delivery/delivery-service.js';
import { createFleetLimits } from '../fleet/fleet-limits.js';
import { createSubmissionParsing } from '../ingress/http/parser-threads.js';
import type { Metrics } from '../metrics/registry.js';
import { signReport, SIGNATURE_HEADER } from '../security/report-signature.js';
import type { SqliteStore } from '../store/index.js';
import { createReportService } from '../sync/report-service.js';

/** What every part of the composition is made with. */
export interface DaemonContext {
  settings: DaemonSettings;
  store: SqliteStore;
  clock: Clock;
  ids: IdSource;
  log: Logger;
  random: () => number;
  metrics: Metrics;
  attempts: AttemptLog;
  /** Fleet mode: configuration writes go to the fleet's bucket first (shared-config.ts); null on a single node. */
  configWrites: ReplicatedWrites | null;
}

export function createWork(ctx: DaemonContext) {
  const { settings, store, clock, ids, log, random, metrics } = ctx;
  // Fleet-wide limits (issue 24): a gate for the dispatcher, joined to the fleet in streams.ts. None for a single node.
  const fleetLimits =
    settings.fleet === null
      ? null
      : createFleetLimits(
          { bucket: `${settings.fleet.bucket}_limits`, replicas: settings.fleet.replicas, chunk: settings.fleet.limitChunk, retryMs: 1000 },
          { clock, log: log.child({ component: 'fleet-limits' }), wake: () => delivery.dispatcher.wake() },
        );
  const delivery = createDeliveryService(settings.delivery, {
    queue: store.queue,
    accounts: store.accounts,
    tenants: store.tenants,
    clock,
    log,
    random,
    owner: ids.uuid(),
    hostname: hostname(),
    logLevel: settings.logLevel,
    returnPath: verpReturnPathOf(settings.bounce.mailboxes),
    telemetry: deliveryFanOut(metrics.delivery, ctx.attempts),
    ...(fleetLimits === null ? {} : { fleetLimits: fleetLimits.gate }),
  });
  const wake = (): void => delivery.dispatcher.wake();
  const reports = createReportService(settings.reports, {
    store: store.reports,
    tenants: store.tenants,
    onEvent: store.onEvent,
    sign: signReport,
    signatureHeader: SIGNATURE_HEADER,
    clock,
    ids,
    random,
    log,
    telemetry: metrics.reports,
  });
  // One submission service for HTTP, SMTP and JetStream commands: requests ready in the same turn share one commit.
  const submissions = createSubmissionService({ store, queue: store.queue, messages: store.messages, clock, ids, wake, defer: setImmediate });
  const maxAgeSeconds = settings.maxMessageAgeSeconds;
  // Fleet mode: a window the fleet used up shows as rate_limited in a message's waiting reasons.
  const waitingQueue = fleetLimits === null ? store.queue : { usage: fleetLimits.waitingUsage(store.queue.usage), suppressed: store.queue.suppressed };
  const created = createMessageCommands({ store, messages: store.messages, queue: waitingQueue, clock, ids, wake, maxAgeSeconds });
  const commands: MessageCommands = ctx.configWrites === null ? created : replicateMethods(created, SHARED_COMMANDS, ctx.configWrites);
  const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const bulk = createBulkCommands({ store, messages: store.messages, selection: store.selection, commands, clock, ids, wake, yieldTurn });
  const parsing = createSubmissionParsing(settings.http.parser, settings.http.parseThreads, log);
  return { delivery, wake, reports, submissions, commands, bulk, parsing, fleetLimits };
}

export type Work = ReturnType<typeof createWork>;
