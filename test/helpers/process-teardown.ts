/**
 * What a test of the real process starts, stopped for it: daemons still running
 * are killed and sinks stopped after each test; directories go after the file.
 * Call once at the top of a test file.
 */
import { rmSync } from 'node:fs';
import { afterAll, afterEach } from 'vitest';
import type { SmtpSink } from '../peers/smtp-sink.js';
import type { DaemonProcess } from './daemon-process.js';

export function tearDownProcesses(): { dirs: string[]; running: DaemonProcess[]; sinks: SmtpSink[] } {
  const started = { dirs: [] as string[], running: [] as DaemonProcess[], sinks: [] as SmtpSink[] };
  afterEach(async () => {
    for (const daemon of started.running.splice(0)) {
      if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
        daemon.child.kill('SIGKILL');
        await daemon.exited;
      }
    }
    for (const sink of started.sinks.splice(0)) await sink.stop();
  });
  afterAll(() => {
    for (const dir of started.dirs) rmSync(dir, { recursive: true, force: true });
  });
  return started;
}
