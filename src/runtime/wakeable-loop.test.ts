import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../core/logger.js';
import { createWakeableLoop, type StepReport } from './wakeable-loop.js';

/** A logger that keeps each line's message and fields, so that a test can say what was logged. */
function recordingLogger(lines: Array<{ message: string; fields: Record<string, unknown> }>): Logger {
  const record = (fields: Record<string, unknown> | string, message?: string): void => {
    lines.push(typeof fields === 'string' ? { message: fields, fields: {} } : { message: message ?? '', fields });
  };
  const log: Logger = { fatal: record, error: record, warn: record, info: record, debug: record, child: () => log };
  return log;
}

/** A step the test ends by hand: each call waits for `finish()`. */
function gatedStep() {
  const calls: number[] = [];
  let active = 0;
  let maxActive = 0;
  const gates: Array<() => void> = [];
  const step = async (now: number): Promise<StepReport> => {
    calls.push(now);
    active += 1;
    maxActive = Math.max(maxActive, active);
    await new Promise<void>((resolve) => gates.push(resolve));
    active -= 1;
    return { nextWakeAt: null };
  };
  return { step, calls, maxActive: () => maxActive, finish: () => gates.shift()?.() };
}

describe('the wakeable loop', () => {
  const clock = { now: () => Date.now() };
  let lines: Array<{ message: string; fields: Record<string, unknown> }>;
  beforeEach(() => {
    vi.useFakeTimers();
    lines = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const loopOf = (step: (now: number) => StepReport | Promise<StepReport>, wakeDelayMs = 0) =>
    createWakeableLoop({
      name: 'test',
      step,
      recover: () => ({ nextWakeAt: null }),
      clock,
      log: recordingLogger(lines),
      wakeDelayMs,
    });

  it('never runs two steps at once: ticks during a step run exactly one more after it', async () => {
    const gated = gatedStep();
    const loop = loopOf(gated.step);
    const first = loop.tick();
    const second = loop.tick();
    const third = loop.tick();
    expect(second).toBe(first);
    expect(third).toBe(first);
    expect(gated.calls).toHaveLength(1);
    gated.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(gated.calls).toHaveLength(2);
    gated.finish();
    await first;
    expect(gated.maxActive()).toBe(1);
    expect(gated.calls).toHaveLength(2);
  });

  it('coalesces the wakes of one turn into one step, taken in a later turn', async () => {
    const step = vi.fn((): StepReport => ({ nextWakeAt: null }));
    const loop = loopOf(step);
    loop.start(null);
    for (let index = 0; index < 5; index += 1) loop.wake();
    expect(step).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(0);
    expect(step).toHaveBeenCalledTimes(1);
  });

  it('lets wakes within wakeDelayMs join one step', async () => {
    const step = vi.fn((): StepReport => ({ nextWakeAt: null }));
    const loop = loopOf(step, 50);
    loop.start(null);
    loop.wake();
    await vi.advanceTimersByTimeAsync(30);
    loop.wake();
    await vi.advanceTimersByTimeAsync(19);
    expect(step).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(step).toHaveBeenCalledTimes(1);
  });

  it('under wakeSpacingMs, takes a lone wake at once and holds a wake that follows a step too soon', async () => {
    const step = vi.fn((): StepReport => ({ nextWakeAt: null }));
    const loop = createWakeableLoop({
      name: 'test',
      step,
      recover: () => ({ nextWakeAt: null }),
      clock,
      log: recordingLogger(lines),
      wakeSpacingMs: 5,
    });
    loop.start(null);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(step).toHaveBeenCalledTimes(1);
    // 2 ms after that step began: held for the 3 ms left, and the wakes meanwhile join it.
    await vi.advanceTimersByTimeAsync(2);
    loop.wake();
    await vi.advanceTimersByTimeAsync(1);
    loop.wake();
    await vi.advanceTimersByTimeAsync(1);
    expect(step).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(step).toHaveBeenCalledTimes(2);
    // After a quiet spell a wake waits for nothing.
    await vi.advanceTimersByTimeAsync(100);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(step).toHaveBeenCalledTimes(3);
  });

  it('under wakeSpacingMs, takes a wake at once when the clock was set back since the last step', async () => {
    let offset = 0;
    const steppedBack = { now: () => Date.now() + offset };
    const step = vi.fn((): StepReport => ({ nextWakeAt: null }));
    const loop = createWakeableLoop({
      name: 'test',
      step,
      recover: () => ({ nextWakeAt: null }),
      clock: steppedBack,
      log: recordingLogger(lines),
      wakeSpacingMs: 5,
    });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(step).toHaveBeenCalledTimes(1);
    offset = -3_600_000;
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(step).toHaveBeenCalledTimes(2);
  });

  it('under wakeSpacingMs, does not hold back a step that asks for the next at once', async () => {
    let left = 3;
    const step = vi.fn((now: number): StepReport => ({ nextWakeAt: (left -= 1) > 0 ? now : null }));
    const loop = createWakeableLoop({
      name: 'test',
      step,
      recover: () => ({ nextWakeAt: null }),
      clock,
      log: recordingLogger(lines),
      wakeSpacingMs: 50,
    });
    loop.start();
    // Each step in a turn of its own, none of them 50 ms apart.
    for (let turn = 0; turn < 3; turn += 1) await vi.advanceTimersByTimeAsync(1);
    expect(step).toHaveBeenCalledTimes(3);
  });

  it('a wake during a step asks for exactly one more step', async () => {
    const gated = gatedStep();
    const loop = loopOf(gated.step);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(gated.calls).toHaveLength(1);
    loop.wake();
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    gated.finish();
    await vi.advanceTimersByTimeAsync(0);
    gated.finish();
    await vi.advanceTimersByTimeAsync(1000);
    expect(gated.calls).toHaveLength(2);
  });

  it('arms one timer at the next wake instant the step names, and none for null', async () => {
    const start = Date.now();
    const wakes = [start + 1000, start + 1500, null];
    const calls: number[] = [];
    const loop = loopOf((now) => {
      calls.push(now - start);
      return { nextWakeAt: wakes.shift() ?? null };
    });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(999);
    expect(calls).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual([0, 1000]);
    await vi.advanceTimersByTimeAsync(500);
    expect(calls).toEqual([0, 1000, 1500]);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(calls).toEqual([0, 1000, 1500]);
  });

  it('replaces the armed timer when a step names another instant', async () => {
    const start = Date.now();
    const calls: number[] = [];
    let nextWakeAt: number | null = start + 10_000;
    const loop = loopOf((now) => {
      calls.push(now - start);
      return { nextWakeAt };
    });
    await loop.tick();
    loop.start(start + 10_000);
    nextWakeAt = start + 20_000;
    await loop.tick();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual([0, 0]);
    nextWakeAt = null;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual([0, 0, 20_000]);
  });

  it('waits for the step in flight at stop only until the deadline, and arms nothing after', async () => {
    const gated = gatedStep();
    const loop = loopOf(gated.step);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    let stopped = false;
    const stopping = loop.stop(100).then(() => (stopped = true));
    loop.wake();
    await vi.advanceTimersByTimeAsync(99);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopping;
    expect(loop.isRunning()).toBe(false);
    gated.finish();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(gated.calls).toHaveLength(1);
  });

  it('stops at once when no step is in flight, dropping a pending wake', async () => {
    const step = vi.fn((): StepReport => ({ nextWakeAt: Date.now() + 10 }));
    const loop = loopOf(step);
    loop.start(null);
    loop.wake();
    await loop.stop(5000);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(step).not.toHaveBeenCalled();
    expect(loop.isStopped()).toBe(true);
  });

  it('logs a step that throws, resolves with the recovery report and tries again when it says', async () => {
    const start = Date.now();
    let failures = 1;
    const calls: number[] = [];
    const loop = createWakeableLoop<StepReport & { ok: boolean }>({
      name: 'flaky',
      step: (now) => {
        calls.push(now - start);
        if (failures-- > 0) throw new Error('store busy');
        return { ok: true, nextWakeAt: null };
      },
      recover: (_error, now) => ({ ok: false, nextWakeAt: now + 1000 }),
      clock,
      log: recordingLogger(lines),
    });
    loop.start(null);
    expect(await loop.tick()).toEqual({ ok: false, nextWakeAt: start + 1000 });
    expect(lines).toEqual([
      {
        message: 'loop step failed',
        fields: { err: expect.objectContaining({ message: 'store busy' }), loop: 'flaky' },
      },
    ]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toEqual([0, 1000]);
  });

  it('does nothing on a wake before start', async () => {
    const step = vi.fn((): StepReport => ({ nextWakeAt: null }));
    const loop = loopOf(step);
    loop.wake();
    await vi.advanceTimersByTimeAsync(1000);
    expect(step).not.toHaveBeenCalled();
    expect(loop.isRunning()).toBe(false);
  });
});
