/**
 * One report round of one tenant's lane: read its oldest unreported events,
 * post them (or a heartbeat) unless the schedule (core/report/report-schedule.ts)
 * holds them back, and on an acknowledgement move the tenant's cursor past
 * them. Sets the lane's next due instant; never throws.
 */
import type { Clock, IdSource, Logger, TenantRepository, ReportTelemetry } from '../core/index.js';
import {
  afterFailure,
  afterSuccess,
  nextRoundAt,
  type LaneState,
  type ReportPolicy,
  syncUrl,
  type ClientReply,
  type ReportAttempt,
  type LaneRecord,
  type ReportStore,
  type ReportTarget,
  type ReportTransport,
} from '../core/report/index.js';
import { reportBody } from '../core/contracts/index.js';
import type { Lane } from './report-lanes.js';

export interface ReportLoopConfig {
  policy: ReportPolicy;
  batchSize: number;
  requestTimeoutMs: number;
  /** How long a wake-up waits for more events to join the round. */
  batchDelayMs: number;
  /** How often tenants are re-read (new tenants, endpoints set or removed). */
  rescanMs: number;
}

export interface ReportLoopDeps {
  store: ReportStore;
  tenants: Pick<TenantRepository, 'get'>;
  transport: ReportTransport;
  /** The signature header's value for `body` at `timestamp` (epoch seconds). */
  sign: (secret: string, body: string, timestamp: number) => string;
  signatureHeader: string;
  clock: Clock;
  ids: IdSource;
  /** Uniform [0, 1): backoff jitter. */
  random: () => number;
  log: Logger;
  config: ReportLoopConfig;
  /** Told of each acknowledged round's events (report latency); nothing by default. */
  telemetry?: ReportTelemetry | undefined;
}

const toRecord = (state: LaneState, previous: LaneRecord, attemptAt: number, error: string | null): LaneRecord => ({
  failures: state.failures,
  retryAt: state.retryAt,
  dndUntil: state.dndUntil,
  lastSuccessAt: state.lastSuccessAt,
  lastAttemptAt: attemptAt,
  lastError: error ?? previous.lastError,
  lastErrorAt: error === null ? previous.lastErrorAt : attemptAt,
});

/** One post as the report log keeps it (core/report-log.ts). */
const attemptOf = (
  reply: ClientReply,
  post: { reportId: string; at: number; latencyMs: number; items: number },
): ReportAttempt => ({
  ...post,
  ok: reply.ok,
  httpStatus: reply.httpStatus ?? null,
  errorCode: reply.ok ? null : reply.failure.code,
  error: reply.ok ? null : reply.failure.message,
});

type Events = ReturnType<ReportStore['pending']>;
type Acknowledged = Extract<ClientReply, { ok: true }>;
type Refused = Extract<ClientReply, { ok: false }>;
/** A post that was answered: the reply, and the attempt as the report log keeps it. */
type Posted<R extends ClientReply> = { reply: R; reportId: string; attempt: ReportAttempt; at: number };

/** Posts the events (signed when the tenant has a secret); null when the round was aborted meanwhile. */
async function postReport(
  deps: ReportLoopDeps,
  lane: Lane,
  to: ReportTarget,
  events: Events,
): Promise<Posted<ClientReply> | null> {
  const { clock, config } = deps;
  const body = reportBody(events);
  const reportId = deps.ids.uuid();
  const headers: Record<string, string> = { 'x-mailproxy-report-id': reportId };
  if (to.signingSecret !== null)
    headers[deps.signatureHeader] = deps.sign(to.signingSecret, body, Math.floor(clock.now() / 1000));
  const abort = new AbortController();
  lane.abort = abort;
  const postedAt = clock.now();
  const reply = await deps.transport.post(
    to,
    body,
    headers,
    AbortSignal.any([abort.signal, AbortSignal.timeout(config.requestTimeoutMs)]),
  );
  lane.abort = null;
  if (abort.signal.aborted) return null; // stopped or the tenant was deleted: nothing to record
  const at = clock.now();
  return {
    reply,
    reportId,
    at,
    attempt: attemptOf(reply, { reportId, at: postedAt, latencyMs: at - postedAt, items: events.length }),
  };
}

/** The client acknowledged: the cursor moves past the events, and the next round is set (at once when more wait). */
function onAcknowledged(
  deps: ReportLoopDeps,
  lane: Lane,
  events: Events,
  { reply, reportId, attempt, at }: Posted<Acknowledged>,
): void {
  const { config } = deps;
  const { policy } = config;
  const { lane: next, followUp } = afterSuccess(lane.state, reply, policy, at);
  lane.state = next;
  lane.record = toRecord(next, lane.record, at, null);
  deps.store.acknowledge(lane.tenantId, events, lane.record, {
    at,
    reportId: events.length > 0 ? reportId : null,
    attempt,
  });
  if (events.length > 0)
    deps.telemetry?.acknowledged(
      lane.tenantId,
      events.map((event) => at - event.at),
    );
  const more = events.length === config.batchSize;
  lane.dirty ||= more;
  if (followUp || more) lane.dueAt = at;
  else if (lane.dirty) lane.dueAt = at + config.batchDelayMs;
  else lane.dueAt = nextRoundAt(lane.state, policy, null, at);
  deps.log.debug(
    { tenantId: lane.tenantId, reportId, items: events.length, queued: reply.queued },
    'delivery report acknowledged',
  );
}

/** The post failed or was not acknowledged: the lane backs off and holds its events. */
function onRefused(
  deps: ReportLoopDeps,
  lane: Lane,
  events: Events,
  { reply, reportId, attempt, at }: Posted<Refused>,
): void {
  lane.state = afterFailure(lane.state, deps.config.policy, at, deps.random());
  lane.record = toRecord(lane.state, lane.record, at, `${reply.failure.code}: ${reply.failure.message}`);
  deps.store.saveLane(lane.tenantId, lane.record, attempt);
  lane.dueAt = lane.state.retryAt ?? at;
  lane.dirty ||= events.length > 0;
  lane.holding = lane.dirty;
  deps.log.warn(
    {
      tenantId: lane.tenantId,
      reportId,
      items: events.length,
      failures: lane.state.failures,
      code: reply.failure.code,
      reason: reply.failure.message,
      retryInMs: lane.dueAt - at,
    },
    'delivery report not acknowledged',
  );
}

export function createReportRound(deps: ReportLoopDeps): (lane: Lane) => Promise<void> {
  const { store, clock, log, config } = deps;
  const { policy } = config;

  /** Nobody to tell: outcomes are marked reported as they happen, so that retention applies. */
  const acknowledgeLocally = (lane: Lane, now: number): void => {
    const events = store.pending(lane.tenantId, config.batchSize);
    if (events.length > 0) store.acknowledge(lane.tenantId, events, lane.record, { at: now, reportId: null });
    lane.dirty = events.length === config.batchSize;
    lane.dueAt = lane.dirty ? now : Number.POSITIVE_INFINITY;
  };

  const target = (lane: Lane): ReportTarget | null => {
    const tenant = deps.tenants.get(lane.tenantId);
    const url = tenant === null ? null : syncUrl(tenant.clientBaseUrl, tenant.clientSyncPath);
    if (tenant === null || url === null) return null;
    return { tenantId: tenant.id, url, auth: tenant.clientAuth, signingSecret: tenant.clientSigningSecret };
  };

  const runRound = async (lane: Lane): Promise<void> => {
    const now = clock.now();
    lane.dirty = false;
    lane.holding = false;
    const to = lane.syncUrl === null ? null : target(lane);
    if (to === null) {
      acknowledgeLocally(lane, now);
      return;
    }
    const events = store.pending(lane.tenantId, config.batchSize);
    const dueAt = nextRoundAt(lane.state, policy, events[0]?.at ?? null, now);
    if (dueAt > now) {
      lane.dueAt = dueAt;
      lane.holding = events.length > 0;
      lane.dirty ||= events.length > 0;
      return;
    }
    const posted = await postReport(deps, lane, to, events);
    if (posted === null) return;
    const { reply } = posted;
    if (reply.ok) onAcknowledged(deps, lane, events, { ...posted, reply });
    else onRefused(deps, lane, events, { ...posted, reply });
  };

  return async (lane) => {
    try {
      await runRound(lane);
    } catch (error) {
      // The store refused (full, busy): the events stay past the cursor and are tried again,
      // backing off as after a failed post, since the client may be told the same items again.
      const now = clock.now();
      lane.state = afterFailure(lane.state, policy, now, deps.random());
      lane.record = toRecord(lane.state, lane.record, now, `store: ${(error as Error).message}`);
      lane.dirty = true;
      lane.dueAt = lane.state.retryAt ?? now;
      log.error({ err: error, tenantId: lane.tenantId, retryInMs: lane.dueAt - now }, 'delivery report round failed');
    }
  };
}
