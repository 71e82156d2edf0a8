/** `mailproxy accounts`: the upstream SMTP accounts each tenant sends through. */
import { readFileSync } from 'node:fs';
import { integerOption, stringOption, type OptionValues } from '../args.js';
import { cliError, failed, ok, report, type Result } from '../cli-error.js';
import { apiCall, tenantCall, type Command } from '../command.js';
import { objectFields } from '../fields.js';
import { instant, table, text } from '../output.js';

const accountPath = (id: string): string => `/account/${encodeURIComponent(id)}`;

/** `10/min 100/h -/day`: an account's limits in one cell. */
const limits = (account: any): string =>
  account.limit_per_minute === null && account.limit_per_hour === null && account.limit_per_day === null
    ? '-'
    : `${text(account.limit_per_minute)}/min ${text(account.limit_per_hour)}/h ${text(account.limit_per_day)}/day`;

/** A PEC account's mailbox in one cell: `imap.example:993 INBOX`. */
const mailbox = (account: any): string =>
  account.imap_host === null || account.imap_host === undefined ? '-' : `${account.imap_host}:${account.imap_port} ${account.imap_folder}`;

/** Each limit window in one line: `0 of 30, resets 2026-11-23 21:18:00Z`. */
const usageLines = (usage: Record<string, any>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(usage).map(([window, value]) => [
      window,
      `${value.used}${value.limit === null ? '' : ` of ${value.limit}`}, resets ${instant(value.resets_ts)}`,
    ]),
  );

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
    return failed(cliError('FILE_ERROR', `cannot read the password from ${file === '-' ? 'stdin' : file}: ${(error as Error).message}`));
  }
}

const NUMBERS = ['port', 'limit-per-minute', 'limit-per-hour', 'limit-per-day', 'max-connections', 'max-messages-per-connection', 'imap-port'] as const;

/** --pec sets the flag, --no-pec clears it, neither keeps it. */
function pecFlag(values: OptionValues): Result<boolean | undefined> {
  if (values.pec === true && values['no-pec'] === true) return failed(cliError('USAGE', '--pec and --no-pec contradict each other; give one'));
  return ok(values.pec === true ? true : values['no-pec'] === true ? false : undefined);
}

/** --default marks the tenant's default account, --no-default unmarks it, neither keeps it (a first account becomes the default). */
function defaultFlag(values: OptionValues): Result<boolean | undefined> {
  if (values.default === true && values['no-default'] === true) return failed(cliError('USAGE', '--default and --no-default contradict each other; give one'));
  return ok(values.default === true ? true : values['no-default'] === true ? false : undefined);
}

/**
 * The answer's warnings (a tenant left without a default account, a default moved), on
 * stderr: the change succeeded, yet the operator must see what it did to the tenant's clients.
 */
function warn(stderr: NodeJS.WritableStream, answer: { warnings?: Array<{ code: string; message: string }> }): void {
  for (const warning of answer.warnings ?? []) stderr.write(`warning: ${warning.code}: ${warning.message}\n`);
}

/** Both passwords, each from its file; stdin holds only one of them. */
function readPasswords(values: OptionValues): Result<{ password: string | undefined; imapPassword: string | undefined }> {
  if (stringOption(values, 'password-file') === '-' && stringOption(values, 'imap-password-file') === '-') {
    return failed(cliError('USAGE', 'only one of --password-file and --imap-password-file can read stdin (-); give the other a file'));
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
    list: {
      usage: '[--tenant T]',
      summary: 'every account (the admin: of every tenant, or of T), with its state and waiting mail',
      options: { tenant: { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: (input) =>
        apiCall(
          input,
          (client) => client.request('GET', '/accounts', { query: { tenant_id: stringOption(input.values, 'tenant') } }),
          (body) =>
            table(body.accounts, [
              { header: 'TENANT', value: (a: any) => a.tenant_id },
              { header: 'ID', value: (a: any) => a.id },
              { header: 'HOST', value: (a: any) => `${a.host}:${a.port}` },
              { header: 'TLS', value: (a: any) => a.tls_mode },
              { header: 'DEFAULT', value: (a: any) => a.is_default },
              { header: 'STATE', value: (a: any) => (a.paused_reason ? `${a.state} (${a.paused_reason})` : a.state) },
              { header: 'WAITING', value: (a: any) => a.waiting },
              { header: 'LIMITS', value: limits },
              { header: 'PEC', value: (a: any) => a.is_pec },
              { header: 'MAILBOX', value: mailbox },
            ]),
        ),
    },
    show: {
      usage: 'ID [--tenant T]',
      summary: 'one account, with its usage in each limit window',
      options: { tenant: { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: (input) =>
        tenantCall(
          input,
          (client, tenantId) => client.request('GET', accountPath(input.positionals[0] ?? ''), { query: { tenant_id: tenantId } }),
          (body) => objectFields(body.account.usage === undefined ? body.account : { ...body.account, usage: usageLines(body.account.usage) }),
        ),
    },
    add: {
      usage:
        'ID [--tenant T] --host HOST [--port N] [--user U] [--password-file FILE|-] [--tls implicit|starttls|none] [--limit-per-minute N] [--limit-per-hour N] [--limit-per-day N] [--limit-behavior defer|reject] [--max-connections N] [--max-messages-per-connection N] [--default|--no-default] ' +
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
          (client, tenantId) => client.request('POST', '/account', { body: { ...body.value, tenant_id: tenantId } }),
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
          (client, tenantId) => client.request('DELETE', accountPath(id), { query: { tenant_id: tenantId, force } }),
          (answer) => {
            warn(input.cli.stderr, answer);
            return `account ${id} deleted\n`;
          },
        );
      },
    },
  },
};
