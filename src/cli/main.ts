#!/usr/bin/env node
/**
 * The `mailproxy` command. Exit codes follow sysexits: 64 usage, 78 invalid
 * configuration, 1 any other failure to start.
 */
import { readFileSync } from 'node:fs';
import { analyseBounce } from '../bounce/bounce-parser.js';
import { parseReportOf } from '../bounce/parse-report.js';
import { loadConfig } from '../config/index.js';
import { startDaemon } from '../main.js';
import { createLogger, installShutdownHandlers, randomIds, systemClock } from '../runtime/index.js';

export const EXIT_USAGE = 64;
export const EXIT_CONFIG = 78;

const USAGE = `usage: mailproxy <command> [options]

commands:
  serve [--config FILE]   run the daemon (FILE may also come from MAILPROXY_CONFIG;
                          without one it runs on embedded defaults)
  bounce parse FILE       print what the bounce parser makes of one message (.eml)

options:
  -h, --help              show this help
  -v, --version           print the version
`;

interface ServeArgs {
  config: string | undefined;
}

function parseServeArgs(args: string[]): ServeArgs | string {
  let config = process.env.MAILPROXY_CONFIG || undefined;
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

async function serve(args: ServeArgs): Promise<void> {
  const loaded = loadConfig(args.config, process.env);
  if (!loaded.ok) {
    process.stderr.write(`mailproxy: invalid configuration (${loaded.problems.length} problem${loaded.problems.length === 1 ? '' : 's'}):\n`);
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

  log.info({ version: version(), dataDir: config.data_dir, config: args.config ?? null }, 'starting');
  let daemon;
  try {
    daemon = await startDaemon({ config, log, clock: systemClock, ids: randomIds });
  } catch (error) {
    log.fatal({ err: error }, 'failed to start');
    exit(1);
    return;
  }
  installShutdownHandlers({ deadlineMs: config.shutdown_timeout_seconds * 1000, log, stop: daemon.stop, exit });
  const smtp = daemon.smtp;
  // SIGHUP: a renewed certificate is taken without closing a listener.
  process.on('SIGHUP', () => {
    log.info({ signal: 'SIGHUP' }, smtp === null ? 'nothing to reload' : 'reloading the smtp tls certificate');
    smtp?.reloadTls();
  });
  log.info('ready');
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    process.stdout.write(USAGE);
    process.exitCode = command === undefined ? EXIT_USAGE : 0;
    return;
  }
  if (command === '-v' || command === '--version') {
    process.stdout.write(`${version()}\n`);
    return;
  }
  if (command === 'serve') {
    const args = parseServeArgs(rest);
    if (typeof args === 'string') {
      process.stderr.write(`mailproxy: ${args}\n\n${USAGE}`);
      process.exit(EXIT_USAGE);
    }
    await serve(args);
    return;
  }
  if (command === 'bounce' && rest[0] === 'parse' && rest.length === 2) {
    await parseBounceFile(rest[1] as string);
    return;
  }
  process.stderr.write(`mailproxy: unknown command: ${command}\n\n${USAGE}`);
  process.exit(EXIT_USAGE);
}

/** `mailproxy bounce parse FILE`: the parser's verdict as one JSON object (the first failed recipient's, and all of them). */
async function parseBounceFile(file: string): Promise<void> {
  process.stdout.write(`${JSON.stringify(parseReportOf(await analyseBounce(readFileSync(file))))}\n`);
}

await main(process.argv.slice(2));
