/**
 * Failure throttle: after `maxFailures` failed attempts from one client within
 * `windowMs`, that client is blocked until the oldest failure leaves the window.
 * Pure and clock-free: callers pass the current instant. Memory is bounded by
 * `maxClients`; when full, the client idle longest is forgotten.
 */

export interface FailureThrottleOptions {
  maxFailures: number;
  windowMs: number;
  maxClients?: number;
}

export interface FailureThrottle {
  /** Milliseconds until the client may try again; 0 when not blocked. */
  blockedForMs(client: string, now: number): number;
  recordFailure(client: string, now: number): void;
  recordSuccess(client: string): void;
}

export function createFailureThrottle(options: FailureThrottleOptions): FailureThrottle {
  const maxClients = options.maxClients ?? 10_000;
  // Insertion order of a Map doubles as recency order: touching a client re-inserts it.
  const failures = new Map<string, number[]>();

  const recent = (client: string, now: number): number[] => {
    const times = failures.get(client);
    if (times === undefined) return [];
    const kept = times.filter((at) => now - at < options.windowMs);
    if (kept.length === 0) failures.delete(client);
    else failures.set(client, kept);
    return kept;
  };

  return {
    blockedForMs(client, now) {
      const times = recent(client, now);
      if (times.length < options.maxFailures) return 0;
      const oldestCounted = times[times.length - options.maxFailures] ?? now;
      return Math.max(1, oldestCounted + options.windowMs - now);
    },
    recordFailure(client, now) {
      const times = recent(client, now);
      times.push(now);
      failures.delete(client);
      failures.set(client, times.slice(-options.maxFailures));
      if (failures.size > maxClients) {
        const idlest = failures.keys().next().value;
        if (idlest !== undefined) failures.delete(idlest);
      }
    },
    recordSuccess(client) {
      failures.delete(client);
    },
  };
}
