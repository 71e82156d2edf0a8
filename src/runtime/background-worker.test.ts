import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../core/logger.js';
import { startBackgroundWorker } from './background-worker.js';

const dir = mkdtempSync(join(tmpdir(), 'mailproxy-bg-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Dies on its first start; the second one reports, then stops cleanly when asked (leaving a mark).
const script = pathToFileURL(join(dir, 'loop.mjs'));
writeFileSync(script, `
import { existsSync, writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
if (!existsSync(workerData.started)) { writeFileSync(workerData.started, ''); process.exit(1); }
parentPort.postMessage({ error: 'second start' });
parentPort.on('message', (message) => { if (message === 'stop') { writeFileSync(workerData.stopped, ''); parentPort.close(); } });
`);

function recordingLog(seen: string[], onSeen: () => void): Logger {
  const log: Logger = {
    info: () => undefined,
    debug: () => undefined,
    error: (_fields: object, message: string) => seen.push(message),
    warn: (_fields: object, message: string) => {
      seen.push(message);
      onSeen();
    },
    child: () => log,
  } as unknown as Logger;
  return log;
}

describe('background worker', () => {
  it('starts again after dying, reports what the worker says, and stops when asked', async () => {
    const seen: string[] = [];
    let reported!: () => void;
    const secondStart = new Promise<void>((resolve) => (reported = resolve));
    const data = { started: join(dir, 'started'), stopped: join(dir, 'stopped') };
    const worker = startBackgroundWorker({
      script,
      name: 'loop',
      data,
      respawnPauseMs: 10,
      log: recordingLog(seen, () => seen.includes('loop: second start') && reported()),
    });
    await secondStart;
    expect(seen).toContain('loop exited; starting another');
    await worker.stop(5000);
    expect(existsSync(data.stopped)).toBe(true);
  });
});
