/**
 * The report loop: one lane per tenant, each with at most one round in flight,
 * so one client's slow or dead endpoint never delays another's reports. A
 * round is report-round.ts; when rounds are due is core/report/report-schedule.ts;
 * this is the scheduling on the wakeable loop: one step starts every round due
 * and arms the earliest next one (or the next rescan of tenants).
 */
import { createWakeableLoop, within } from '../runtime/index.js';
import { earliestDue, rescanLanes, type Lane } from './report-lanes.js';
import { createReportRound, type ReportLoopDeps } from './report-round.js';

export type { Lane } from './report-lanes.js';
export type { ReportLoopConfig, ReportLoopDeps } from './report-round.js';

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

/** After a step the store refused (reading the tenants): look again in a second. */
const RETRY_MS = 1000;

export function createReportLoop(deps: ReportLoopDeps): ReportLoop {
  const { store, clock, log, config } = deps;
  const lanes = new Map<string, Lane>();
  const runRound = createReportRound(deps);
  let nextRescanAt = 0;

  const rescan = (now: number): void => {
    nextRescanAt = now + config.rescanMs;
    rescanLanes(lanes, store.lanes(), now);
  };

  // A round runs beside the steps (a step never waits for a client); its end wakes a step to arm its lane again.
  const startRound = (lane: Lane): Promise<void> => {
    lane.round = runRound(lane).finally(() => {
      lane.round = null;
      loop.wake();
    });
    return lane.round;
  };

  const step = (now: number): { nextWakeAt: number | null; started: Promise<void>[] } => {
    if (loop.isStopped()) return { nextWakeAt: null, started: [] };
    if (now >= nextRescanAt) rescan(now);
    const started = [...lanes.values()].filter((lane) => lane.round === null && lane.dueAt <= now).map(startRound);
    return { nextWakeAt: earliestDue(lanes, nextRescanAt), started };
  };
  const loop = createWakeableLoop({
    name: 'reports',
    step,
    recover: (_error, now) => ({ nextWakeAt: now + RETRY_MS, started: [] }),
    clock,
    log,
  });

  return {
    start() {
      if (loop.isRunning()) return;
      rescan(clock.now());
      loop.start();
    },
    async tick() {
      await Promise.all((await loop.tick()).started);
    },
    notify(tenantId) {
      const lane = lanes.get(tenantId);
      if (lane === undefined) {
        nextRescanAt = 0; // a tenant created since the last rescan
        return loop.wake();
      }
      lane.dirty = true;
      if (lane.holding || lane.round !== null || loop.isStopped()) return;
      const soon = clock.now() + config.batchDelayMs;
      if (soon < lane.dueAt) {
        lane.dueAt = soon;
        loop.wake();
      }
    },
    refresh(tenantId) {
      nextRescanAt = 0;
      const lane = lanes.get(tenantId);
      if (lane !== undefined && lane.round === null) {
        Object.assign(lane, { dirty: true, holding: false, dueAt: clock.now() });
        lane.state = { ...lane.state, retryAt: null };
      }
      loop.wake();
    },
    async stop(graceMs = 0) {
      await loop.stop(graceMs);
      const rounds = Promise.all([...lanes.values()].map((lane) => lane.round));
      await within(rounds, graceMs);
      // What is still in flight is abandoned: its items are posted again after the restart.
      for (const lane of lanes.values()) lane.abort?.abort();
      await rounds;
    },
    lanes: () => lanes,
  };
}
