/**
 * What flows in and out beside the API and SMTP: the JetStream mirror (with
 * the commands it receives, applied as the API applies them), the
 * mailboxes (bounces, PEC receipts) and the providers' webhooks; then the
 * metrics, which read them all. In a fleet, the events no message of this
 * node matched, the resends and the queue gauges reach the other nodes
 * through `reach`. Composition only: no behaviour of its own.
 */
import { createBounceService } from '../bounce/index.js';
import { createCommandHandler } from '../ingress/commands/index.js';
import { createMirrorService } from '../outbox/index.js';
import { createWebhooks } from './webhooks.js';
import type { DaemonContext, NodeReach } from './node-mode.js';
import type { Work } from './work.js';

export function createStreams(ctx: DaemonContext, work: Work, reach: NodeReach) {
  const { settings, store, clock, ids, log, metrics } = ctx;
  const webhooks = createWebhooks({
    settings: settings.webhooks,
    accounts: store.accounts,
    ledger: store.providerLedger,
    policy: settings.bounce.policy,
    telemetry: metrics.webhooks,
    ...reach.webhooks,
    clock,
    log,
  });
  const commands = createCommandHandler({
    store,
    submissions: work.submissions,
    commands: work.commands,
    ...reach.commands,
    parserLimits: settings.http.parser,
    clock,
    ids,
  });
  const mirror = createMirrorService(settings.mirror, {
    store: store.mirror,
    onEvent: store.onEvent,
    commands,
    clock,
    log,
    nats: ctx.node.nats,
  });
  const bounces = createBounceService(settings, store, { clock, ids, log, random: ctx.random });
  metrics.readFrom({
    mirror: () => mirror.mirror.status(),
    reports: () => work.reports.status.list(),
    bounces: () => bounces.watchers.status(),
    queue: () => store.queueStatus.counts(null),
    pecAwaiting: () => store.pecReceipts.awaitingCount(),
    store: () => store.writeStatus(),
    bodyStore: () =>
      ctx.bodyStore === null
        ? null
        : {
            failing: ctx.bodyStore.objects.health().state === 'failing',
            objectsToRemove: store.bodyObjectRows.count(),
          },
    pausedAccounts: () => store.queueStatus.pausedAccounts(),
    paces: () => work.delivery.paces.all(),
    ...reach.metrics,
  });
  // Counted as each event is written (inside its transaction: a rolled-back write, rare, is counted anyway).
  store.onEvent((tenantId, eventType, accountId, text) => metrics.observe(eventType, tenantId, accountId, text));
  return { mirror, bounces, webhooks };
}

export type Streams = ReturnType<typeof createStreams>;
