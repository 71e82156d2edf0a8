/**
 * `mailproxy messages retry` and `messages bulk`: retry now by id, and the
 * bulk actions by the filters of `messages list`, counted first (a dry run)
 * and done only once confirmed (--yes, or a yes typed at a terminal).
 */
import { createInterface } from 'node:readline/promises';
import { integerOption, stringOption, type OptionValues } from '../args.js';
import { cliError, EXIT_OK, report } from '../cli-error.js';
import type { BulkPreview, BulkRun, RetryNowResult } from '../answers.js';
import { apiCall, tenantCall, type Verb, type VerbInput } from '../command.js';
import { writeJson } from '../output.js';
import { BULK_FILTERS } from './resources.js';

const ACTIONS = ['resend', 'delete', 'retry-now', 'suspend', 'activate'] as const;
type Action = (typeof ACTIONS)[number];

const VERB: Record<Action, [string, string]> = {
  resend: ['Resend', 'resent'],
  delete: ['Delete', 'deleted'],
  'retry-now': ['Retry now', 'retried now'],
  suspend: ['Suspend (hold)', 'held'],
  activate: ['Activate (release)', 'released'],
};

const list = (ids: string[]): string => (ids.length === 0 ? '-' : ids.join(', '));

export const retryVerb: Verb = {
  usage: 'ID... [--tenant T]',
  summary: 'attempt deferred or scheduled messages now (their next attempt becomes now)',
  options: { tenant: { type: 'string' } },
  positionals: [1, 10_000],
  api: true,
  run: (input) =>
    tenantCall(
      input,
      (client, tenantId) =>
        client.request<RetryNowResult>('POST', '/commands/retry-now', {
          body: { tenant_id: tenantId, ids: input.positionals },
        }),
      (answer) =>
        `retried now ${answer.retried.length}: ${list(answer.retried)}\n` +
        (answer.not_found.length === 0 ? '' : `not found: ${list(answer.not_found)}\n`) +
        (answer.not_applicable.length === 0
          ? ''
          : `not applicable (not waiting for a later attempt): ${list(answer.not_applicable)}\n`),
    ),
};

/** The request body: the action, the filters given, --all-tenants and --max. */
function bulkBody(action: Action, values: OptionValues, max: number | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = { action };
  for (const [option, parameter] of Object.entries(BULK_FILTERS)) {
    const value = stringOption(values, option);
    if (value !== undefined) body[parameter] = value;
  }
  if (values['all-tenants'] === true) body.all_tenants = true;
  if (max !== undefined) body.max = max;
  return body;
}

/** Asks at a terminal; anything but y/yes is a no. */
export async function confirmed(input: VerbInput, question: string): Promise<boolean> {
  const stdin = input.cli.stdin;
  if (stdin?.isTTY !== true) return false;
  const rl = createInterface({ input: stdin, output: input.cli.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export const bulkVerb: Verb = {
  usage: `${ACTIONS.join('|')} [--tenant T | --all-tenants] [--status S] [--account A] [--batch B] [--recipient ADDR] [--sender ADDR] [--from-ts N] [--to-ts N] [--q WORDS] [--priority P] [--max N] [--dry-run] [--yes]`,
  summary:
    'act on every message the filters (those of list) find: prints how many first, and acts with --yes or a yes at a terminal; suspend/activate take --tenant and --batch only',
  options: {
    ...Object.fromEntries(Object.keys(BULK_FILTERS).map((name) => [name, { type: 'string' as const }])),
    max: { type: 'string' },
    'all-tenants': { type: 'boolean' },
    'dry-run': { type: 'boolean' },
    yes: { type: 'boolean', short: 'y' },
  },
  positionals: [1, 1],
  api: true,
  run: async (input) => {
    const action = input.positionals[0] as Action;
    if (!ACTIONS.includes(action))
      return report(input.cli.stderr, cliError('USAGE', `messages bulk: which action? ${ACTIONS.join(', ')}`));
    const max = integerOption(input.values, 'max', 1);
    if (!max.ok) return report(input.cli.stderr, max.error);
    const body = bulkBody(action, input.values, max.value);
    const client = input.connect();
    if (!client.ok) return report(input.cli.stderr, client.error);
    const preview = await client.value.request<BulkPreview>('POST', '/commands/bulk', {
      body: { ...body, dry_run: true },
    });
    if (!preview.ok) return report(input.cli.stderr, preview.error);
    const { matching, applicable, sample } = preview.value;
    const out = input.cli.stdout;
    if (input.values['dry-run'] === true || applicable === 0) {
      if (input.json) writeJson(out, preview.value);
      else
        out.write(
          `${matching} messages match; ${action} applies to ${applicable}${applicable === 0 ? ': nothing to do' : ''}\n`,
        );
      if (!input.json && applicable > 0)
        out.write(`for example: ${sample.map((m) => `${m.tenant_id}/${m.id}`).join(', ')}\n`);
      return EXIT_OK;
    }
    const question = `${VERB[action][0]} ${applicable} of the ${matching} messages matching?`;
    if (input.values.yes !== true && !(await confirmed(input, question))) {
      return report(
        input.cli.stderr,
        cliError(
          'USAGE',
          `not done: ${applicable} of ${matching} matching messages would be ${VERB[action][1]}; add --yes to do it`,
        ),
      );
    }
    return apiCall(
      input,
      (api) => api.request<BulkRun>('POST', '/commands/bulk', { body }),
      (answer) =>
        `${VERB[action][1]} ${answer.done} of ${answer.matching} matching; not applicable ${answer.not_applicable}; remaining ${answer.remaining}\n`,
    );
  },
};
