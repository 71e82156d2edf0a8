import { describe, expect, it } from 'vitest';
import type { Logger } from '../core/logger.js';
import { closingReserveMs, createLifecycle, stopBudget, type Service } from './service.js';

function recordingLog(trail: string[]): Logger {
  const log = (fieldsOrMessage: Record<string, unknown> | string, message?: string): void => {
    trail.push(`log:${typeof fieldsOrMessage === 'string' ? fieldsOrMessage : message}`);
  };
  const logger: Logger = { fatal: log, error: log, warn: log, info: log, debug: log, child: () => logger };
  return logger;
}

/** A service that records its start and stop; its stop resolves when `release()` is called (or at once). */
function service(name: string, trail: string[], options: { failStart?: boolean; held?: boolean } = {}) {
  let release: () => void = () => undefined;
  const svc: Service & { release(): void } = {
    name,
    start: () => {
      trail.push(`start:${name}`);
      if (options.failStart) throw new Error(`${name} refused`);
    },
    stop: () => {
      trail.push(`stop:${name}`);
      if (!options.held) return undefined;
      return new Promise<void>((resolve) => (release = resolve));
    },
    release: () => release(),
  };
  return svc;
}

describe('the lifecycle', () => {
  it('starts stages in order and stops them in reverse, logging a stage as it stops', async () => {
    const trail: string[] = [];
    const lifecycle = createLifecycle(
      [
        { name: 'store', services: [service('store', trail)] },
        { name: 'work', services: [service('dispatcher', trail), service('reports', trail)] },
        {
          name: 'intake',
          services: [service('http', trail), service('smtp', trail)],
          stopping: 'listeners closed',
          stopped: 'intake closed',
        },
      ],
      recordingLog(trail),
    );
    await lifecycle.start();
    expect(trail).toEqual(['start:store', 'start:dispatcher', 'start:reports', 'start:http', 'start:smtp']);
    trail.length = 0;
    await lifecycle.stop(1000);
    expect(trail).toEqual([
      'stop:smtp',
      'stop:http',
      'log:listeners closed',
      'log:intake closed',
      'stop:reports',
      'stop:dispatcher',
      'stop:store',
    ]);
  });

  it('tells every service of a stage to stop before waiting for any, and waits for them all before the next stage', async () => {
    const trail: string[] = [];
    const http = service('http', trail, { held: true });
    const smtp = service('smtp', trail, { held: true });
    const lifecycle = createLifecycle(
      [
        { name: 'store', services: [service('store', trail)] },
        { name: 'intake', services: [http, smtp], stopping: 'listeners closed' },
      ],
      recordingLog(trail),
    );
    await lifecycle.start();
    trail.length = 0;
    const stopping = lifecycle.stop(1000);
    await Promise.resolve();
    expect(trail).toEqual(['stop:smtp', 'stop:http', 'log:listeners closed']);
    smtp.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(trail).not.toContain('stop:store');
    http.release();
    await stopping;
    expect(trail.at(-1)).toBe('stop:store');
  });

  it('stops what started when a start is refused, and throws', async () => {
    const trail: string[] = [];
    const lifecycle = createLifecycle(
      [
        { name: 'store', services: [service('store', trail)] },
        { name: 'stream', services: [service('mirror', trail, { failStart: true })] },
        { name: 'intake', services: [service('http', trail)] },
      ],
      recordingLog(trail),
    );
    await expect(lifecycle.start()).rejects.toThrow('mirror refused');
    expect(trail).toEqual(['start:store', 'start:mirror', 'stop:mirror', 'stop:store']);
  });

  it('stops once, however often it is asked, and logs a service that fails to stop without stopping the rest', async () => {
    const trail: string[] = [];
    const failing: Service = {
      name: 'broken',
      stop: () => {
        trail.push('stop:broken');
        throw new Error('boom');
      },
    };
    const lifecycle = createLifecycle(
      [
        { name: 'store', services: [service('store', trail)] },
        { name: 'work', services: [failing] },
      ],
      recordingLog(trail),
    );
    await lifecycle.start();
    await Promise.all([lifecycle.stop(100), lifecycle.stop(100)]);
    expect(trail.filter((entry) => entry.startsWith('stop:'))).toEqual(['stop:broken', 'stop:store']);
    expect(trail).toContain('log:service did not stop cleanly');
  });
});

describe('the stop budget', () => {
  it('keeps a reserve for the last steps out of the waits', () => {
    let now = 0;
    const budget = stopBudget(10_000, () => now);
    expect(closingReserveMs(10_000)).toBe(2000);
    expect(budget.waitLeft()).toBe(8000);
    expect(budget.left()).toBe(10_000);
    now = 9000;
    expect(budget.waitLeft()).toBe(0);
    expect(budget.left()).toBe(1000);
    expect(closingReserveMs(1000)).toBe(200);
  });
});
