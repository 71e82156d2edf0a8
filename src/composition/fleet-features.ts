/**
 * A fleet node's idempotency across nodes and its drain, over the
 * fleet's link: the submission service wrapped with the fleet's claims and
 * the drain's intake gate, the drain itself, and the requests other nodes
 * make of this one. Made by fleet.ts, for a fleet node only: a single node
 * pays nothing for them. Composition only: no behaviour of its own.
 */
import {
  createFleetDrain,
  adoptSubject,
  createFleetResponder,
  createFleetSubmissions,
  holderSubject,
  createClaimLog,
  createClientIdClaims,
  type FleetService,
} from '../fleet/index.js';
import { createFleetSpool } from './fleet-spool.js';
import type { DaemonContext, FleetModeSettings, NodeWork } from './node-mode.js';

/** The stream of client-id claims (its own, beside the membership's bucket), outside the event stream's `mailproxy.>`. */
const CLAIM_STREAM = 'MAILPROXY_FLEET_CLAIMS';
const CLAIM_SUBJECTS = 'mailproxy_fleet_claims';
/** How long a submission waits for the fleet's answer before it goes on with the local check alone. */
const CLAIM_TIMEOUT_MS = 3000;

export function createFleetFeatures(
  settings: FleetModeSettings,
  ctx: DaemonContext,
  work: NodeWork,
  fleet: FleetService,
) {
  const { store, clock, log } = ctx;
  const { link } = fleet;
  const index = store.claimIndex();
  const claimLog = createClaimLog(
    {
      stream: CLAIM_STREAM,
      subjectPrefix: CLAIM_SUBJECTS,
      replicas: settings.replicas,
      maxAgeMs: ctx.settings.retention.reportedMessagesMs,
      checkMs: 1000,
      catchUpMs: 5000,
    },
    { link, index, clock, log: log.child({ component: 'fleet-claims' }) },
  );
  const claims = createClientIdClaims(claimLog, index, link.nodeId);
  const drain = createFleetDrain({
    link,
    store: store.transfer,
    announce: (phase) => fleet.announce(phase),
    // The drain and the wrapped submissions need each other (their intake waits on its gate, it waits for their
    // submissions in flight): read through the submissions made just below, over the drain's gate.
    intakeSettled: () => fleetSubmissions.settled(),
    stopSending: () => work.delivery.dispatcher.stop(ctx.settings.shutdownMs),
    wake: work.wake,
    holdId: (tenantId, id) => claims.assign(tenantId, id, clock.now()),
    clock,
    log: log.child({ component: 'fleet-drain' }),
  });
  const fleetSubmissions = createFleetSubmissions(work.submissions, {
    link,
    claims,
    queue: store.queue,
    refusal: drain.refusal,
    clock,
    log: log.child({ component: 'fleet-idempotency' }),
    claimTimeoutMs: CLAIM_TIMEOUT_MS,
  });
  const durable = settings.spool
    ? createFleetSpool(settings, ctx, work, { link, claims, index, submissions: fleetSubmissions.submissions })
    : null;
  const responder = createFleetResponder(
    link,
    {
      [holderSubject(link.nodeId)]: fleetSubmissions.holds,
      [adoptSubject(link.nodeId)]: drain.adopt,
    },
    log.child({ component: 'fleet-requests' }),
  );
  return {
    claimLog,
    /** Checked against the fleet's claims, committed here, then held by the cluster before the answer. */
    submissions: durable?.submissions ?? fleetSubmissions.submissions,
    durable,
    drain: { phase: drain.phase, progress: drain.progress, drain: () => void drain.drain() },
    responder,
  };
}
