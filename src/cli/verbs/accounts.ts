/** `mailproxy accounts`: the upstream SMTP accounts each tenant sends through. */
import { readFileSync } from 'node:fs';
import { integerOption, stringOption, type OptionValues } from '../args.js';
import { cliError, failed, ok, report, type Result } from '../cli-error.js';
import type { AccountDeleted, AccountUpserted } from '../answers.js';
import { tenantCall, type Command } from '../command.js';
import { accountRelayVerbs } from './account-relay.js';
import { accountPath, READ_VERBS } from './resources.js';

/**
 * A password from a file or stdin (`-`), never from the command line, where
 * every user of the machine could read it in the process list.
 */
function readPassword(values: OptionValues, option: string): Result<string | undefined> {
  const file = stringOption(values, option);
  if (file === undefined) return ok(undefined);
  try {
    return ok(readFileSync(file === '-' ? 0 : file, 'utf8').replace(/\r?\n$/, ''));
  } catch (error) {
    return failed(
      cliError(
        'FILE_ERROR',
        `cannot read the password from ${file === '-' ? 'stdin' : file}: ${(error as Error).message}`,
      ),
    );
  }
}

const NUMBERS = [
  'port',
  'limit-per-minute',
  'limit-per-hour',
  'limit-per-day',
  'max-connections',
  'max-messages-per-connection',
  'imap-port',
  'failover-after-seconds',
] as const;

/** --warmup-start DATE with --warmup-daily-caps N,N,...: a schedule; --no-warmup clears it; neither keeps it. */
function warmUp(values: OptionValues): Result<{ start_date: string; daily_caps: number[] } | null | undefined> {
  const start = stringOption(values, 'warmup-start');
  const caps = stringOption(values, 'warmup-daily-caps');
  if (values['no-warmup'] === true) {
    if (start !== undefined || caps !== undefined)
      return failed(cliError('USAGE', '--no-warmup contradicts --warmup-start and --warmup-daily-caps; give one'));
    return ok(null);
  }
  if (start === undefined && caps === undefined) return ok(undefined);
  if (start === undefined || caps === undefined)
    return failed(cliError('USAGE', '--warmup-start and --warmup-daily-caps go together'));
  return ok({ start_date: start, daily_caps: caps.split(',').map((cap) => Number(cap.trim())) });
}

/** --destination-limits JSON: the rules as the API takes them (`[]` clears them); absent keeps them. */
function destinationLimits(values: OptionValues): Result<unknown[] | undefined> {
  const given = stringOption(values, 'destination-limits');
  if (given === undefined) return ok(undefined);
  try {
    const parsed = JSON.parse(given) as unknown;
    if (Array.isArray(parsed)) return ok(parsed);
  } catch {
    // worded below, as for a JSON value that is not a list
  }
  return failed(
    cliError(
      'USAGE',
      `--destination-limits takes a JSON list, e.g. '[{"domains":["gmail.com"],"limit_per_minute":100}]'`,
    ),
  );
}

/** --fallback-accounts a,b: the ids in order; an empty value clears them; absent keeps them. */
function fallbackAccounts(values: OptionValues): string[] | undefined {
  const given = stringOption(values, 'fallback-accounts');
  return given === undefined
    ? undefined
    : given
        .split(',')
        .map((id) => id.trim())
        .filter(Boolean);
}

/** --pec sets the flag, --no-pec clears it, neither keeps it. */
function pecFlag(values: OptionValues): Result<boolean | undefined> {
  if (values.pec === true && values['no-pec'] === true)
    return failed(cliError('USAGE', '--pec and --no-pec contradict each other; give one'));
  return ok(values.pec === true ? true : values['no-pec'] === true ? false : undefined);
}

/** --default marks the tenant's default account, --no-default unmarks it, neither keeps it (a first account becomes the default). */
function defaultFlag(values: OptionValues): Result<boolean | undefined> {
  if (values.default === true && values['no-default'] === true)
    return failed(cliError('USAGE', '--default and --no-default contradict each other; give one'));
  return ok(values.default === true ? true : values['no-default'] === true ? false : undefined);
}

/**
 * The answer's warnings (a tenant left without a default account, a default moved), on
 * stderr: the change succeeded, yet the operator must see what it did to the tenant's clients.
 */
function warn(
  stderr: NodeJS.WritableStream,
  answer: { warnings?: readonly { code: string; message: string }[] },
): void {
  for (const warning of answer.warnings ?? []) stderr.write(`warning: ${warning.code}: ${warning.message}\n`);
}

/** Both passwords, each from its file; stdin holds only one of them. */
function readPasswords(
  values: OptionValues,
): Result<{ password: string | undefined; imapPassword: string | undefined }> {
  if (stringOption(values, 'password-file') === '-' && stringOption(values, 'imap-password-file') === '-') {
    return failed(
      cliError(
        'USAGE',
        'only one of --password-file and --imap-password-file can read stdin (-); give the other a file',
      ),
    );
  }
  const password = readPassword(values, 'password-file');
  if (!password.ok) return password;
  const imapPassword = readPassword(values, 'imap-password-file');
  if (!imapPassword.ok) return imapPassword;
  return ok({ password: password.value, imapPassword: imapPassword.value });
}

function accountBody(id: string, values: OptionValues): Result<Record<string, unknown> & { tenant_id?: string }> {
  const numbers: Record<string, number | undefined> = {};
  for (const name of NUMBERS) {
    const value = integerOption(values, name, 1);
    if (!value.ok) return value;
    numbers[name] = value.value;
  }
  const passwords = readPasswords(values);
  if (!passwords.ok) return passwords;
  const pec = pecFlag(values);
  if (!pec.ok) return pec;
  const isDefault = defaultFlag(values);
  if (!isDefault.ok) return isDefault;
  const warmup = warmUp(values);
  if (!warmup.ok) return warmup;
  const destinations = destinationLimits(values);
  if (!destinations.ok) return destinations;
  return ok({
    id,
    host: stringOption(values, 'host'),
    port: numbers.port,
    user: stringOption(values, 'user'),
    password: passwords.value.password,
    tls_mode: stringOption(values, 'tls'),
    limit_per_minute: numbers['limit-per-minute'],
    limit_per_hour: numbers['limit-per-hour'],
    limit_per_day: numbers['limit-per-day'],
    limit_behavior: stringOption(values, 'limit-behavior'),
    fallback_accounts: fallbackAccounts(values),
    failover_after_seconds: numbers['failover-after-seconds'],
    warmup: warmup.value,
    destination_limits: destinations.value,
    max_connections: numbers['max-connections'],
    max_messages_per_connection: numbers['max-messages-per-connection'],
    is_default: isDefault.value,
    is_pec: pec.value,
    imap_host: stringOption(values, 'imap-host'),
    imap_port: numbers['imap-port'],
    imap_tls_mode: stringOption(values, 'imap-tls'),
    imap_user: stringOption(values, 'imap-user'),
    imap_password: passwords.value.imapPassword,
    imap_folder: stringOption(values, 'imap-folder'),
  });
}

export const accountsCommand: Command = {
  name: 'accounts',
  summary: "Sending accounts: each tenant's upstream SMTP servers and their limits.",
  verbs: {
    ...READ_VERBS.accounts,
    add: {
      usage:
        'ID [--tenant T] --host HOST [--port N] [--user U] [--password-file FILE|-] [--tls implicit|starttls|none] [--limit-per-minute N] [--limit-per-hour N] [--limit-per-day N] [--limit-behavior defer|reject|failover] [--fallback-accounts ID,ID] [--failover-after-seconds N] [--warmup-start YYYY-MM-DD --warmup-daily-caps N,N,...|--no-warmup] [--destination-limits JSON] [--max-connections N] [--max-messages-per-connection N] [--default|--no-default] ' +
        '[--pec|--no-pec] [--imap-host HOST] [--imap-port N] [--imap-tls implicit|starttls|none] [--imap-user U] [--imap-password-file FILE|-] [--imap-folder NAME]',
      summary:
        'create or update an account (an update keeps the stored passwords and mailbox settings unless given; a PEC account reads its receipts from the --imap-* mailbox, with the relay user and password unless its own are given)',
      options: {
        tenant: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        user: { type: 'string' },
        'password-file': { type: 'string' },
        tls: { type: 'string' },
        'limit-per-minute': { type: 'string' },
        'limit-per-hour': { type: 'string' },
        'limit-per-day': { type: 'string' },
        'limit-behavior': { type: 'string' },
        'fallback-accounts': { type: 'string' },
        'failover-after-seconds': { type: 'string' },
        'warmup-start': { type: 'string' },
        'warmup-daily-caps': { type: 'string' },
        'no-warmup': { type: 'boolean' },
        'destination-limits': { type: 'string' },
        'max-connections': { type: 'string' },
        'max-messages-per-connection': { type: 'string' },
        default: { type: 'boolean' },
        'no-default': { type: 'boolean' },
        pec: { type: 'boolean' },
        'no-pec': { type: 'boolean' },
        'imap-host': { type: 'string' },
        'imap-port': { type: 'string' },
        'imap-tls': { type: 'string' },
        'imap-user': { type: 'string' },
        'imap-password-file': { type: 'string' },
        'imap-folder': { type: 'string' },
      },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const body = accountBody(input.positionals[0] ?? '', input.values);
        if (!body.ok) return report(input.cli.stderr, body.error);
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<AccountUpserted>('POST', '/account', { body: { ...body.value, tenant_id: tenantId } }),
          (answer) => {
            warn(input.cli.stderr, answer);
            return `account ${answer.account.id} of tenant ${answer.account.tenant_id} ${answer.created ? 'created' : 'updated'}${answer.account.is_default ? ' (the default account)' : ''}\n`;
          },
        );
      },
    },
    delete: {
      usage: 'ID [--tenant T] [--force]',
      summary: 'delete an account; --force also when it has undelivered mail',
      options: { tenant: { type: 'string' }, force: { type: 'boolean' } },
      positionals: [1, 1],
      api: true,
      run: (input) => {
        const id = input.positionals[0] ?? '';
        const force = input.values.force === true ? 'true' : undefined;
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<AccountDeleted>('DELETE', accountPath(id), { query: { tenant_id: tenantId, force } }),
          (answer) => {
            warn(input.cli.stderr, answer);
            return `account ${id} deleted\n`;
          },
        );
      },
    },
    ...accountRelayVerbs,
  },
};
