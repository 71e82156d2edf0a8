/** `mailproxy serve`: runs the daemon until SIGTERM/SIGINT (SIGHUP re-reads the SMTP certificate). */
import { formatListenAddress, isWildcard, loadConfig, localHttpUrl, type ListenAddress } from '../config/index.js';
import { startDaemon, type Daemon } from '../main.js';
import { createLogger, installShutdownHandlers, randomIds, systemClock } from '../runtime/index.js';
import { EXIT_CONFIG } from './cli-error.js';

/** Start refusals an operator fixes by hand (another daemon, a node id taken): their one-line reason goes to stderr too. */
const SAID_ON_STDERR = new Set(['DATA_DIR_IN_USE', 'FLEET_NODE_ID_IN_USE', 'FLEET_NODE_ID_MISMATCH']);

export interface ServeArgs {
  config: string | undefined;
}

export function parseServeArgs(args: string[], env: Record<string, string | undefined>): ServeArgs | string {
  let config = env.MAILPROXY_CONFIG || undefined;
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (arg === '--config' || arg === '-c') {
      const value = args[index + 1];
      if (value === undefined || value.startsWith('-')) return `${arg} needs a file`;
      config = value;
      index += 1;
    } else if (arg.startsWith('--config=')) {
      config = arg.slice('--config='.length);
    } else {
      return `unknown option for serve: ${arg}`;
    }
  }
  return { config };
}

export async function serve(args: ServeArgs, version: string): Promise<void> {
  const loaded = loadConfig(args.config, process.env);
  if (!loaded.ok) {
    process.stderr.write(
      `mailproxy: invalid configuration (${loaded.problems.length} problem${loaded.problems.length === 1 ? '' : 's'}):\n`,
    );
    for (const problem of loaded.problems) process.stderr.write(`  - ${problem}\n`);
    process.exit(EXIT_CONFIG);
  }
  const config = loaded.config;
  const log = createLogger({ level: config.log.level });
  const exit = (code: number): void => {
    log.flush();
    process.exitCode = code;
    // Give the async log destination a turn to drain before leaving.
    setImmediate(() => process.exit(code));
  };
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled promise rejection');
    exit(1);
  });

  log.info({ version, dataDir: config.data_dir, config: args.config ?? null }, 'starting');
  let daemon: Daemon;
  try {
    daemon = await startDaemon({ config, log, clock: systemClock, ids: randomIds, version });
  } catch (error) {
    log.fatal({ err: error }, 'failed to start');
    // Said on stderr too, in one line: the operator who typed `serve` beside a running daemon reads it there.
    if (SAID_ON_STDERR.has(String((error as { code?: unknown }).code)))
      process.stderr.write(`mailproxy: ${(error as Error).message}\n`);
    exit(1);
    return;
  }
  installShutdownHandlers({ deadlineMs: daemon.shutdownMs, log, stop: daemon.stop, exit });
  const smtp = daemon.smtp;
  // SIGHUP: a renewed certificate is taken without closing a listener.
  process.on('SIGHUP', () => {
    log.info({ signal: 'SIGHUP' }, smtp === null ? 'nothing to reload' : 'reloading the smtp tls certificate');
    smtp?.reloadTls();
  });
  log.info(whereToLook(daemon.http), 'ready');
}

/**
 * The first thing a new operator looks for in the start-up log: the web console
 * and the API's documentation, as URLs to open. A wildcard listener has no
 * address of its own: the URLs use loopback, and the line says so.
 */
export function whereToLook(http: ListenAddress): Record<string, string> {
  const url = localHttpUrl(http);
  const where = { console: `${url}/ui`, docs: `${url}/docs` };
  if (!isWildcard(http.host)) return where;
  return {
    ...where,
    note: `listening on every address (${formatListenAddress(http)}): from another machine use this one's address`,
  };
}
