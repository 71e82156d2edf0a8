/**
 * Prometheus metrics (prom-client). Gauges and totals are read from the loops'
 * own status at scrape time: the event mirror (outbox backlog, publishes, the
 * command consumer), the delivery reports per tenant, the bounce mailboxes,
 * plus the process metrics prom-client collects. Latencies are histograms the
 * hot paths observe through the telemetry ports (latency-histograms.ts), as
 * do the intake counters (intake-counters.ts). Each family registers itself
 * into the one registry from its own module (mirror-gauges.ts, report-gauges.ts …).
 * Labels are bounded: tenant and account ids, which the admin creates, and
 * small fixed sets.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { MailboxStatus } from '../core/bounce/index.js';
import type { AccountPace } from '../core/delivery/index.js';
import type { MirrorStatus } from '../core/events/index.js';
import type { QueueCount } from '../core/message/index.js';
import { registerBounceGauges } from './bounce-gauges.js';
import { registerDeliveryMetrics, type DeliveryMetrics } from './delivery-metrics.js';
import type { FleetQueues } from '../core/fleet/index.js';
import { registerFleetGauges } from './fleet-gauges.js';
import { registerFleetSpoolMetrics, type FleetSpoolHealth } from './fleet-spool-metrics.js';
import { registerInstanceGauges, type BuildInfo } from './instance-gauges.js';
import { registerIntakeCounters, type IntakeCounters } from './intake-counters.js';
import { registerLatencyHistograms, type LatencyHistograms } from './latency-histograms.js';
import { registerMirrorGauges } from './mirror-gauges.js';
import { registerPaceGauges } from './pace-gauges.js';
import { registerReportGauges } from './report-gauges.js';
import { registerStoreGauges, type BodyStoreUsage, type StoreUsage } from './store-gauges.js';
import { registerWebhookCounters } from './webhook-counters.js';
import type { WebhookTelemetry } from '../core/index.js';
import type { SyncStatus } from '../core/report/index.js';

export interface MetricsSources {
  mirror: () => MirrorStatus;
  reports: () => SyncStatus[];
  bounces?: () => MailboxStatus[];
  /** Waiting messages by tenant and account, for gmp_pending_messages. */
  queue?: () => QueueCount[];
  /** Messages PEC accounts relayed that wait for their acceptance receipt. */
  pecAwaiting?: () => number;
  /** The store's writes (GET /status `store`): refused now or not, size against the cap. */
  store?: () => StoreUsage;
  /** The body store of large bodies; null without one. */
  bodyStore?: () => BodyStoreUsage | null;
  /** Accounts paced after their relay pushed back, for mailproxy_account_pace. */
  paces?: () => AccountPace[];
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

  // Registered in the exposition's order: mirror, reports, bounces, delivery, store, instance.
  const mirror = registerMirrorGauges(registers, () => sources?.mirror() ?? null);
  const reports = registerReportGauges(registers);
  const bounces = registerBounceGauges(registers, () => sources?.bounces?.() ?? []);
  const delivery = registerDeliveryMetrics(registers, () => sources?.queue?.() ?? []);
  const paces = registerPaceGauges(registers, () => sources?.paces?.() ?? []);
  registerStoreGauges(
    registers,
    () => sources?.store?.(),
    () => sources?.pecAwaiting?.(),
    () => sources?.bodyStore?.(),
  );
  registerInstanceGauges(
    registers,
    { version: build.version ?? 'unknown', node: build.node ?? process.version },
    () => sources?.pausedAccounts?.() ?? [],
  );

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
      mirror.scraped();
      fleetGauges?.scraped();
      bounces.collect();
      delivery.collect();
      paces.collect();
      reports.collect(sources?.reports() ?? []);
      return registry.metrics();
    },
  };
}
