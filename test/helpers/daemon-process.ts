/**
 * The real daemon as a child process (the built `dist/cli/main.js`), with its
 * stdout parsed as pino JSON lines so tests can await log events.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface LogEntry {
  level: string;
  msg: string;
  [field: string]: unknown;
}

export interface DaemonProcess {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  entries: LogEntry[];
  /** Resolves with the first log entry matching, or rejects when the process exits first. */
  waitForLog(match: (entry: LogEntry) => boolean): Promise<LogEntry>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * SMTP listens on a random port unless the test says otherwise: tests run side by side. Its
 * sessions run on the main thread unless the test says otherwise (the default follows the
 * machine's cores).
 */
export function spawnDaemon(args: string[], options: { cwd: string; env?: Record<string, string> }): DaemonProcess {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('MAILPROXY_')));
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: { MAILPROXY_SMTP_LISTEN: '127.0.0.1:0', MAILPROXY_SMTP_SESSION_PROCESSES: '0', ...env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const entries: LogEntry[] = [];
  const waiters: { match: (entry: LogEntry) => boolean; resolve: (entry: LogEntry) => void }[] = [];
  let buffered = '';

  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      stdout.push(line);
      const entry = JSON.parse(line) as LogEntry;
      entries.push(entry);
      for (const waiter of [...waiters]) {
        if (waiter.match(entry)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(entry);
        }
      }
      newline = buffered.indexOf('\n');
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

  return {
    child,
    stdout,
    stderr,
    entries,
    exited,
    waitForLog(match) {
      const seen = entries.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return Promise.race([
        new Promise<LogEntry>((resolve) => waiters.push({ match, resolve })),
        exited.then(({ code, signal }) => {
          const last = stdout.slice(-3).join('\n');
          throw new Error(
            `daemon exited (code ${code}, signal ${signal}) before the awaited log line; stderr: ${stderr.join('')}; last log lines: ${last}`,
          );
        }),
      ]);
    },
  };
}

/** `mailproxy serve` in `cwd`, added to `running` (for teardown), once its HTTP API listens. */
export async function serveUntilListening(
  cwd: string,
  env: Record<string, string>,
  running: DaemonProcess[],
): Promise<{ daemon: DaemonProcess; url: string }> {
  const daemon = spawnDaemon(['serve'], { cwd, env });
  running.push(daemon);
  const listening = await daemon.waitForLog((entry) => entry.msg === 'http listening');
  return { daemon, url: `http://127.0.0.1:${listening.port as number}` };
}
