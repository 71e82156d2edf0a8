/**
 * An in-process daemon on a random port with a temporary data directory,
 * logging real pino JSON lines into memory so tests can assert on them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../src/config/index.js';
import { startDaemon, type Daemon } from '../../src/main.js';
import type { Clock } from '../../src/core/clock.js';
import { createLogger, randomIds } from '../../src/runtime/index.js';

export interface TestDaemon {
  url: string;
  dataDir: string;
  adminToken: string;
  /** Every log line written so far, raw. */
  logLines: string[];
  daemon: Daemon;
  stop(): Promise<void>;
  /** Removes the data directory (after stop). */
  cleanup(): void;
}

/** Real time plus an offset the test can move forward: expiry and windows without waiting. */
export interface TestClock extends Clock {
  advance(ms: number): void;
}

export function createTestClock(): TestClock {
  let offsetMs = 0;
  return {
    now: () => Date.now() + offsetMs,
    advance: (ms) => {
      offsetMs += ms;
    },
  };
}

export async function startTestDaemon(
  extraToml = '',
  clock: Clock = createTestClock(),
  existingDataDir?: string,
  env: Record<string, string> = {},
): Promise<TestDaemon> {
  const dataDir = existingDataDir ?? mkdtempSync(join(tmpdir(), 'mailproxy-test-'));
  // The environment overrides pin what every test needs; `extraToml` sets the rest.
  const parsed = parseConfig(extraToml, {
    MAILPROXY_DATA_DIR: dataDir,
    MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
    MAILPROXY_SMTP_LISTEN: '127.0.0.1:0',
    MAILPROXY_LOG_LEVEL: 'debug',
    // On the main thread whatever the machine's cores, unless the run says otherwise (vitest.config.ts
    // runs the SMTP suites again with sessions in processes of their own, `[smtp] session_processes`).
    MAILPROXY_SMTP_SESSION_PROCESSES: process.env.MAILPROXY_SMTP_SESSION_PROCESSES ?? '0',
    ...env,
  });
  if (!parsed.ok) throw new Error(`test config invalid: ${parsed.problems.join('; ')}`);
  const logLines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void logLines.push(line) } });
  const daemon = await startDaemon({ config: parsed.config, log, clock, ids: randomIds });
  let stopped = false;
  return {
    url: `http://127.0.0.1:${daemon.http.port}`,
    dataDir,
    adminToken: readFileSync(join(dataDir, 'admin-token'), 'utf8').trim(),
    logLines,
    daemon,
    async stop() {
      if (stopped) return;
      stopped = true;
      await daemon.stop(2000);
    },
    cleanup() {
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface ApiResponse {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

/** A small JSON client: `token` is sent as a bearer token; `body` may be an object, raw text or raw bytes. */
export async function api(
  base: string,
  method: string,
  path: string,
  options: { token?: string | undefined; body?: unknown; headers?: Record<string, string> | undefined } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined;
  if (options.body !== undefined) {
    body =
      typeof options.body === 'string' || options.body instanceof Uint8Array
        ? options.body
        : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(base + path, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}
