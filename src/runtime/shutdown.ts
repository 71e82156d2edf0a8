/**
 * Signal handling: the first SIGTERM/SIGINT starts an orderly stop under a
 * deadline; a second signal, or the deadline passing, forces the exit.
 */
import type { Logger } from '../core/index.js';

export interface ShutdownOptions {
  deadlineMs: number;
  log: Logger;
  /** Orderly stop; resolves when everything is closed. */
  stop(deadlineMs: number): Promise<void>;
  exit(code: number): void;
  /** Where SIGTERM and SIGINT come from; the process unless a test says otherwise. */
  signals?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
}

export function installShutdownHandlers(options: ShutdownOptions): () => void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      options.log.warn({ signal }, 'second signal: exiting now');
      options.exit(1);
      return;
    }
    stopping = true;
    options.log.info({ signal, deadlineMs: options.deadlineMs }, 'shutting down');
    const force = setTimeout(() => {
      options.log.error({ deadlineMs: options.deadlineMs }, 'shutdown deadline passed: exiting now');
      options.exit(1);
    }, options.deadlineMs);
    force.unref();
    options.stop(options.deadlineMs).then(
      () => {
        clearTimeout(force);
        options.log.info('stopped');
        options.exit(0);
      },
      (error: unknown) => {
        clearTimeout(force);
        options.log.error({ err: error }, 'shutdown failed');
        options.exit(1);
      },
    );
  };
  const signals = options.signals ?? process;
  signals.on('SIGTERM', onSignal);
  signals.on('SIGINT', onSignal);
  return () => {
    signals.off('SIGTERM', onSignal);
    signals.off('SIGINT', onSignal);
  };
}
