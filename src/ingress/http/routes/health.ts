/** Liveness (public, no dependencies) and readiness (store answers, loops running). */
import { Hono } from 'hono';
import type { HttpEnv } from '../env.js';

/** One named readiness check; it throws (or answers false) when not ready. */
export interface ReadinessCheck {
  name: string;
  check(): boolean;
}

/**
 * `details` adds what an operator wants to see beside readiness without it
 * deciding readiness (the event mirror: NATS away does not stop intake).
 */
export function healthRoutes(checks: readonly ReadinessCheck[], details: () => Record<string, unknown> = () => ({})): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', (c) => {
    const results = Object.fromEntries(
      checks.map((entry) => {
        try {
          return [entry.name, entry.check() ? 'ok' : 'not ready'];
        } catch (error) {
          return [entry.name, error instanceof Error ? error.message : 'failed'];
        }
      }),
    );
    const ready = Object.values(results).every((state) => state === 'ok');
    return c.json({ ready, checks: results, details: details() }, ready ? 200 : 503);
  });
  return app;
}
