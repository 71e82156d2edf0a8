/**
 * A fleet node's durability across a lost disk (issue 25): the replicated
 * spool its intake waits for, and the adoption of lost nodes' spools (and of
 * this node's, given up on its return). Composition only.
 */
import type { ClaimIndex } from '../core/claim-ledger.js';
import type { FleetLink } from '../fleet/fleet-service.js';
import type { ClientIdClaims } from '../fleet/idempotency-claims.js';
import { createReplicatedSpool } from '../fleet/replicated-spool.js';
import { createSpoolAdoption } from '../fleet/spool-adoption.js';
import { createSpoolStream } from '../fleet/spool-stream.js';
import type { DaemonContext, Work } from './work.js';

/** The stream of spool entries, outside the event stream's `mailproxy.>`. */
const SPOOL_STREAM = 'MAILPROXY_FLEET_SPOOL';
const SPOOL_SUBJECTS = 'mailproxy_fleet_spool';
/** How long an answer waits for the cluster to hold its messages before it goes out on the local commit alone. */
const ACK_TIMEOUT_MS = 5000;

export function createFleetSpool(ctx: DaemonContext, work: Work, fleet: { link: FleetLink; claims: ClientIdClaims; index: ClaimIndex }) {
  const { settings, store, clock, log } = ctx;
  if (settings.fleet === null || !settings.fleet.spool) return null;
  const { link } = fleet;
  const stream = createSpoolStream({ stream: SPOOL_STREAM, subjectPrefix: SPOOL_SUBJECTS, replicas: settings.fleet.replicas });
  const rows = store.spoolRows();
  const adoption = createSpoolAdoption(
    { bucket: settings.fleet.bucket, adoptAfterMs: settings.fleet.adoptAfterMs, checkMs: settings.fleet.heartbeatMs },
    {
      link,
      stream,
      transfers: store.transfer,
      rows,
      claims: fleet.claims,
      index: fleet.index,
      wake: work.wake,
      clock,
      log: log.child({ component: 'fleet-adoption' }),
    },
  );
  const spool = createReplicatedSpool(
    { ackTimeoutMs: ACK_TIMEOUT_MS, retryMs: 1000 },
    { link, rows, stream, returned: adoption.returned, clock, log: log.child({ component: 'fleet-spool' }) },
  );
  store.onEvent((_tenantId, eventType, _accountId, _text, messagePk) => spool.observe(eventType, messagePk));
  return { spool, adoption };
}
