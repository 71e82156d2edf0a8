/**
 * A fleet node's durability across a lost disk: the replicated
 * spool its intake waits for, and the adoption of lost nodes' spools (and of
 * this node's, given up on its return). Composition only.
 */
import type { ClaimIndex } from '../core/fleet/index.js';
import {
  type FleetLink,
  type ClientIdClaims,
  createReplicatedSpool,
  createSpoolAdoption,
  createSpoolIntake,
  createSpoolStream,
} from '../fleet/index.js';
import type { SubmissionService } from '../core/message/index.js';
import type { DaemonContext, FleetModeSettings, NodeWork } from './node-mode.js';

/** The stream of spool entries, outside the event stream's `mailproxy.>`. */
const SPOOL_STREAM = 'MAILPROXY_FLEET_SPOOL';
const SPOOL_SUBJECTS = 'mailproxy_fleet_spool';
/**
 * How long an answer waits for the cluster to hold its messages before it goes out on the local
 * commit alone: longer than a JetStream leader election after a server's loss (seconds; up to
 * about 15 s seen on a loaded machine) and a client's reconnection to another server.
 */
const ACK_TIMEOUT_MS = 20_000;

export function createFleetSpool(
  settings: FleetModeSettings,
  ctx: DaemonContext,
  work: NodeWork,
  fleet: { link: FleetLink; claims: ClientIdClaims; index: ClaimIndex; submissions: SubmissionService },
) {
  const { store, clock, log } = ctx;
  const { link } = fleet;
  const stream = createSpoolStream({
    stream: SPOOL_STREAM,
    subjectPrefix: SPOOL_SUBJECTS,
    replicas: settings.replicas,
  });
  const rows = store.spoolRows();
  const adoption = createSpoolAdoption(
    // Each check lists the registered spools (a KV listing): once a second at most, whatever the heartbeat.
    { bucket: settings.bucket, adoptAfterMs: settings.adoptAfterMs, checkMs: Math.max(settings.heartbeatMs, 1000) },
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
  const spoolLog = log.child({ component: 'fleet-spool' });
  const spool = createReplicatedSpool(
    { retryMs: 1000, checkMs: settings.spoolCheckMs },
    {
      link,
      rows,
      stream,
      returned: adoption.returned,
      adoptedWhileRunning: adoption.adoptedWhileRunning,
      clock,
      log: spoolLog,
    },
  );
  store.onEvent((_tenantId, eventType, _accountId, _text, messagePk) => spool.observe(eventType, messagePk));
  ctx.metrics.readSpoolFrom(() => {
    const { pending, lastCheck, repaired } = spool.status();
    return { checked: lastCheck, pending, repaired };
  });
  // The submission service wrapped: answered once the cluster holds the entries.
  const intake = createSpoolIntake(fleet.submissions, { spool, rows, ackTimeoutMs: ACK_TIMEOUT_MS, log: spoolLog });
  return {
    spool,
    adoption,
    submissions: intake.submissions,
    /**
     * For /status: entries the cluster has not taken yet, finished messages whose end it does not
     * know yet, erased messages whose records it still holds, answers given before it held them,
     * messages adopted from lost nodes.
     */
    status: () => {
      const { pending, unrecordedEnds, held, lastCheck, repaired, erasing } = spool.status();
      return {
        pending_entries: pending,
        held_entries: held,
        checked:
          lastCheck === null
            ? null
            : {
                at: new Date(lastCheck.at).toISOString(),
                waiting_messages: lastCheck.waiting,
                entries: lastCheck.entries,
              },
        repaired,
        unrecorded_ends: unrecordedEnds,
        pending_erasures: erasing,
        answered_unreplicated: intake.answeredUnreplicated(),
        adopted: adoption.adopted(),
      };
    },
  };
}
