/**
 * Intake: the HTTP API (with the web console) and SMTP submission, over the
 * admin use-cases and the work behind them, as the node's mode decorates
 * them. Composition only.
 */
import { hostname } from 'node:os';
import { createHttpService } from '../ingress/http/index.js';
import { createSmtpService } from '../ingress/smtp/index.js';
import { createFileLinks, type DaemonKeys } from '../security/index.js';
import { createFileDownloads, type BodySeal, type FileFinder } from '../core/message/index.js';
import { adminServices, createApi } from './api.js';
import { createDomainWatch, openFile } from '../delivery/index.js';
import type { DaemonContext, NodeIntake } from './node-mode.js';
import type { Streams } from './streams.js';
import type { Work } from './work.js';

export function createIntake(ctx: DaemonContext, keys: DaemonKeys, work: Work, streams: Streams, node: NodeIntake) {
  const { settings, store, clock, ids, log, metrics } = ctx;
  const { delivery, wake } = work;
  const bounces = streams.bounces.watchers;
  // The domain check is made over the admin services; an account saved asks it for a check (its
  // relay is one SPF must authorise), through this, bound once the check exists.
  let recheckDomains = (): void => undefined;
  const admin = adminServices({
    ...ctx,
    keys,
    handoff: delivery.handoff,
    paces: delivery.paces,
    failovers: delivery.failovers,
    wake,
    accountsChanged: () => {
      bounces.accountsChanged();
      recheckDomains();
    },
  });
  const watch = createDomainWatch({
    domains: admin.domains,
    tenants: store.tenants,
    intervalMs: settings.dns.checkIntervalMs,
    clock,
    log: log.child({ component: 'domain-checks' }),
  });
  recheckDomains = watch.recheck;
  // Read at request time, once the SMTP service below exists.
  let smtpSessions = (): { configured: number; running: number } | null => null;
  const parts = {
    ...work,
    ...node.api,
    // In a fleet, submissions are checked against the fleet's claims and refused while draining.
    submissions: node.submissions,
    mirror: streams.mirror.mirror,
    bounces,
    store,
    metrics,
    clock,
    ids,
    log,
    maxBodyBytes: settings.http.maxBodyBytes,
    webhookMaxBodyBytes: settings.webhooks.maxBodyBytes,
    webhooks: streams.webhooks,
    unsubscribeLinks: ctx.unsubscribeLinks,
    files: fileDownloadsOf(ctx, keys.bodies, node.api.fleetFiles),
    mcp: settings.mcp,
    version: ctx.version,
    bodyStore: ctx.bodyStore,
    failingDomains: () => watch.failing(),
    smtpSessions: () => smtpSessions(),
    readiness: readinessOf(settings.smtp.sessionProcesses, node, () => smtpSessions()),
  };
  const http = createHttpService(settings.http.listen, createApi({ ...admin, ...parts }), log);
  const smtpDeps = {
    store: smtpStore(ctx),
    submissions: node.submissions,
    defaultHostname: hostname(),
    clock,
    ids,
    log,
    intake: metrics.intake,
    telemetry: metrics.smtp,
    // Session processes seal what they receive, as the HTTP parser threads do.
    sealing: { bodyKeys: ctx.bodyKeys, blindKey: ctx.blindKey },
  };
  const smtp = createSmtpService(settings.smtp, { ...smtpDeps, ...node.smtp, authenticator: admin.smtpAuthenticator });
  smtpSessions = () => smtp.ingress()?.processes?.() ?? null;
  return {
    http,
    smtp,
    domainChecks: {
      loop: watch.loop,
      service: { name: 'domain-checks', start: () => watch.loop.start(), stop: () => watch.loop.stop() },
    },
  };
}

/** SMTP intake needs a session process when they are on (one being replaced is not enough to refuse). */
function readinessOf(
  sessionProcesses: number,
  node: NodeIntake,
  sessions: () => { configured: number; running: number } | null,
): NodeIntake['api']['readiness'] {
  if (sessionProcesses === 0) return node.api.readiness;
  return [...node.api.readiness, { name: 'smtp_sessions', check: () => (sessions()?.running ?? 1) > 0 }];
}

/**
 * Offloaded attachments' downloads: their objects read where bodies are (the body store, or what
 * one left in the data directory), opened here under each file's own key; in a fleet, their records
 * asked of the node that sent them when they are not here.
 */
function fileDownloadsOf(ctx: DaemonContext, seal: BodySeal, fleetFiles: FileFinder | null) {
  return createFileDownloads({
    links: createFileLinks(ctx.fileLinksKey),
    files: fleetFiles ?? {
      find: (fileId) => ctx.store.files.find(fileId),
      downloaded: (file, at) => ctx.store.files.downloaded(file.fileId, at),
    },
    open: async (file) => {
      const object = await ctx.bodyReader.get(file.object);
      if (object === null) return null;
      const { facts, content } = openFile(seal, file.fileId, file.key, object);
      return { ...facts, content };
    },
    clock: ctx.clock,
  });
}

/** What SMTP intake reads of the store, with the spool beside the body store when there is one. */
function smtpStore({ store, bodyStore }: DaemonContext) {
  if (bodyStore === null) return store;
  return { tenants: store.tenants, accounts: store.accounts, queue: store.queue, spool: bodyStore.spool };
}
