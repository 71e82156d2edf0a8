/**
 * What a test of the real process starts, stopped for it: daemons still running
 * are killed and sinks stopped, after each test (`each`, the default) or once
 * after the file's last test (`file`, where one daemon serves every test);
 * directories go after the file, once what used them is stopped.
 * Call once at the top of a test file.
 */
import { rmSync } from 'node:fs';
import { afterAll, afterEach } from 'vitest';
import type { SmtpSink } from '../peers/smtp-sink.js';
import type { DaemonProcess } from './daemon-process.js';

export interface Started {
  dirs: string[];
  running: DaemonProcess[];
  sinks: SmtpSink[];
}

async function stopProcesses(started: Started): Promise<void> {
  for (const daemon of started.running.splice(0)) {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) {
      daemon.child.kill('SIGKILL');
      await daemon.exited;
    }
  }
  for (const sink of started.sinks.splice(0)) await sink.stop();
}

export function tearDownProcesses(options: { stop?: 'each' | 'file' } = {}): Started {
  const started: Started = { dirs: [], running: [], sinks: [] };
  if (options.stop !== 'file') afterEach(() => stopProcesses(started));
  // One hook for the file: vitest runs afterAll hooks in reverse, so the directories must go in the same one.
  afterAll(async () => {
    await stopProcesses(started);
    for (const dir of started.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return started;
}
