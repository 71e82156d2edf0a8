#!/usr/bin/env node
/**
 * The `mailproxy` command: `serve` runs the daemon; the admin verbs talk to a
 * running daemon's HTTP API (command.ts); `backup` and `restore` copy its
 * database; `keys rotate` replaces its master key, offline. Exit codes follow
 * sysexits (cli-error.ts).
 */
import { readFileSync } from 'node:fs';
import { mailproxyVersion } from '../runtime/index.js';
import { EXIT_OK, EXIT_USAGE } from './cli-error.js';
import { commandHelp, runCommand, type CliContext, type Command } from './command.js';
import { accountsCommand } from './verbs/accounts.js';
import { backupCommand } from './verbs/backup.js';
import { configCommand } from './verbs/config-check.js';
import { eraseCommand } from './verbs/erase.js';
import { fleetCommand } from './verbs/fleet.js';
import { keysCommand } from './verbs/keys.js';
import { messagesCommand } from './verbs/messages.js';
import { activateCommand, queueCommand, suspendCommand } from './verbs/queue.js';
import { restoreCommand } from './verbs/restore.js';
import { routesCommand } from './verbs/routes.js';
import { domainsCommand } from './verbs/domains.js';
import { suppressionsCommand } from './verbs/suppressions.js';
import { tenantsCommand, tokenCommand } from './verbs/tenants.js';
import { unsubscribeCommand } from './verbs/unsubscribe.js';
import { mcpCommand } from './verbs/mcp.js';

export { EXIT_CONFIG, EXIT_USAGE } from './cli-error.js';

const COMMANDS: readonly Command[] = [
  configCommand,
  tenantsCommand,
  accountsCommand,
  routesCommand,
  domainsCommand,
  unsubscribeCommand,
  messagesCommand,
  suppressionsCommand,
  queueCommand,
  suspendCommand,
  activateCommand,
  eraseCommand,
  tokenCommand,
  backupCommand,
  restoreCommand,
  keysCommand,
  fleetCommand,
  mcpCommand,
];

const USAGE = `usage: mailproxy <command> [options]

daemon:
  serve [-c FILE]              run the daemon (FILE may also come from MAILPROXY_CONFIG;
                               without one it runs on embedded defaults)
  config check [-c FILE]       validate the configuration, print it with secrets redacted

administration (talks to the running daemon's API):
  tenants list|show|add|delete
  accounts list|show|add|delete
  routes show|set|test         a tenant's routing rules, and where a message would go
  messages list|show|retry|bulk
  suppressions list|add|delete
  queue stats
  suspend|activate [--tenant T] [--batch B]
  erase [ID...|--address A|--whole-tenant]  erase personal data on request (cannot be undone)
  token rotate TENANT
  fleet status|drain           the fleet as this node sees it; drain this node before it leaves
  backup FILE                  a consistent copy of the database, taken while it runs
  restore FILE                 put a backup in place (the daemon stopped)
  keys rotate [--new-key-file F]  replace the master secret key (the daemon stopped)

  bounce parse FILE            print what the bounce parser makes of one message (.eml)
  pec parse FILE               print what the PEC receipt parser makes of one message (.eml)

  mailproxy help COMMAND, or mailproxy COMMAND --help, for a command's verbs and options.
  The daemon's URL comes from --url, MAILPROXY_URL or the config's http.listen; the admin
  token from --token, MAILPROXY_TOKEN, the config's http.admin_token or <data_dir>/admin-token.
  --json prints the API's JSON. A verb that acts on one tenant takes --tenant T, which may be
  left out while the daemon has exactly one tenant.

exit codes: 0 ok, 1 failed (the daemon refused, a check failed), 64 usage, 69 daemon
unreachable, 77 no token or token refused, 78 invalid configuration

options:
  -h, --help                   show this help
  -v, --version                print the version
`;

const version = mailproxyVersion;

async function main(argv: string[]): Promise<void> {
  const cli: CliContext = { env: process.env, stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || (command === 'help' && rest.length === 0)) {
    (command === undefined ? process.stderr : process.stdout).write(USAGE);
    process.exitCode = command === undefined ? EXIT_USAGE : EXIT_OK;
    return;
  }
  if (command === '-v' || command === '--version') {
    process.stdout.write(`${version()}\n`);
    return;
  }
  if (command === 'help') {
    const about = COMMANDS.find((candidate) => candidate.name === rest[0]);
    if (about === undefined) {
      process.stderr.write(`mailproxy: no such command: ${rest[0] ?? ''}\n\n${USAGE}`);
      process.exitCode = EXIT_USAGE;
    } else {
      process.stdout.write(commandHelp(about));
    }
    return;
  }
  if (command === 'serve') {
    // Loaded only here: the admin verbs need none of the daemon's libraries, and start faster without them.
    const { parseServeArgs, serve } = await import('./serve.js');
    const args = parseServeArgs(rest, process.env);
    if (typeof args === 'string') {
      process.stderr.write(`mailproxy: ${args}\n\n${USAGE}`);
      process.exit(EXIT_USAGE);
    }
    await serve(args, version());
    return;
  }
  if (command === 'bounce' && rest[0] === 'parse' && rest.length === 2) {
    await parseBounceFile(rest[1] as string);
    return;
  }
  if (command === 'pec' && rest[0] === 'parse' && rest.length === 2) {
    const { analysePecReceipt } = await import('../pec/index.js');
    process.stdout.write(`${JSON.stringify(await analysePecReceipt(readFileSync(rest[1] as string)))}\n`);
    return;
  }
  const found = COMMANDS.find((candidate) => candidate.name === command);
  if (found !== undefined) {
    process.exitCode = await runCommand(found, rest, cli);
    return;
  }
  process.stderr.write(`mailproxy: unknown command: ${command}\n\n${USAGE}`);
  process.exit(EXIT_USAGE);
}

/** `mailproxy bounce parse FILE`: the parser's verdict as one JSON object (the first failed recipient's, and all of them). */
async function parseBounceFile(file: string): Promise<void> {
  const { analyseBounce, parseReportOf } = await import('../bounce/index.js');
  process.stdout.write(`${JSON.stringify(parseReportOf(await analyseBounce(readFileSync(file))))}\n`);
}

await main(process.argv.slice(2));
