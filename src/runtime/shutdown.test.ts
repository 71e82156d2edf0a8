import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../core/logger.js';
import { installShutdownHandlers } from './shutdown.js';

/** A logger that keeps each message, so that a test can say what was logged without mocking pino. */
function recordingLogger(lines: string[]): Logger {
  const record = (fieldsOrMessage: Record<string, unknown> | string, message?: string): void => {
    lines.push(typeof fieldsOrMessage === 'string' ? fieldsOrMessage : (message ?? ''));
  };
  const log: Logger = { fatal: record, error: record, warn: record, info: record, debug: record, child: () => log };
  return log;
}

describe('installShutdownHandlers', () => {
  let signals: EventEmitter;
  let exits: number[];
  let lines: string[];
  beforeEach(() => {
    vi.useFakeTimers();
    signals = new EventEmitter();
    exits = [];
    lines = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const install = (stop: (deadlineMs: number) => Promise<void>) =>
    installShutdownHandlers({
      deadlineMs: 5000,
      log: recordingLogger(lines),
      stop,
      exit: (code) => exits.push(code),
      signals,
    });

  it('exits 0 once the orderly stop is done, giving it the whole deadline', async () => {
    const stop = vi.fn(async () => undefined);
    install(stop);
    signals.emit('SIGTERM', 'SIGTERM');
    await vi.runAllTimersAsync();
    expect(stop).toHaveBeenCalledWith(5000);
    expect(exits).toEqual([0]);
    expect(lines).toEqual(['shutting down', 'stopped']);
  });

  it('exits 1 at once on a second signal while the stop is still running', async () => {
    const stop = vi.fn(() => new Promise<void>(() => undefined));
    install(stop);
    signals.emit('SIGTERM', 'SIGTERM');
    await vi.advanceTimersByTimeAsync(100);
    expect(exits).toEqual([]);
    signals.emit('SIGINT', 'SIGINT');
    expect(exits).toEqual([1]);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(lines).toContain('second signal: exiting now');
  });

  it('exits 1 when the stop outlasts the deadline, and not before', async () => {
    install(() => new Promise<void>(() => undefined));
    signals.emit('SIGTERM', 'SIGTERM');
    await vi.advanceTimersByTimeAsync(4999);
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(exits).toEqual([1]);
    expect(lines).toContain('shutdown deadline passed: exiting now');
  });

  it('exits 1 when the stop fails', async () => {
    install(async () => {
      throw new Error('store would not close');
    });
    signals.emit('SIGTERM', 'SIGTERM');
    await vi.runAllTimersAsync();
    expect(exits).toEqual([1]);
    expect(lines).toContain('shutdown failed');
  });

  it('listens no more once uninstalled', () => {
    const uninstall = install(async () => undefined);
    uninstall();
    expect(signals.listenerCount('SIGTERM') + signals.listenerCount('SIGINT')).toBe(0);
  });
});
