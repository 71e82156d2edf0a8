/**
 * The daemon's lifecycle: its long-lived parts (services) in stages, started in
 * order and stopped in reverse under one deadline. A stage's services start one
 * after another and stop together: the listeners of the intake stage all close
 * at once, then what is in flight gets the time that is left.
 */
import type { Logger } from '../core/index.js';

/** How much of the stop's deadline is left: to wait for work in flight, and for the last steps. */
export interface StopBudget {
  /** Milliseconds to wait for work in flight: the deadline less a reserve for the steps that follow. */
  waitLeft(): number;
  /** Milliseconds to the deadline itself. */
  left(): number;
}

export interface Service {
  readonly name: string;
  /** Throws to refuse the start (a conflicting stream, a port in use): what started stops again. */
  start?(): void | Promise<void>;
  /** Idempotent; never throws for a part that did not start. */
  stop(budget: StopBudget): void | Promise<void>;
}

export interface Stage {
  name: string;
  services: readonly Service[];
  /** Logged once every service of the stage was told to stop, before waiting for them. */
  stopping?: string;
  /** Logged once they all stopped. */
  stopped?: string;
}

export interface Lifecycle {
  start(): Promise<void>;
  stop(deadlineMs: number): Promise<void>;
}

/** Kept back from the waits for what must follow them: handing back leases, the last events, closing the store. */
const MAX_CLOSING_RESERVE_MS = 2000;

export function closingReserveMs(deadlineMs: number): number {
  return Math.min(MAX_CLOSING_RESERVE_MS, Math.floor(deadlineMs / 5));
}

export function stopBudget(deadlineMs: number, now: () => number = Date.now): StopBudget {
  const deadline = now() + deadlineMs;
  const waitUntil = deadline - closingReserveMs(deadlineMs);
  return { waitLeft: () => Math.max(0, waitUntil - now()), left: () => Math.max(0, deadline - now()) };
}

export function createLifecycle(stages: readonly Stage[], log: Logger): Lifecycle {
  /** The stages whose services started (the last one perhaps in part), in start order. */
  const started: Array<{ stage: Stage; services: Service[] }> = [];
  let stopping: Promise<void> | null = null;

  const stopAll = async (deadlineMs: number): Promise<void> => {
    const budget = stopBudget(deadlineMs);
    for (const { stage, services } of [...started].reverse()) {
      const stops = services.reverse().map(async (service) => {
        try {
          await service.stop(budget);
        } catch (error) {
          log.error({ err: error, service: service.name }, 'service did not stop cleanly');
        }
      });
      if (stage.stopping !== undefined) log.info({ leftMs: budget.left() }, stage.stopping);
      await Promise.all(stops);
      if (stage.stopped !== undefined) log.info({ leftMs: budget.left() }, stage.stopped);
    }
    started.length = 0;
  };

  return {
    async start() {
      try {
        for (const stage of stages) {
          const services: Service[] = [];
          started.push({ stage, services });
          for (const service of stage.services) {
            services.push(service);
            await service.start?.();
          }
        }
      } catch (error) {
        await stopAll(0);
        throw error;
      }
    },
    stop(deadlineMs) {
      stopping ??= stopAll(deadlineMs);
      return stopping;
    },
  };
}
