import { describe, expect, it } from 'vitest';
import { createFailureThrottle } from './failure-throttle.js';

describe('failure throttle', () => {
  it('blocks a client after maxFailures within the window, until the oldest failure leaves it', () => {
    const throttle = createFailureThrottle({ maxFailures: 3, windowMs: 60_000 });
    throttle.recordFailure('a', 1_000);
    throttle.recordFailure('a', 2_000);
    expect(throttle.blockedForMs('a', 2_500)).toBe(0);
    throttle.recordFailure('a', 3_000);
    expect(throttle.blockedForMs('a', 3_000)).toBe(58_000);
    expect(throttle.blockedForMs('b', 3_000)).toBe(0);
    expect(throttle.blockedForMs('a', 61_000)).toBe(0);
  });

  it('forgets failures older than the window', () => {
    const throttle = createFailureThrottle({ maxFailures: 2, windowMs: 10_000 });
    throttle.recordFailure('a', 0);
    throttle.recordFailure('a', 20_000);
    expect(throttle.blockedForMs('a', 20_000)).toBe(0);
  });

  it('clears a client on success', () => {
    const throttle = createFailureThrottle({ maxFailures: 1, windowMs: 10_000 });
    throttle.recordFailure('a', 0);
    expect(throttle.blockedForMs('a', 1)).toBeGreaterThan(0);
    throttle.recordSuccess('a');
    expect(throttle.blockedForMs('a', 1)).toBe(0);
  });

  it('bounds its memory by forgetting the idlest client', () => {
    const throttle = createFailureThrottle({ maxFailures: 1, windowMs: 10_000, maxClients: 2 });
    throttle.recordFailure('a', 0);
    throttle.recordFailure('b', 1);
    throttle.recordFailure('c', 2);
    expect(throttle.blockedForMs('a', 3)).toBe(0);
    expect(throttle.blockedForMs('b', 3)).toBeGreaterThan(0);
    expect(throttle.blockedForMs('c', 3)).toBeGreaterThan(0);
  });
});
