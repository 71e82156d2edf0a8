/**
 * What flows in and out beside the API and SMTP: the JetStream mirror (with
 * the commands it receives, applied as the API applies them) and the
 * mailboxes (bounces, PEC receipts); then the metrics, which read them all.
 * Composition only: no behaviour of its own.
 */
import { createBounceService } from '../bounce/bounce-service.js';
import { createFleetService } from '../fleet/fleet-service.js';
import { createCommandHandler } from '../ingress/commands/index.js';
import { createMirrorService } from '../outbox/mirror-service.js';
import { createFleetView } from './fleet-view.js';
import { mailproxyVersion } from '../runtime/index.js';
import type { DaemonContext, Work } from './work.js';

export function createStreams(ctx: DaemonContext, work: Work) {
  const { settings, store, clock, ids, log, metrics } = ctx;
  const fleet =
    settings.fleet === null ? null : createFleetService(settings.fleet, { clock, log: log.child({ component: 'fleet' }), version: mailproxyVersion() });
  if (fleet !== null) work.fleetLimits?.attach(fleet.link);
  const fleetView = createFleetView(fleet, { search: store.search, commands: work.commands, queue: store.queueStatus, log });
  const commands = createCommandHandler({
    store,
    submissions: work.submissions,
    commands: work.commands,
    ...(fleetView === null ? {} : { fleetResend: (ctx, tenantId, ids) => fleetView.messages.command(ctx, 'resend', { tenant_id: tenantId, ids }) }),
    parserLimits: settings.http.parser,
    clock,
    ids,
  });
  const mirror = createMirrorService(settings.mirror, { store: store.mirror, onEvent: store.onEvent, commands, clock, log });
  const bounces = createBounceService(settings, store, { clock, ids, log, random: ctx.random });
  metrics.readFrom({
    mirror: () => mirror.mirror.status(),
    reports: () => work.reports.status.list(),
    bounces: () => bounces.watchers.status(),
    queue: () => store.queueStatus.counts(null),
    pecAwaiting: () => store.pecReceipts.awaitingCount(),
    store: () => store.writeStatus(),
    pausedAccounts: () => store.queueStatus.pausedAccounts(),
    ...(fleetView === null ? {} : { fleetQueues: () => fleetView.messages.queues() }),
  });
  // Counted as each event is written (inside its transaction: a rolled-back write, rare, is counted anyway).
  store.onEvent((tenantId, eventType, accountId, text) => metrics.observe(eventType, tenantId, accountId, text));
  return { mirror, bounces, fleet, fleetView };
}

export type Streams = ReturnType<typeof createStreams>;
