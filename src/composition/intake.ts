/**
 * Intake: the HTTP API (with the web console) and SMTP submission, over the
 * admin use-cases and the work behind them. Composition only.
 */
import { hostname } from 'node:os';
import { createHttpService } from '../ingress/http/http-service.js';
import { createSmtpService } from '../ingress/smtp/index.js';
import type { DaemonKeys } from '../security/daemon-keys.js';
import { adminServices, createApi } from './api.js';
import type { FleetFeatures } from './fleet-features.js';
import type { Streams } from './streams.js';
import type { DaemonContext, Work } from './work.js';

export function createIntake(ctx: DaemonContext, keys: DaemonKeys, work: Work, streams: Streams, fleet: FleetFeatures | null = null) {
  const { settings, store, clock, ids, log, metrics } = ctx;
  const { delivery, wake } = work;
  // In a fleet, submissions are checked against the fleet's claims and refused while draining.
  const submissions = fleet?.submissions ?? work.submissions;
  const bounces = streams.bounces.watchers;
  const admin = adminServices({ ...ctx, keys, handoff: delivery.handoff, wake, accountsChanged: bounces.accountsChanged });
  const parts = {
    ...work,
    submissions,
    fleetDrain: fleet?.drain ?? null,
    fleetSpool: fleet?.durable?.status ?? null,
    mirror: streams.mirror.mirror,
    bounces,
    fleet: streams.fleet,
    fleetMessages: streams.fleetView?.messages ?? null,
    store,
    metrics,
    clock,
    ids,
    log,
    maxBodyBytes: settings.http.maxBodyBytes,
    webhookMaxBodyBytes: settings.webhooks.maxBodyBytes,
    webhooks: streams.webhooks,
  };
  const http = createHttpService(settings.http.listen, createApi({ ...admin, ...parts }), log);
  const smtpDeps = { store, submissions, defaultHostname: hostname(), clock, ids, log, intake: metrics.intake, telemetry: metrics.smtp };
  const draining = fleet === null ? {} : { draining: () => fleet.drain.phase() !== 'active' };
  const smtp = createSmtpService(settings.smtp, { ...smtpDeps, ...draining, authenticator: admin.smtpAuthenticator });
  return { http, smtp };
}
