/**
 * Prometheus metrics (prom-client). Gauges and totals are read from the loops'
 * own status at scrape time: the event mirror (outbox backlog, publishes, the
 * command consumer), the delivery reports per tenant, the bounce mailboxes,
 * plus the process metrics prom-client collects. Latencies are histograms the
 * hot paths observe through the telemetry ports (latency-histograms.ts), as
 * do the intake counters (intake-counters.ts).
 * Labels are bounded: tenant and account ids, which the admin creates, and
 * small fixed sets.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { MailboxStatus } from '../core/bounce.js';
import type { MirrorStatus } from '../core/mirror.js';
import type { QueueCount } from '../core/queue-status.js';
import { registerDeliveryMetrics, type DeliveryMetrics } from './delivery-metrics.js';
import type { FleetQueues } from '../core/fleet-queues.js';
import { registerFleetGauges } from './fleet-gauges.js';
import { registerFleetSpoolMetrics, type FleetSpoolHealth } from './fleet-spool-metrics.js';
import { registerInstanceGauges, type BuildInfo } from './instance-gauges.js';
import { registerIntakeCounters, type IntakeCounters } from './intake-counters.js';
import { registerLatencyHistograms, type LatencyHistograms } from './latency-histograms.js';
import { registerWebhookCounters } from './webhook-counters.js';
import type { WebhookTelemetry } from '../core/telemetry.js';
import type { SyncStatus } from '../core/report.js';

export interface MetricsSources {
  mirror: () => MirrorStatus;
  reports: () => SyncStatus[];
  bounces?: () => MailboxStatus[];
  /** Waiting messages by tenant and account, for gmp_pending_messages. */
  queue?: () => QueueCount[];
  /** Messages PEC accounts relayed that wait for their acceptance receipt. */
  pecAwaiting?: () => number;
  /** The store's writes (GET /status `store`): refused now or not, size against the cap. */
  store?: () => { state: 'ok' | 'refusing'; used_bytes: number; max_bytes: number | null };
  /** Paused accounts per tenant that has accounts, for mailproxy_accounts_paused. */
  pausedAccounts?: () => Array<{ tenantId: string; paused: number }>;
  /** Fleet mode: each node's queue and the fleet's total (the mailproxy_fleet_* gauges); absent on a single node. */
  fleetQueues?: () => Promise<FleetQueues>;
}

export interface Metrics extends LatencyHistograms, IntakeCounters {
  contentType: string;
  /**
   * Where the gauges read from at scrape time: given once the parts that own them
   * exist (the telemetry above is handed to those parts first). Before, they read nothing.
   */
  readFrom(sources: MetricsSources): void;
  /** A fleet node's replicated spool, read at scrape time (the mailproxy_fleet_spool_* metrics); never called on a single node. */
  readSpoolFrom(health: () => FleetSpoolHealth): void;
  /** Provider webhooks' requests and events. */
  webhooks: WebhookTelemetry;
  render(): Promise<string>;
  /** Counts one outbox event (store.onEvent): the gmp_* delivery counters. */
  observe: DeliveryMetrics['observe'];
}

export function createMetrics(build: Partial<BuildInfo> = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let sources: MetricsSources | null = null;
  let fleetGauges: { scraped(): void } | null = null;
  // One status read per scrape, shared by the collectors below.
  let mirror: MirrorStatus | null = null;
  const mirrorNow = (): MirrorStatus | null => (mirror ??= sources?.mirror() ?? null);

  const gauge = (name: string, help: string, value: (status: MirrorStatus) => number | null): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const status = mirrorNow();
        const v = status === null ? null : value(status);
        if (v !== null) this.set(v);
      },
    });
  };
  // A total kept by the loop itself: the counter is set to it at each scrape.
  const total = (name: string, help: string, value: (status: MirrorStatus) => number | null): void => {
    new Counter({
      name,
      help,
      registers,
      collect() {
        const status = mirrorNow();
        const v = status === null ? null : value(status);
        this.reset();
        if (v !== null) this.inc(v);
      },
    });
  };

  gauge('mailproxy_mirror_enabled', '1 when [nats] url is set', (s) => (s.enabled ? 1 : 0));
  gauge('mailproxy_mirror_connected', '1 while the mirror is connected to NATS and publishing', (s) => (s.state === 'connected' ? 1 : 0));
  gauge('mailproxy_outbox_backlog', 'Outbox events not yet acknowledged by the stream', (s) => s.backlog);
  gauge(
    'mailproxy_outbox_oldest_unpublished_age_seconds',
    'Age of the oldest event not yet acknowledged by the stream',
    (s) => s.oldest_unpublished_age_seconds ?? 0,
  );
  gauge('mailproxy_mirror_last_error_timestamp_seconds', 'When publishing last failed (epoch seconds)', (s) => s.last_error_ts);
  total('mailproxy_mirror_published_total', 'Events published to the stream since the start', (s) => s.published_total);
  total('mailproxy_commands_handled_total', 'Commands over JetStream handled since the start', (s) => s.commands?.handled ?? null);
  total('mailproxy_commands_dead_lettered_total', 'Commands sent to the dead-letter subject since the start', (s) => s.commands?.dead_lettered ?? null);
  gauge('mailproxy_commands_waiting', 'Commands waiting in the consumer (its lag)', (s) => s.commands?.waiting ?? null);

  const perTenant = (name: string, help: string): Gauge => new Gauge({ name, help, labelNames: ['tenant_id'], registers });
  const reportGauges: Array<[Gauge, (status: SyncStatus) => number]> = [
    [perTenant('mailproxy_report_backlog', "Events not yet acknowledged by the tenant's client"), (s) => s.backlog],
    [
      perTenant('mailproxy_report_oldest_unreported_age_seconds', 'Age of the oldest event not yet acknowledged by the client'),
      (s) => s.oldest_unreported_age_seconds ?? 0,
    ],
    [perTenant('mailproxy_report_consecutive_failures', 'Report rounds failed in a row'), (s) => s.consecutive_failures],
  ];

  // Per bounce mailbox (the instance's and the configured tenants'): a bounded set.
  const perMailbox = (name: string, help: string, labelNames: string[] = ['mailbox']): Gauge => new Gauge({ name, help, labelNames, registers });
  const mailboxConnected = perMailbox('mailproxy_bounce_mailbox_connected', '1 while the bounce mailbox connection is open');
  const mailboxRoundAge = perMailbox(
    'mailproxy_bounce_mailbox_last_round_age_seconds',
    'Seconds since the bounce mailbox was last read to its end (the poller lag)',
  );
  const mailboxFailures = perMailbox('mailproxy_bounce_mailbox_consecutive_failures', 'Connection attempts failed in a row');
  const mailboxHandled = new Counter({
    name: 'mailproxy_bounce_messages_total',
    help: 'Mailbox messages handled since the start, by disposition',
    labelNames: ['mailbox', 'disposition'],
    registers,
  });

  const renderBounces = (): void => {
    const now = Date.now();
    for (const metric of [mailboxConnected, mailboxRoundAge, mailboxFailures, mailboxHandled]) metric.reset();
    for (const status of sources?.bounces?.() ?? []) {
      const labels = { mailbox: status.mailbox };
      mailboxConnected.set(labels, status.connected ? 1 : 0);
      if (status.last_round_at !== null) mailboxRoundAge.set(labels, Math.max(0, (now - status.last_round_at) / 1000));
      mailboxFailures.set(labels, status.failures);
      for (const [disposition, count] of Object.entries(status.handled)) mailboxHandled.inc({ ...labels, disposition }, count);
    }
  };

  const delivery = registerDeliveryMetrics(registers, () => sources?.queue?.() ?? []);

  // A full database refuses intake: the alert is on its size against the cap, before it is.
  const storeGauge = (name: string, help: string, value: (status: NonNullable<ReturnType<NonNullable<MetricsSources['store']>>>) => number | null): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const status = sources?.store?.();
        const v = status === undefined ? null : value(status);
        if (v !== null) this.set(v);
      },
    });
  };
  storeGauge('mailproxy_store_used_bytes', 'Bytes of the database in use (its free pages excluded)', (s) => s.used_bytes);
  storeGauge('mailproxy_store_max_bytes', 'The max_database_mb cap in bytes (absent when uncapped)', (s) => s.max_bytes);
  storeGauge('mailproxy_store_refusing_writes', '1 from a write the store refused (full, locked) until the next commit succeeds', (s) =>
    s.state === 'refusing' ? 1 : 0,
  );

  new Gauge({
    name: 'mailproxy_pec_awaiting_acceptance',
    help: 'Messages relayed through PEC accounts still waiting for their acceptance receipt',
    registers,
    collect() {
      const awaiting = sources?.pecAwaiting?.();
      if (awaiting !== undefined) this.set(awaiting);
    },
  });

  registerInstanceGauges(registers, { version: build.version ?? 'unknown', node: build.node ?? process.version }, () => sources?.pausedAccounts?.() ?? []);

  return {
    ...registerLatencyHistograms(registers),
    ...registerIntakeCounters(registers),
    webhooks: registerWebhookCounters(registers),
    contentType: registry.contentType,
    observe: delivery.observe,
    readSpoolFrom: (health) => registerFleetSpoolMetrics(registers, health),
    readFrom(given) {
      sources = given;
      // Only a fleet node has them: a single node's exposition is as it always was.
      if (given.fleetQueues !== undefined) fleetGauges = registerFleetGauges(registers, given.fleetQueues);
    },
    async render() {
      mirror = null;
      fleetGauges?.scraped();
      renderBounces();
      delivery.collect();
      const reports = sources?.reports() ?? [];
      for (const [metric, value] of reportGauges) {
        metric.reset();
        for (const status of reports) metric.set({ tenant_id: status.tenant_id }, value(status));
      }
      return registry.metrics();
    },
  };
}
