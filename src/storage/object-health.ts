/**
 * A body store's health as GET /status and /ready show it: failing from a failed operation until
 * one succeeds again, with the last reason and when. Every backend's operations go through here.
 */
import type { BodyObjects, BodyStoreHealth } from '../core/message/index.js';

/** A backend's operations; health() is added by `withHealth`. */
export type ObjectBackend = Omit<BodyObjects, 'health'>;

export function withHealth(backend: BodyStoreHealth['backend'], inner: ObjectBackend, now: () => number): BodyObjects {
  let failing = false;
  let lastError: BodyStoreHealth['last_error'] = null;
  const watched =
    <A extends unknown[], R>(operation: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        const answer = await operation(...args);
        failing = false;
        return answer;
      } catch (error) {
        failing = true;
        lastError = { reason: error instanceof Error ? error.message : String(error), at_ts: Math.floor(now() / 1000) };
        throw error;
      }
    };
  const probe = watched(async () => {
    if (!(await inner.probe())) throw new Error('the body store does not answer');
    return true;
  });
  return {
    put: watched(inner.put),
    get: watched(inner.get),
    remove: watched(inner.remove),
    list: watched(inner.list),
    probe: () => probe().catch(() => false),
    close: () => inner.close(),
    health: () => ({ backend, state: failing ? 'failing' : 'ok', last_error: lastError }),
  };
}
