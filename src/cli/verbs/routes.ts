/** `mailproxy routes`: a tenant's routing rules (which account a message that names none goes through). */
import { readFileSync } from 'node:fs';
import { integerOption, stringOption, type OptionValues } from '../args.js';
import { cliError, failed, ok, report, type Result } from '../cli-error.js';
import { tenantCall, type Command } from '../command.js';
import { fields } from '../fields.js';
import { tenantPath } from './resources.js';

interface RouteView {
  match: Record<string, unknown>;
  account_id: string;
}

interface RouteTested {
  account_id: string | null;
  chosen_by: string;
  rule: number | null;
  why: string;
}

/** A rule in a line: `0  batch_codes=newsletter priorities=3 -> bulk`. */
const ruleLine = (rule: RouteView, index: number): string => {
  const conditions = Object.entries(rule.match).map(([name, value]) =>
    name === 'header' ? `header=${JSON.stringify(value)}` : `${name}=${([] as unknown[]).concat(value).join(',')}`,
  );
  return `${index}  ${conditions.length === 0 ? '(every message)' : conditions.join(' ')} -> ${rule.account_id}\n`;
};

function readRules(values: OptionValues): Result<unknown> {
  const file = stringOption(values, 'file');
  if (file === undefined)
    return failed(cliError('USAGE', 'give the rules as a JSON array: --file FILE, or - for stdin'));
  try {
    return ok(JSON.parse(readFileSync(file === '-' ? 0 : file, 'utf8')) as unknown);
  } catch (error) {
    return failed(
      cliError(
        'FILE_ERROR',
        `cannot read the rules from ${file === '-' ? 'stdin' : file}: ${(error as Error).message}`,
      ),
    );
  }
}

/** The message `routes test` describes, as POST /tenant/{id}/routes/test takes it. */
function sampleOf(values: OptionValues): Result<Record<string, unknown>> {
  const from = stringOption(values, 'from');
  if (from === undefined) return failed(cliError('USAGE', '--from is required'));
  const priority = integerOption(values, 'priority', 0);
  if (!priority.ok) return priority;
  const header = stringOption(values, 'header');
  const colon = header?.indexOf(':') ?? -1;
  if (header !== undefined && colon < 1) return failed(cliError('USAGE', "--header takes 'Name: value'"));
  return ok({
    from,
    batch_code: stringOption(values, 'batch'),
    priority: priority.value,
    headers: header === undefined ? undefined : { [header.slice(0, colon).trim()]: header.slice(colon + 1).trim() },
    account_id: stringOption(values, 'account'),
  });
}

export const routesCommand: Command = {
  name: 'routes',
  summary: "Routing rules: which of a tenant's accounts a message that names none goes through (admin token).",
  verbs: {
    show: {
      usage: '[--tenant T]',
      summary: "the tenant's rules in order (the first that matches wins; none: the default account)",
      options: { tenant: { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: (input) =>
        tenantCall(
          input,
          (client, tenantId) =>
            client.request<{ tenant: { id: string; routes: RouteView[] } }>('GET', tenantPath(tenantId ?? '')),
          (answer) =>
            answer.tenant.routes.length === 0
              ? `tenant ${answer.tenant.id} has no routing rules: its default account sends everything\n`
              : answer.tenant.routes.map(ruleLine).join(''),
        ),
    },
    set: {
      usage: '--file FILE|- [--tenant T]',
      summary: 'replace the rules with a JSON array ([] clears them), as PUT /tenant/{id} `routes` takes it',
      options: { tenant: { type: 'string' }, file: { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: async (input) => {
        const rules = readRules(input.values);
        if (!rules.ok) return report(input.cli.stderr, rules.error);
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<{ tenant: { id: string; routes: RouteView[] } }>('PUT', tenantPath(tenantId ?? ''), {
              body: { routes: rules.value },
            }),
          (answer) => `tenant ${answer.tenant.id}: ${answer.tenant.routes.length} routing rules\n`,
        );
      },
    },
    test: {
      usage: "--from ADDRESS [--batch CODE] [--priority 0-3] [--header 'Name: value'] [--account ID] [--tenant T]",
      summary: 'which account such a message would go through, and why',
      options: {
        tenant: { type: 'string' },
        from: { type: 'string' },
        batch: { type: 'string' },
        priority: { type: 'string' },
        header: { type: 'string' },
        account: { type: 'string' },
      },
      positionals: [0, 0],
      api: true,
      run: async (input) => {
        const sample = sampleOf(input.values);
        if (!sample.ok) return report(input.cli.stderr, sample.error);
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<RouteTested>('POST', `${tenantPath(tenantId ?? '')}/routes/test`, { body: sample.value }),
          (answer) =>
            fields([
              ['account', answer.account_id ?? '(none: refused)'],
              ['chosen by', answer.rule === null ? answer.chosen_by : `${answer.chosen_by} ${answer.rule}`],
              ['why', answer.why],
            ]),
        );
      },
    },
  },
};
