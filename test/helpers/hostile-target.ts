/**
 * The built daemon as a separate process, under attack: tenant `acme` with its
 * default account on a real SMTP sink, a read-only view of its database, and the
 * liveness check every hostile batch ends with (same pid, /health 200, no
 * error-level log line). Knows nothing of what the attack sends.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../peers/smtp-sink.js';
import { spawnDaemon, type DaemonProcess } from './daemon-process.js';
import type { Started } from './process-teardown.js';
import { api, type ApiResponse } from './test-daemon.js';

export interface HostileTarget {
  daemon: DaemonProcess;
  pid: number;
  url: string;
  smtpPort: number;
  adminToken: string;
  /** The API key of tenant `acme`. */
  key: string;
  sink: SmtpSink;
  /** Read-only: what the daemon committed, seen from another connection (WAL). */
  db: Database.Database;
  /** Its data directory (its secret key opens the bodies it stored: test/helpers/stored-body.ts). */
  dataDir: string;
  admin(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** Same process, /health answers 200, and no log line at error level or above so far. */
  expectAlive(): Promise<void>;
}

/** Log lines that are a bug wherever they come from: an unexpected error, a crash. */
export function errorLines(daemon: DaemonProcess): string[] {
  return daemon.entries
    .filter((entry) => entry.level === 'error' || entry.level === 'fatal' || Number(entry.level) >= 50)
    .map((entry) => JSON.stringify(entry).slice(0, 2000));
}

/**
 * Spawns `mailproxy serve` with `toml` appended to a config that pins random
 * ports and a temp data dir; registers it, its sink and its dir in `started`
 * (process-teardown.ts, with `stop: 'file'`: one daemon serves every test of a file).
 */
export async function startHostileTarget(
  started: Started,
  options: { toml?: string; sink?: SmtpSinkOptions; tenant?: Record<string, unknown> } = {},
): Promise<HostileTarget> {
  const sink = await startSmtpSink(options.sink);
  started.sinks.push(sink);
  const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-hostile-'));
  started.dirs.push(cwd);
  const dataDir = join(cwd, 'data');
  const config = join(cwd, 'config.toml');
  writeFileSync(config, `data_dir = "${dataDir}"\n[log]\nlevel = "info"\n${options.toml ?? ''}\n`);
  const daemon = spawnDaemon(['serve', '--config', config], { cwd, env: { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' } });
  started.running.push(daemon);
  const http = await daemon.waitForLog((entry) => entry.msg === 'http listening');
  const smtp = await daemon.waitForLog((entry) => entry.msg === 'smtp listening' && entry.listener === 'plain');
  await daemon.waitForLog((entry) => entry.msg === 'ready');
  const url = `http://127.0.0.1:${http.port as number}`;
  const adminToken = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const admin = (method: string, path: string, body?: unknown) => api(url, method, path, { token: adminToken, body });

  const tenant = await admin('POST', '/tenant', { id: 'acme', ...options.tenant });
  if (tenant.status !== 201) throw new Error(`tenant acme: ${tenant.text}`);
  const account = await admin('POST', '/account', {
    id: 'main',
    tenant_id: 'acme',
    host: '127.0.0.1',
    port: sink.port,
    tls_mode: 'none',
    is_default: true,
  });
  if (account.status >= 300) throw new Error(`account main: ${account.text}`);
  const pid = daemon.child.pid;
  if (pid === undefined) throw new Error('the daemon has no pid');

  return {
    daemon,
    pid,
    url,
    smtpPort: smtp.port as number,
    adminToken,
    key: tenant.body.api_key as string,
    sink,
    db: new Database(join(dataDir, 'mailproxy.db'), { readonly: true, fileMustExist: true }),
    dataDir,
    admin,
    async expectAlive() {
      expect(daemon.child.exitCode, `the daemon exited; stderr: ${daemon.stderr.join('')}`).toBeNull();
      expect(daemon.child.signalCode).toBeNull();
      expect(daemon.child.pid).toBe(pid);
      expect((await api(url, 'GET', '/health')).status).toBe(200);
      expect(errorLines(daemon)).toEqual([]);
    },
  };
}
