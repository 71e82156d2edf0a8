/** Liveness (public, no dependencies) and readiness (store answers, loops running). */
import { Hono } from 'hono';
import type { HttpEnv } from '../env.js';
import { json, on, type RouteDoc } from '../route-doc.js';
import { healthAnswer, notReadyAnswer, readyAnswer } from '../view-schemas/operations.js';

/** One named readiness check; it throws (or answers false) when not ready. */
export interface ReadinessCheck {
  name: string;
  check(): boolean;
}

export const HEALTH_ROUTES = {
  health: {
    method: 'get',
    path: '/health',
    tag: 'Health',
    summary: 'Liveness',
    access: 'public',
    responses: { 200: json('while the process answers', healthAnswer) },
  },
  ready: {
    method: 'get',
    path: '/ready',
    tag: 'Health',
    summary: 'Readiness: the store answers, the dispatcher and the parser threads run',
    description:
      "`details.mirror`: the event mirror's state; `details.bounce`: each bounce mailbox's `state` and `connected` (an IMAP server down does not make the daemon unready).",
    access: 'public',
    responses: {
      200: json('ready', readyAnswer),
      503: json('not ready: the same shape, naming what is not ready in `checks`', notReadyAnswer),
    },
  },
} as const satisfies Record<string, RouteDoc>;

/**
 * `details` adds what an operator wants to see beside readiness without it
 * deciding readiness (the event mirror: NATS away does not stop intake).
 */
export function healthRoutes(
  checks: readonly ReadinessCheck[],
  details: () => Record<string, unknown> = () => ({}),
): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  on(app, HEALTH_ROUTES.health, (c) => c.json({ status: 'ok' }));
  on(app, HEALTH_ROUTES.ready, (c) => {
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
