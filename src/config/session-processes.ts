/**
 * `smtp.session_processes` when the configuration does not say. Session
 * processes cost CPU in all (IPC on both sides) to take SMTP work off the main
 * thread, which is the daemon's ceiling on any machine: worth it only with
 * cores to spare. Below 4 cores they run on the main thread (measured on 2
 * cores: slower keep-alive, README "Threads"); from 4, one process per 4 cores,
 * at most 8.
 */
export function defaultSessionProcesses(cores: number): number {
  if (cores < 4) return 0;
  return Math.min(8, Math.floor(cores / 4));
}
