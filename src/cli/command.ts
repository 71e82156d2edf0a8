/**
 * A command (`tenants`, `backup`, ...) is a set of verbs (`list`, `show`, ...);
 * a command without verbs has one under the empty name. This module parses a
 * verb's arguments, prints help, connects to the daemon when the verb needs it,
 * and turns a CliError into its message and exit code.
 */
import { createApiClient, type ApiClient } from './api-client.js';
import { CONNECTION_OPTIONS, parseVerbArgs, stringOption, type OptionSpec, type OptionValues } from './args.js';
import { cliError, EXIT_OK, report, type CliError, type Result } from './cli-error.js';
import { resolveConnection, type Env } from './connection.js';
import { writeJson } from './output.js';
import { chooseTenant } from './tenant-choice.js';

export interface CliContext {
  env: Env;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
  /** Where a confirmation is read from, when it is a terminal (messages bulk). */
  stdin?: NodeJS.ReadStream;
}

export interface VerbInput {
  values: OptionValues;
  positionals: string[];
  cli: CliContext;
  /** --json was given: print the API's JSON. */
  json: boolean;
  /** The daemon's API, found as connection.ts says (verbs with `api: true`). */
  connect(): Result<ApiClient>;
}

export interface Verb {
  /** Arguments after the verb, for help: `ID [--force]`. */
  usage: string;
  summary: string;
  options?: OptionSpec;
  /** How many positional arguments, at least and at most. */
  positionals: readonly [number, number];
  /** Talks to the daemon: takes --url, --token and --config. */
  api: boolean;
  run(input: VerbInput): Promise<number>;
}

export interface Command {
  name: string;
  summary: string;
  verbs: Record<string, Verb>;
  /** More help after the list of verbs. */
  notes?: string;
}

const CONNECTION_HELP = `connection (talking to the daemon):
  --url URL        the daemon's API (else MAILPROXY_URL, else http.listen of the config)
  --token TOKEN    the admin token (else MAILPROXY_TOKEN, else http.admin_token of the
                   config, else the admin-token file in the config's data_dir)
  -c, --config F   the daemon's config file (else MAILPROXY_CONFIG, else embedded defaults)
  --json           print the API's JSON instead of a table
`;

export function commandHelp(command: Command): string {
  const entries = Object.entries(command.verbs).map(
    ([name, verb]) =>
      [`mailproxy ${command.name}${name === '' ? '' : ` ${name}`} ${verb.usage}`.trimEnd(), verb.summary] as const,
  );
  // Short usages share one aligned column; a long one puts its summary on the next line.
  const width = Math.max(0, ...entries.map(([usage]) => usage.length).filter((length) => length <= 48));
  const lines = entries.map(([usage, summary]) =>
    usage.length > width ? `  ${usage}\n      ${summary}` : `  ${usage.padEnd(width)}  ${summary}`,
  );
  const api = Object.values(command.verbs).some((verb) => verb.api);
  return `${command.summary}\n\nusage:\n${lines.join('\n')}\n${command.notes === undefined ? '' : `\n${command.notes}`}${api ? `\n${CONNECTION_HELP}` : ''}`;
}

export async function runCommand(command: Command, args: string[], cli: CliContext): Promise<number> {
  const single = command.verbs[''];
  const [first, ...rest] = args;
  if (first === 'help' || ((first === '--help' || first === '-h') && single === undefined)) {
    cli.stdout.write(commandHelp(command));
    return EXIT_OK;
  }
  const verbName = single === undefined ? first : '';
  const verb = verbName === undefined ? undefined : command.verbs[verbName];
  if (verb === undefined) {
    const message =
      verbName === undefined
        ? `${command.name}: which one? ${Object.keys(command.verbs).join(', ')}`
        : `${command.name}: unknown verb: ${verbName}`;
    return usageError(cli, command, cliError('USAGE', message));
  }
  const parsed = parseVerbArgs(
    single === undefined ? rest : args,
    { ...(verb.api ? CONNECTION_OPTIONS : {}), ...verb.options },
    verb.positionals,
  );
  if (!parsed.ok)
    return usageError(
      cli,
      command,
      cliError('USAGE', `${command.name}${verbName === '' ? '' : ` ${verbName}`}: ${parsed.error.message}`),
    );
  const { values, positionals } = parsed.value;
  if (values.help === true) {
    cli.stdout.write(commandHelp(command));
    return EXIT_OK;
  }
  return verb.run({
    values,
    positionals,
    cli,
    json: values.json === true,
    connect: () => {
      const connection = resolveConnection(values, cli.env);
      return connection.ok ? { ok: true, value: createApiClient(connection.value) } : connection;
    },
  });
}

function usageError(cli: CliContext, command: Command, error: CliError): number {
  const code = report(cli.stderr, error);
  cli.stderr.write(`(mailproxy ${command.name} --help shows its verbs and options)\n`);
  return code;
}

/**
 * The common shape of an API verb: connect, make one request, print the answer
 * (`human` for people, the JSON itself with --json).
 */
export async function apiCall<A>(
  input: VerbInput,
  call: (client: ApiClient) => Promise<Result<A>>,
  human: (body: A) => string,
): Promise<number> {
  const client = input.connect();
  if (!client.ok) return report(input.cli.stderr, client.error);
  const answer = await call(client.value);
  if (!answer.ok) return report(input.cli.stderr, answer.error);
  if (input.json) writeJson(input.cli.stdout, answer.value);
  else input.cli.stdout.write(human(answer.value));
  return EXIT_OK;
}

/**
 * apiCall for a verb that acts on one tenant: --tenant, else the daemon's only
 * tenant (tenant-choice.ts). `call` and `human` get the tenant it chose
 * (undefined for a tenant key, whose tenant the API implies).
 */
export async function tenantCall<A>(
  input: VerbInput,
  call: (client: ApiClient, tenantId: string | undefined) => Promise<Result<A>>,
  human: (body: A, tenantId: string | undefined) => string,
): Promise<number> {
  let chosen: string | undefined;
  return apiCall<A>(
    input,
    async (client) => {
      const tenant = await chooseTenant(client, stringOption(input.values, 'tenant'));
      if (!tenant.ok) return tenant;
      chosen = tenant.value;
      return call(client, chosen);
    },
    (body) => human(body, chosen),
  );
}
