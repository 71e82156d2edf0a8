/**
 * Latency histograms, observed where the intake, delivery and report paths
 * already know the number (core/telemetry.ts ports): one `observe` each, no
 * store reads. Labels are kept bounded: `ingress` (2 values), `priority` (4),
 * `outcome` (4), `tenant_id` (tenants the admin creates). The relay's time has
 * no tenant or account label on purpose: buckets times accounts times outcomes
 * grows fast, and gmp_*_total already say which account is failing.
 */
import { Histogram, type Registry } from 'prom-client';
import type { DeliveryTelemetry, IntakeTelemetry, ReportTelemetry } from '../core/index.js';

/** A group commit (fsync included) takes milliseconds; seconds mean the disk or the parser threads are in trouble. */
const INTAKE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Due mail leaves in milliseconds; rate limits, paused accounts and backlogs hold it for minutes to hours. */
const QUEUE_WAIT_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400];
/** One SMTP transaction: tens of milliseconds near by, seconds far away, up to dispatch.send_timeout_seconds (60). */
const RELAY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Usually within a second of the event (reports.batch_delay_ms); a failing endpoint backs off for hours. */
const REPORT_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400];

/** An indexed claim of up to dispatch.claim_batch rows takes well under a millisecond; it must not grow with the queue. */
const CLAIM_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

export interface LatencyHistograms {
  intake: IntakeTelemetry;
  delivery: DeliveryTelemetry;
  reports: ReportTelemetry;
}

const seconds = (ms: number): number => Math.max(0, ms) / 1000;

export function registerLatencyHistograms(registers: Registry[]): LatencyHistograms {
  const intake = new Histogram({
    name: 'mailproxy_intake_latency_seconds',
    help: 'From a submission in hand (HTTP body read, SMTP final dot) to its answer after the durable commit, per submission',
    labelNames: ['ingress'],
    buckets: INTAKE_BUCKETS,
    registers,
  });
  const queueWait = new Histogram({
    name: 'mailproxy_queue_wait_seconds',
    help: 'From a message becoming due (accepted, its deferred_ts, or its retry instant) to its handoff to the relay, per attempt',
    labelNames: ['priority'],
    buckets: QUEUE_WAIT_BUCKETS,
    registers,
  });
  const relay = new Histogram({
    name: 'mailproxy_relay_response_seconds',
    help: 'One SMTP transaction with the upstream relay, from getting a pooled connection (opening one if need be) to the final answer, per attempt',
    labelNames: ['outcome'],
    buckets: RELAY_BUCKETS,
    registers,
  });
  const claim = new Histogram({
    name: 'mailproxy_dispatcher_claim_seconds',
    help: 'One claim of due messages from the queue (one immediate transaction), per claim',
    buckets: CLAIM_BUCKETS,
    registers,
  });
  const report = new Histogram({
    name: 'mailproxy_report_latency_seconds',
    help: "From an event being written to the tenant's client acknowledging it in a delivery report, per event",
    labelNames: ['tenant_id'],
    buckets: REPORT_BUCKETS,
    registers,
  });

  return {
    intake: { submitted: (channel, elapsedMs) => intake.observe({ ingress: channel }, seconds(elapsedMs)) },
    delivery: {
      handedOff: (priority, waitMs) => queueWait.observe({ priority: String(priority) }, seconds(waitMs)),
      attempted(attempt) {
        if (attempt.relayMs !== null) relay.observe({ outcome: attempt.outcome }, seconds(attempt.relayMs));
      },
      claimed: (elapsedMs) => claim.observe(seconds(elapsedMs)),
    },
    reports: {
      acknowledged(tenantId, latenciesMs) {
        const child = report.labels({ tenant_id: tenantId });
        for (const ms of latenciesMs) child.observe(seconds(ms));
      },
    },
  };
}
