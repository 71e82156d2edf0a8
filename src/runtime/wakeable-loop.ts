/**
 * One wakeable loop: what every long-lived loop (dispatcher, mirror, report
 * lanes, mailbox watchers, periodic store work) needs beyond its own step.
 * It runs `step(now)` never twice at once, coalesces wakes, keeps one timer
 * armed at the instant the step names, logs a step that throws and goes on,
 * and stops under a deadline. Plain scheduling, no library: every room may
 * import it; what a step does is the room's.
 */
import type { Clock, Logger } from '../core/index.js';
import { within } from './within.js';

/**
 * What a step answers: when it wants the next step, in epoch ms of the loop's
 * clock (now or earlier: at once; null or +Infinity: only when woken).
 */
export interface StepReport {
  nextWakeAt: number | null;
}

export interface WakeableLoopOptions<R extends StepReport> {
  /** Named in the log line of a failed step. */
  name: string;
  step: (now: number) => R | Promise<R>;
  /**
   * A step threw (a bug or a store that refused, not an expected outcome):
   * after the error is logged, what tick() resolves with; the loop arms at its `nextWakeAt`.
   */
  recover: (error: unknown, now: number) => R;
  clock: Clock;
  log: Logger;
  /** How long a wake() waits for more wakes to join it (0: the next turn of the event loop). */
  wakeDelayMs?: number;
  /**
   * Under a stream of wakes, the least time between the starts of two woken steps: a wake this
   * soon after a step began waits for the rest of it, and the wakes meanwhile join it. A wake
   * after a quiet spell is taken at once (`wakeDelayMs`), so a lone event waits for nothing;
   * a step that asks for the next at once (its `nextWakeAt`) is not held back either.
   */
  wakeSpacingMs?: number;
}

export interface WakeableLoop<R extends StepReport> {
  /** Arms the first step at `firstStepAt` (default: now; null: the first wake). Idempotent while running. */
  start(firstStepAt?: number | null): void;
  /**
   * A step soon (after `wakeDelayMs`, or what is left of `wakeSpacingMs`), never in the
   * caller's turn: a caller inside a store transaction commits before the step reads. Wakes
   * before the step coalesce; a wake during a step asks for exactly one more. Nothing before
   * start() or after stop().
   */
  wake(): void;
  /** Runs a step now and resolves with its report; during a step, resolves after one more (for tests). */
  tick(): Promise<R>;
  /** Arms nothing more, drops pending wakes, then waits for the step in flight: until `deadlineMs` when given. */
  stop(deadlineMs?: number): Promise<void>;
  /** Between start() and stop(). */
  isRunning(): boolean;
  /** stop() was called (and start() not again since). */
  isStopped(): boolean;
}

/** The longest delay setTimeout keeps (a 32-bit signed count of ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The loop's ways to ask for a step later, each pending at most once: the next turn, after a delay, at a timer. */
function stepTimers(fire: () => void) {
  let timer: NodeJS.Timeout | null = null;
  let delayed: NodeJS.Timeout | null = null;
  let immediate: NodeJS.Immediate | null = null;
  const clearTimer = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  return {
    /** A step in the next turn; several asked for in one turn are one. */
    soon(): void {
      if (immediate !== null) return;
      immediate = setImmediate(() => {
        immediate = null;
        fire();
      });
    },
    /** A step `delayMs` after the first ask; asks meanwhile join it. */
    after(delayMs: number): void {
      if (delayed !== null) return;
      delayed = setTimeout(() => {
        delayed = null;
        fire();
      }, delayMs);
      delayed.unref();
    },
    /** The one timer, replacing the one set before. Beyond a timer's range it would fire at once: a step then, and it arms again. */
    armIn(delayMs: number): void {
      clearTimer();
      timer = setTimeout(fire, Math.min(delayMs, MAX_TIMER_MS));
      timer.unref();
    },
    clearTimer,
    clearAll(): void {
      clearTimer();
      if (delayed !== null) clearTimeout(delayed);
      if (immediate !== null) clearImmediate(immediate);
      delayed = null;
      immediate = null;
    },
  };
}

export function createWakeableLoop<R extends StepReport>(options: WakeableLoopOptions<R>): WakeableLoop<R> {
  const { clock, log } = options;
  let running = false;
  let stopped = false;
  let current: Promise<R> | null = null;
  let again = false;
  let stepStartedAt = Number.NEGATIVE_INFINITY;
  const timers = stepTimers(() => void tick());

  const runStep = async (): Promise<R> => {
    stepStartedAt = clock.now();
    try {
      return await options.step(stepStartedAt);
    } catch (error) {
      log.error({ err: error, loop: options.name }, 'loop step failed');
      return options.recover(error, clock.now());
    }
  };

  const run = async (): Promise<R> => {
    let report = await runStep();
    while (again && !stopped) {
      again = false;
      report = await runStep();
    }
    again = false;
    arm(report.nextWakeAt);
    return report;
  };

  function tick(): Promise<R> {
    if (current !== null) {
      again = true;
      return current;
    }
    // `finally` runs after the assignment, even when the step completes synchronously.
    current = run().finally(() => {
      current = null;
    });
    return current;
  }

  function arm(at: number | null): void {
    timers.clearTimer();
    if (at === null || at === Number.POSITIVE_INFINITY || !running) return;
    const delayMs = at - clock.now();
    if (delayMs <= 0) timers.soon();
    else timers.armIn(delayMs);
  }

  return {
    start(firstStepAt: number | null = clock.now()) {
      if (running) return;
      running = true;
      stopped = false;
      arm(firstStepAt);
    },
    wake() {
      if (!running) return;
      // A clock set back (a wall clock stepped by NTP) counts as a quiet spell, never as a long hold.
      const sinceStep = clock.now() - stepStartedAt;
      const spacing = options.wakeSpacingMs ?? 0;
      const held = sinceStep >= 0 && sinceStep < spacing ? spacing - sinceStep : 0;
      const delayMs = Math.max(options.wakeDelayMs ?? 0, held);
      if (delayMs <= 0) timers.soon();
      else timers.after(delayMs);
    },
    tick,
    async stop(deadlineMs) {
      running = false;
      stopped = true;
      timers.clearAll();
      if (current === null) return;
      await (deadlineMs === undefined ? current : within(current, deadlineMs));
    },
    isRunning: () => running,
    isStopped: () => stopped,
  };
}
