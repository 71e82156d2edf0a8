/**
 * What flows in and out beside the API and SMTP: the JetStream mirror (with
 * the commands it receives, applied as the API applies them), the
 * mailboxes (bounces, PEC receipts) and the providers' webhooks; then the
 * metrics, which read them all.
 * Composition only: no behaviour of its own.
 */
import { createBounceService } from '../bounce/index.js';
import { createFleetService } from '../fleet/fleet-service.js';
import { createCommandHandler } from '../ingress/commands/index.js';
import { createMirrorService } from '../outbox/mirror-service.js';
import { createFleetView } from './fleet-view.js';
import { createWebhooks } from './webhooks.js';
import { mailproxyVersion } from '../runtime/index.js';
import type { DaemonContext, Work } from './work.js';

export function createStreams(ctx: DaemonContext, work: Work) {
  const { settings, store, clock, ids, log, metrics } = ctx;
  const fleet =
    settings.fleet === null ? null : createFleetService(settings.fleet, { clock, log: log.child({ component: 'fleet' }), version: mailproxyVersion() });
  if (fleet !== null) work.fleetLimits?.attach(fleet.link);
  // Provider webhooks (issue 27) flow in here too. In a fleet, the events no message of this node matched
  // go to the other nodes through the fleet's view, whose responder applies theirs here: built together.
  let fleetView: ReturnType<typeof createFleetView> = null;
  const webhooks = createWebhooks({
    settings: settings.webhooks,
    accounts: store.accounts,
    ledger: store.providerLedger,
    policy: settings.bounce.policy,
    telemetry: metrics.webhooks,
    ...(fleet === null ? {} : { elsewhere: (tenantId, events) => fleetView!.messages.providerEvents(tenantId, events) }),
    clock,
    log,
  });
  fleetView = createFleetView(fleet, { search: store.search, commands: work.commands, queue: store.queueStatus, providerEvents: webhooks.apply, log });
  const view = fleetView;
  const commands = createCommandHandler({
    store,
    submissions: work.submissions,
    commands: work.commands,
    ...(view === null ? {} : { fleetResend: (ctx, tenantId, ids) => view.messages.command(ctx, 'resend', { tenant_id: tenantId, ids }) }),
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
    ...(view === null ? {} : { fleetQueues: () => view.messages.queues() }),
  });
  // Counted as each event is written (inside its transaction: a rolled-back write, rare, is counted anyway).
  store.onEvent((tenantId, eventType, accountId, text) => metrics.observe(eventType, tenantId, accountId, text));
  return { mirror, bounces, fleet, fleetView: view, webhooks };
}

export type Streams = ReturnType<typeof createStreams>;
