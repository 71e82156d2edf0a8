/**
 * A periodic loop: runs `run` every `intervalMs` on the wakeable loop (never
 * two at once; a failing run is logged and the loop goes on). `tick()` runs it
 * once for tests; a tick during a run asks for one more after it.
 */
import type { Clock, Logger } from '../core/index.js';
import { systemClock } from './system.js';
import { createWakeableLoop } from './wakeable-loop.js';

export interface PeriodicLoop {
  start(): void;
  tick(): Promise<void>;
  stop(): Promise<void>;
}

export function createPeriodicLoop(options: {
  name: string;
  intervalMs: number;
  run: () => void | Promise<void>;
  log: Logger;
  clock?: Clock;
}): PeriodicLoop {
  const clock = options.clock ?? systemClock;
  const next = (now: number) => ({ nextWakeAt: now + options.intervalMs });
  const loop = createWakeableLoop({
    name: options.name,
    step: async (now) => {
      await options.run();
      return next(now);
    },
    recover: (_error, now) => next(now),
    clock,
    log: options.log,
  });
  return {
    start: () => loop.start(clock.now() + options.intervalMs),
    tick: async () => {
      await loop.tick();
    },
    stop: () => loop.stop(),
  };
}
