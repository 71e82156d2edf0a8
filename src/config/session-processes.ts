/**
 * `smtp.session_processes` when the configuration does not say. Session
 * processes cost CPU in all (IPC on both sides) to take SMTP work off the main
 * thread, which is the daemon's ceiling on any machine: worth it only with
 * cores to spare. Below 4 cores the sessions stay on the main thread (measured
 * on 2 cores: one process, 6-8% more CPU in all for a third less on the main
 * thread; two, a third to a half more; README "Threads"). From 4 cores, one
 * process per 4 cores, at most 8: each process serves many sessions per
 * wake-up, which is what keeps its cost down.
 */
export function defaultSessionProcesses(cores: number): number {
  if (cores < 4) return 0;
  return Math.min(8, Math.floor(cores / 4));
}
