import { describe, expect, it } from 'vitest';
import { createConnectionTracker } from './connection-tracker.js';

describe('createConnectionTracker', () => {
  it('times a queued message from the moment a connection frees up for it, not from its handoff', () => {
    let now = 0;
    const tracker = createConnectionTracker(1, () => now);
    const first = tracker.enqueue();
    const second = tracker.enqueue(); // waits behind the first on the only connection
    expect(tracker.inUse()).toBe(1);
    now = 40;
    expect(tracker.finish(first)).toBe(40);
    now = 70;
    expect(tracker.finish(second)).toBe(30);
    expect(tracker.inUse()).toBe(0);
  });

  it('gives no duration to a message that never got a connection, and frees none for it', () => {
    const tracker = createConnectionTracker(1, () => 0);
    const onWire = tracker.enqueue();
    const queued = tracker.enqueue();
    expect(tracker.finish(queued)).toBeUndefined();
    expect(tracker.inUse()).toBe(1);
    tracker.finish(onWire);
    expect(tracker.inUse()).toBe(0);
  });

  it('counts sockets opened and closed, never below zero', () => {
    const tracker = createConnectionTracker(2);
    tracker.opened();
    tracker.opened();
    tracker.closed();
    expect(tracker.open()).toBe(1);
    tracker.closed();
    tracker.closed();
    expect(tracker.open()).toBe(0);
  });
});
