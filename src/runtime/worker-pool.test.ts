import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import { createWorkerPool, workerScript } from './worker-pool.js';

// The task module is plain JavaScript on the compiled serveTasks, as in production.
const dir = mkdtempSync(join(tmpdir(), 'mailproxy-pool-'));
const script = pathToFileURL(join(dir, 'task.mjs'));
writeFileSync(
  script,
  `
import { threadId } from 'node:worker_threads';
import { serveTasks, threadLogger } from ${JSON.stringify(workerScript(import.meta.url, './worker-task.js').href)};
const log = threadLogger('info', { component: 'task' });
serveTasks(async (input) => {
  if (input.op === 'log') { log.debug({ n: input.value }, 'not at this level'); log.warn({ n: input.value, err: new Error('boom') }, 'told'); return null; }
  if (input.op === 'slow') { await new Promise((resolve) => setTimeout(resolve, input.value)); return { threadId }; }
  if (input.op === 'die') process.exit(3);
  if (input.op === 'throw') throw new Error('bad input: ' + input.value);
  if (input.op === 'bytes') return { length: new Uint8Array(input.value).length, threadId };
  return { doubled: input.value * 2, threadId };
});
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const log = createLogger({ level: 'silent' });

describe('worker pool', () => {
  it('answers each task from a worker thread, spreading tasks over the workers', async () => {
    const pool = createWorkerPool<{ op: string; value: number }, { doubled: number; threadId: number }>({
      script,
      size: 2,
      name: 'test',
      log,
    });
    try {
      const results = await Promise.all(Array.from({ length: 20 }, (_, value) => pool.run({ op: 'double', value })));
      expect(results.map((result) => result.doubled)).toEqual(Array.from({ length: 20 }, (_, value) => value * 2));
      expect(new Set(results.map((result) => result.threadId)).size).toBe(2);
      expect(pool.pending()).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('moves a transferred buffer instead of copying it', async () => {
    const pool = createWorkerPool<{ op: string; value: ArrayBuffer }, { length: number }>({
      script,
      size: 1,
      name: 'test',
      log,
    });
    try {
      const buffer = new ArrayBuffer(1024);
      expect(await pool.run({ op: 'bytes', value: buffer }, [buffer])).toMatchObject({ length: 1024 });
      expect(buffer.byteLength).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('turns a task that throws into an error for that task only', async () => {
    const pool = createWorkerPool<{ op: string; value: number }, { doubled: number }>({
      script,
      size: 1,
      name: 'test',
      log,
    });
    try {
      await expect(pool.run({ op: 'throw', value: 7 })).rejects.toMatchObject({
        code: 'INTERNAL',
        message: 'bad input: 7',
      });
      await expect(pool.run({ op: 'double', value: 4 })).resolves.toMatchObject({ doubled: 8 });
    } finally {
      await pool.close();
    }
  });

  it('fails the tasks of a worker that dies as transient, and replaces the worker', async () => {
    const pool = createWorkerPool<{ op: string; value: number }, { doubled: number }>({
      script,
      size: 1,
      name: 'test',
      log,
      respawnPauseMs: 0,
    });
    try {
      await expect(pool.run({ op: 'die', value: 0 })).rejects.toMatchObject({ code: 'UNAVAILABLE', transient: true });
      expect(pool.ready()).toBe(true);
      await expect(pool.run({ op: 'double', value: 21 })).resolves.toMatchObject({ doubled: 42 });
    } finally {
      await pool.close();
    }
  });

  it('pauses before replacing a worker that died young, refusing its tasks meanwhile as transient', async () => {
    const pool = createWorkerPool<{ op: string; value: number }, { doubled: number }>({
      script,
      size: 1,
      name: 'test',
      log,
      respawnPauseMs: 60_000,
    });
    try {
      await expect(pool.run({ op: 'die', value: 0 })).rejects.toMatchObject({ transient: true });
      await expect(pool.run({ op: 'double', value: 1 })).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        transient: true,
        message: 'test worker is restarting',
      });
      expect(pool.ready()).toBe(false);
    } finally {
      await pool.close();
    }
  });

  it('sends tasks of one affinity key to one worker', async () => {
    const pool = createWorkerPool<{ op: string; value: number }, { threadId: number }>({
      script,
      size: 3,
      name: 'test',
      log,
    });
    try {
      const threads = await Promise.all(
        Array.from({ length: 12 }, () => pool.run({ op: 'slow', value: 5 }, [], 'tenant/account')),
      );
      expect(new Set(threads.map((result) => result.threadId)).size).toBe(1);
      const spread = await Promise.all(Array.from({ length: 12 }, () => pool.run({ op: 'slow', value: 5 })));
      expect(new Set(spread.map((result) => result.threadId)).size).toBe(3);
    } finally {
      await pool.close();
    }
  });

  it("writes a worker's log lines through the pool's logger, at its level, errors reduced to plain data", async () => {
    const lines: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
    const record = (level: string) => (fields: Record<string, unknown>, message: string) =>
      lines.push({ level, fields, message });
    const capture = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
      fatal: record('fatal'),
      child: () => capture,
    };
    const pool = createWorkerPool<{ op: string; value: number }, null>({
      script,
      size: 1,
      name: 'test',
      log: capture as never,
    });
    try {
      await pool.run({ op: 'log', value: 7 });
      expect(lines).toEqual([
        {
          level: 'warn',
          message: 'told',
          fields: { component: 'task', n: 7, err: expect.objectContaining({ type: 'Error', message: 'boom' }) },
        },
      ]);
    } finally {
      await pool.close();
    }
  });

  it('runs a farewell task on every worker before closing', async () => {
    const pool = createWorkerPool<{ op: string; value: number }, { threadId: number }>({
      script,
      size: 2,
      name: 'test',
      log,
    });
    const started = Date.now();
    await pool.close({ op: 'slow', value: 100 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('refuses an input that cannot cross to a thread, without losing the tasks sent with it', async () => {
    const pool = createWorkerPool<{ op: string; value: unknown }, { doubled: number; length: number }>({
      script,
      size: 1,
      name: 'test',
      log,
    });
    try {
      const buffer = new ArrayBuffer(64);
      const [before, broken, transferred] = await Promise.allSettled([
        pool.run({ op: 'double', value: 2 }),
        pool.run({ op: 'double', value: () => 1 }),
        pool.run({ op: 'bytes', value: buffer }, [buffer]),
      ]);
      expect(before).toMatchObject({ status: 'fulfilled', value: { doubled: 4 } });
      expect(broken).toMatchObject({ status: 'rejected', reason: { code: 'INTERNAL' } });
      expect(transferred).toMatchObject({ status: 'fulfilled', value: { length: 64 } });
      expect(pool.pending()).toBe(0);
      await expect(pool.run({ op: 'double', value: 5 })).resolves.toMatchObject({ doubled: 10 });
    } finally {
      await pool.close();
    }
  });

  it('refuses work once closed', async () => {
    const pool = createWorkerPool<{ op: string; value: number }, { doubled: number }>({
      script,
      size: 1,
      name: 'test',
      log,
    });
    await pool.close();
    await expect(pool.run({ op: 'double', value: 1 })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(pool.ready()).toBe(false);
  });
});
