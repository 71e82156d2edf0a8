/**
 * The report loop: one lane per tenant, each with at most one round in flight,
 * so one client's slow or dead endpoint never delays another's reports. A
 * round reads the tenant's oldest unreported events, posts them (or a
 * heartbeat) and, on an acknowledgement, moves the tenant's cursor past them.
 * When rounds are due is core/report-schedule.ts; this is the mechanics:
 * timers, wake-ups, timeouts, stopping.
 */
import type { Clock, IdSource } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { TenantRepository } from '../core/ports.js';
import { afterFailure, afterSuccess, nextRoundAt, type LaneState, type ReportPolicy } from '../core/report-schedule.js';
import type { ReportTelemetry } from '../core/telemetry.js';
import { reportBody } from '../core/contracts/delivery-report.js';
import { syncUrl, type LaneRecord, type ReportLane, type ReportStore, type ReportTarget, type ReportTransport } from '../core/report.js';

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
  telemetry?: ReportTelemetry;
}

/** What the loop knows of one tenant beyond what is stored. */
export interface Lane {
  tenantId: string;
  /** Null: nobody to tell (outcomes are marked reported locally). */
  syncUrl: string | null;
  state: LaneState;
  record: LaneRecord;
  /** Events may be waiting that no round has read yet. */
  dirty: boolean;
  /** The last round found events it had to hold (backoff or do-not-disturb) until `dueAt`. */
  holding: boolean;
  dueAt: number;
  round: Promise<void> | null;
  abort: AbortController | null;
}

export interface ReportLoop {
  start(): void;
  /** Starts every round due now and resolves when those rounds are over. */
  tick(): Promise<void>;
  /** A reportable event of the tenant was written: a round soon, unless the lane is holding anyway. */
  notify(tenantId: string): void;
  /**
   * A tenant was created, changed or deleted: tenants are re-read at once, and
   * the tenant's lane tries now rather than after its backoff (an operator who
   * fixed the endpoint expects the backlog to move).
   */
  refresh(tenantId: string): void;
  /**
   * No new round starts; rounds in flight may finish (and be acknowledged)
   * within `graceMs`, then are aborted and nothing of theirs is acknowledged.
   */
  stop(graceMs?: number): Promise<void>;
  lanes(): ReadonlyMap<string, Readonly<Lane>>;
}

export function createReportLoop(deps: ReportLoopDeps): ReportLoop {
  const { store, clock, log, config } = deps;
  const { policy } = config;
  const lanes = new Map<string, Lane>();
  let timer: NodeJS.Timeout | null = null;
  let nextRescanAt = 0;
  let running = false;
  let stopping = false;

  const newLane = (stored: ReportLane, now: number): Lane => ({
    tenantId: stored.tenantId,
    syncUrl: stored.syncUrl,
    state: { failures: stored.record.failures, retryAt: stored.record.retryAt, dndUntil: stored.record.dndUntil, lastSuccessAt: stored.record.lastSuccessAt, followups: 0 },
    record: stored.record,
    // After a start nobody knows what is waiting: look.
    dirty: true,
    holding: false,
    dueAt: now,
    round: null,
    abort: null,
  });

  const rescan = (now: number): void => {
    nextRescanAt = now + config.rescanMs;
    const seen = new Set<string>();
    for (const stored of store.lanes()) {
      seen.add(stored.tenantId);
      const lane = lanes.get(stored.tenantId);
      if (lane === undefined) lanes.set(stored.tenantId, newLane(stored, now));
      else if (lane.syncUrl !== stored.syncUrl) Object.assign(lane, { syncUrl: stored.syncUrl, dirty: true, holding: false, dueAt: now });
    }
    for (const [tenantId, lane] of lanes) {
      if (seen.has(tenantId)) continue;
      lane.abort?.abort();
      lanes.delete(tenantId);
    }
  };

  const toRecord = (state: LaneState, previous: LaneRecord, attemptAt: number, error: string | null): LaneRecord => ({
    failures: state.failures,
    retryAt: state.retryAt,
    dndUntil: state.dndUntil,
    lastSuccessAt: state.lastSuccessAt,
    lastAttemptAt: attemptAt,
    lastError: error ?? previous.lastError,
    lastErrorAt: error === null ? previous.lastErrorAt : attemptAt,
  });

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

    const body = reportBody(events);
    const reportId = deps.ids.uuid();
    const headers: Record<string, string> = { 'x-mailproxy-report-id': reportId };
    if (to.signingSecret !== null) headers[deps.signatureHeader] = deps.sign(to.signingSecret, body, Math.floor(clock.now() / 1000));
    const abort = new AbortController();
    lane.abort = abort;
    const reply = await deps.transport.post(to, body, headers, AbortSignal.any([abort.signal, AbortSignal.timeout(config.requestTimeoutMs)]));
    lane.abort = null;
    if (abort.signal.aborted) return; // stopped or the tenant was deleted: nothing to record
    const at = clock.now();

    if (reply.ok) {
      const { lane: next, followUp } = afterSuccess(lane.state, reply, policy, at);
      lane.state = next;
      lane.record = toRecord(next, lane.record, at, null);
      store.acknowledge(lane.tenantId, events, lane.record, { at, reportId: events.length > 0 ? reportId : null });
      if (events.length > 0) deps.telemetry?.acknowledged(lane.tenantId, events.map((event) => at - event.at));
      const more = events.length === config.batchSize;
      lane.dirty ||= more;
      if (followUp || more) lane.dueAt = at;
      else if (lane.dirty) lane.dueAt = at + config.batchDelayMs;
      else lane.dueAt = nextRoundAt(lane.state, policy, null, at);
      log.debug({ tenantId: lane.tenantId, reportId, items: events.length, queued: reply.queued }, 'delivery report acknowledged');
      return;
    }
    lane.state = afterFailure(lane.state, policy, at, deps.random());
    lane.record = toRecord(lane.state, lane.record, at, `${reply.failure.code}: ${reply.failure.message}`);
    store.saveLane(lane.tenantId, lane.record);
    lane.dueAt = lane.state.retryAt ?? at;
    lane.dirty ||= events.length > 0;
    lane.holding = lane.dirty;
    log.warn({ tenantId: lane.tenantId, reportId, items: events.length, failures: lane.state.failures, code: reply.failure.code, reason: reply.failure.message, retryInMs: lane.dueAt - at }, 'delivery report not acknowledged');
  };

  const startRound = (lane: Lane): Promise<void> => {
    const round = (async () => {
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
      } finally {
        lane.round = null;
        arm();
      }
    })();
    lane.round = round;
    return round;
  };

  const tick = async (): Promise<void> => {
    if (stopping) return;
    const now = clock.now();
    if (now >= nextRescanAt) rescan(now);
    const started: Promise<void>[] = [];
    for (const lane of lanes.values()) {
      if (lane.round === null && lane.dueAt <= now) started.push(startRound(lane));
    }
    arm();
    await Promise.all(started);
  };

  /** One timer for all lanes: the earliest due round, and the next rescan at the latest. */
  function arm(): void {
    if (!running || stopping) return;
    let earliest = nextRescanAt;
    for (const lane of lanes.values()) if (lane.round === null && lane.dueAt < earliest) earliest = lane.dueAt;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(() => void tick(), Math.max(0, earliest - clock.now()));
    timer.unref();
  }

  return {
    start() {
      if (running) return;
      running = true;
      rescan(clock.now());
      arm();
    },
    tick,
    notify(tenantId) {
      const lane = lanes.get(tenantId);
      if (lane === undefined) {
        nextRescanAt = 0; // a tenant created since the last rescan
        arm();
        return;
      }
      lane.dirty = true;
      if (lane.holding || lane.round !== null || stopping) return;
      const soon = clock.now() + config.batchDelayMs;
      if (soon < lane.dueAt) {
        lane.dueAt = soon;
        arm();
      }
    },
    refresh(tenantId) {
      nextRescanAt = 0;
      const lane = lanes.get(tenantId);
      if (lane !== undefined && lane.round === null) {
        Object.assign(lane, { dirty: true, holding: false, dueAt: clock.now() });
        lane.state = { ...lane.state, retryAt: null };
      }
      arm();
    },
    async stop(graceMs = 0) {
      stopping = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      const rounds = Promise.all([...lanes.values()].map((lane) => lane.round));
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([rounds, new Promise<void>((resolve) => (grace = setTimeout(resolve, graceMs)))]);
      clearTimeout(grace);
      // What is still in flight is abandoned: its items are posted again after the restart.
      for (const lane of lanes.values()) lane.abort?.abort();
      await rounds;
    },
    lanes: () => lanes,
  };
}
