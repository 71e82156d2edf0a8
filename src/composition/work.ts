/**
 * The daemon's work behind intake: delivery (dispatcher and relay threads),
 * the delivery reports, the /add-messages parsing, and the submission and
 * message-command use-cases that HTTP, SMTP and JetStream share. Composition
 * only: no behaviour of its own.
 */
import { hostname } from 'node:os';
import {
  createBulkCommands,
  createMessageCommands,
  type MessageCommands,
  type SubmissionService,
  createSubmissionService,
} from '../core/message/index.js';
import { deliveryFanOut } from '../core/index.js';
import { verpReturnPathOf } from '../core/bounce/index.js';
import { createDeliveryService } from '../delivery/index.js';
import { createSubmissionParsing } from '../ingress/http/index.js';
import { signReport, SIGNATURE_HEADER } from '../security/index.js';
import { createReportService } from '../sync/index.js';
import { groupGathering } from '../runtime/index.js';
import type { DaemonContext } from './node-mode.js';
import { createBodyOffload, createObjectRemoval } from '../storage/index.js';

export function createWork(ctx: DaemonContext) {
  const { settings, store, clock, ids, log, random, metrics } = ctx;
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
    bodyKeys: ctx.bodyKeys,
    files:
      settings.storage === null
        ? null
        : { store: settings.storage, linksKey: ctx.fileLinksKey, maxLifetimeSeconds: settings.files.retentionSeconds },
    returnPath: verpReturnPathOf(settings.bounce.mailboxes),
    unsubscribeLinks: ctx.unsubscribeLinks,
    telemetry: deliveryFanOut(metrics.delivery, ctx.attempts),
    bodyObjects: ctx.bodyReader,
    // Fleet mode: under the gate of fleet-wide limits.
    ...ctx.node.delivery,
  });
  const wake = (): void => delivery.dispatcher.wake();
  // Claimed messages an erasure reached are not sent (delivery/dispatch-lanes.ts).
  store.onEvent((_tenantId, eventType) => {
    if (eventType === 'message.erased') delivery.dispatcher.erased();
  });
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
  const submissions = submissionsOf(ctx, wake);
  const maxAgeSeconds = settings.maxMessageAgeSeconds;
  // Fleet mode: a window the fleet used up shows as rate_limited in a message's waiting reasons.
  const waitingQueue = { usage: ctx.node.waitingUsage(store.queue.usage), suppressed: store.queue.suppressed };
  const created = createMessageCommands({
    store,
    messages: store.messages,
    queue: waitingQueue,
    clock,
    ids,
    wake,
    maxAgeSeconds,
    erasure: store.erasure,
    paces: delivery.paces,
  });
  // Fleet mode: the commands' shared writes go to the fleet's bucket first.
  const commands: MessageCommands = ctx.node.shareCommands(created);
  const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const bulk = createBulkCommands({
    store,
    messages: store.messages,
    selection: store.selection,
    commands,
    clock,
    ids,
    wake,
    yieldTurn,
  });
  const parsing = createSubmissionParsing(settings.http.parser, settings.http.parseThreads, log, {
    bodyKeys: ctx.bodyKeys,
    blindKey: ctx.blindKey,
  });
  return { delivery, wake, reports, submissions, commands, bulk, parsing, bodyRemoval: bodyRemovalOf(ctx) };
}

/**
 * Under a stream of submissions, a commit group gathers for 2 ms before it goes (groupGathering).
 * Alternating builds under smtp-source, sessions on the main thread: 9-14% less CPU a message and
 * higher rates; with one session process, keep-alive's rate fell 4%, its sessions waiting for their
 * answers (bench/results/HISTORY.md, issue 50). A lone submission goes in the next turn.
 */
const GATHERING = { holdMs: 2, streamMs: 20 };

/** One submission service for HTTP, SMTP and JetStream commands: requests ready together share one commit. */
function submissionsOf({ store, clock, ids, log, bodyStore }: DaemonContext, wake: () => void): SubmissionService {
  const queued = createSubmissionService({
    store,
    queue: store.queue,
    messages: store.messages,
    clock,
    ids,
    wake,
    defer: groupGathering(GATHERING),
  });
  // Large bodies go to the body store before their commit.
  if (bodyStore === null) return queued;
  return createBodyOffload(queued, {
    ...bodyStore,
    newName: () => `${bodyStore.ownNames}${ids.uuid().replaceAll('-', '')}`,
    spools: bodyStore.spool,
    log: log.child({ component: 'body-store' }),
  });
}

/** The loop that removes what no message needs any more from the body store, as a service. */
function bodyRemovalOf({ bodyStore, store, clock, log }: DaemonContext) {
  if (bodyStore === null) return { loop: null, services: [] };
  const loop = createObjectRemoval({
    removals: store.bodyObjectRows,
    objects: bodyStore.objects,
    spool: bodyStore.spool,
    abandonedSpoolMs: bodyStore.abandonedSpoolMs,
    expireFiles: (now, limit) => store.files.expire(now, limit),
    intervalMs: bodyStore.removalIntervalMs,
    clock,
    log: log.child({ component: 'body-store' }),
  });
  return {
    loop,
    services: [{ name: 'body-object-removal', start: () => loop.start(), stop: () => loop.stop() }],
  };
}

export type Work = ReturnType<typeof createWork>;
