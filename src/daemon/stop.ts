/**
 * The daemon's ordered stop under one deadline: intake first, then the sends
 * and report rounds in flight, then the hand-back, the event stream and the
 * store, last. The signal handler (runtime/shutdown.ts) forces the exit should
 * this itself outlast the deadline.
 */
import type { Logger } from '../core/logger.js';

export interface StoppableDaemon {
  http: { close(deadlineMs: number): Promise<void> } | null;
  smtp: { close(deadlineMs: number): Promise<void> } | null;
  mirror: { stopCommands(): Promise<void>; stop(graceMs: number): Promise<void> };
  bounces: { stop(): Promise<void> };
  /** Waits for its sends until the deadline, then hands the unfinished ones back to the queue. */
  dispatcher: { stop(deadlineMs: number): Promise<void> };
  /** Lets a report round in flight finish within the grace, then aborts it. */
  reports: { stop(graceMs: number): Promise<void> };
  /** Periodic store work (retention, search index): nothing of theirs is worth waiting for. */
  loops: { stop(): Promise<void> }[];
  handoff: { close(): Promise<void> };
  parserPool: { close(): Promise<void> } | null;
  checkpointer: { stop(): Promise<void> };
  store: { close(): void };
}

/** Kept back from the waits for what must follow them: handing back leases, the last events, closing the store. */
const MAX_CLOSING_RESERVE_MS = 2000;

export function closingReserveMs(deadlineMs: number): number {
  return Math.min(MAX_CLOSING_RESERVE_MS, Math.floor(deadlineMs / 5));
}

/** Waits for `work`, or for `ms`, whichever comes first. */
async function within(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export async function stopDaemon(daemon: StoppableDaemon, deadlineMs: number, log: Logger): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  const waitUntil = deadline - closingReserveMs(deadlineMs);
  const waitLeft = (): number => Math.max(0, waitUntil - Date.now());
  const left = (): number => Math.max(0, deadline - Date.now());

  // Intake: no new connection, request or command; a request or DATA in the middle may finish.
  // The listeners close synchronously inside these calls, before the line below is logged.
  const intake = Promise.all([
    daemon.http?.close(waitLeft()),
    daemon.smtp?.close(waitLeft()),
    daemon.mirror.stopCommands(),
    within(daemon.bounces.stop(), waitLeft()),
  ]);
  log.info({ leftMs: left() }, 'listeners closed; finishing the submissions in flight');
  await intake;
  log.info({ leftMs: left() }, 'intake closed; waiting for sends and report rounds in flight');
  // In flight: sends and report posts finish until the reserve; the rest goes back to the queue.
  await Promise.all([daemon.dispatcher.stop(waitLeft()), daemon.reports.stop(waitLeft()), ...daemon.loops.map((loop) => loop.stop())]);
  // A relay thread stuck on a silent server must not hold the rest; the process exit ends it.
  await within(daemon.handoff.close(), left() / 2);
  await daemon.mirror.stop(left() / 2);
  await daemon.parserPool?.close();
  await daemon.checkpointer.stop();
  daemon.store.close();
}
