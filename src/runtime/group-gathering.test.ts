import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { groupGathering } from './group-gathering.js';

describe('groupGathering', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const gathering = () => groupGathering({ holdMs: 2, streamMs: 20, now: () => Date.now() });

  it('gathers a lone group in the next turn, without waiting', async () => {
    const defer = gathering();
    const gather = vi.fn();
    defer(gather);
    expect(gather).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(0);
    expect(gather).toHaveBeenCalledTimes(1);
  });

  it('holds a group that follows another within the stream window, then goes after the hold', async () => {
    const defer = gathering();
    const first = vi.fn();
    defer(first);
    await vi.advanceTimersByTimeAsync(0);
    vi.advanceTimersByTime(5);
    const second = vi.fn();
    defer(second);
    await vi.advanceTimersByTimeAsync(1);
    expect(second).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(second).toHaveBeenCalledTimes(1);
  });

  it('waits for nothing again once the groups stopped for the stream window', async () => {
    const defer = gathering();
    defer(vi.fn());
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(20);
    const later = vi.fn();
    defer(later);
    await vi.advanceTimersByTimeAsync(0);
    expect(later).toHaveBeenCalledTimes(1);
  });
});
