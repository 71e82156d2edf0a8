/**
 * A periodic loop: runs `run` every `intervalMs`, never two at once; a failing
 * run is logged and the loop goes on. `tick()` runs it once for tests.
 */
import type { Logger } from '../core/logger.js';

export interface PeriodicLoop {
  start(): void;
  tick(): Promise<void>;
  stop(): Promise<void>;
}

export function createPeriodicLoop(options: { name: string; intervalMs: number; run: () => void | Promise<void>; log: Logger }): PeriodicLoop {
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<void> | null = null;

  const tick = (): Promise<void> => {
    current ??= (async () => {
      try {
        await options.run();
      } catch (error) {
        options.log.error({ err: error, loop: options.name }, 'loop run failed');
      } finally {
        current = null;
      }
    })();
    return current;
  };

  return {
    start() {
      if (timer !== null) return;
      timer = setInterval(() => void tick(), options.intervalMs);
      timer.unref();
    },
    tick,
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await current;
    },
  };
}
