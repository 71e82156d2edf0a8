/**
 * `mailproxy erase`: personal data erased on request (POST /commands/erase), by message ids,
 * by address, or a whole tenant's mail. It cannot be undone, so it is done only once confirmed
 * (--yes, or a yes typed at a terminal).
 */
import { stringOption } from '../args.js';
import { cliError, report } from '../cli-error.js';
import type { EraseResult } from '../answers.js';
import { apiCall, type Command, type VerbInput } from '../command.js';
import { confirmed } from './message-actions.js';

function requestOf(input: VerbInput): { body: Record<string, unknown>; what: string } | null {
  const tenant = stringOption(input.values, 'tenant');
  const address = stringOption(input.values, 'address');
  const ids = input.positionals;
  const whole = input.values['whole-tenant'] === true;
  if ([ids.length > 0, address !== undefined, whole].filter(Boolean).length !== 1) return null;
  const scope = tenant === undefined ? '' : ` of tenant ${tenant}`;
  if (address !== undefined)
    return {
      body: { tenant_id: tenant, address },
      what: `everything to or from ${address}${tenant === undefined ? ' (every tenant with the admin token)' : scope}`,
    };
  if (whole) return { body: { tenant_id: tenant, whole_tenant: true }, what: `every message${scope}` };
  return { body: { tenant_id: tenant, ids }, what: `${ids.length} message(s)${scope}` };
}

export const eraseCommand: Command = {
  name: 'erase',
  summary: 'Erase personal data on request: messages by id, an address, or a whole tenant.',
  verbs: {
    '': {
      usage: '[ID...] [--address ADDR] [--whole-tenant] [--tenant T] [--yes]',
      summary:
        "destroy the bodies' keys and clear every personal field (ids, status and times stay); a waiting message is never sent. Cannot be undone",
      options: {
        tenant: { type: 'string' },
        address: { type: 'string' },
        'whole-tenant': { type: 'boolean' },
        yes: { type: 'boolean', short: 'y' },
      },
      positionals: [0, 10_000],
      api: true,
      run: async (input) => {
        const request = requestOf(input);
        if (request === null)
          return report(
            input.cli.stderr,
            cliError('USAGE', 'erase: give message ids, --address or --whole-tenant (one of them)'),
          );
        if (input.values.yes !== true && !(await confirmed(input, `Erase ${request.what}? This cannot be undone.`)))
          return report(
            input.cli.stderr,
            cliError('USAGE', `not done: ${request.what} would be erased; add --yes to do it`),
          );
        return apiCall(
          input,
          (client) => client.request<EraseResult>('POST', '/commands/erase', { body: request.body }),
          (answer) =>
            `erased ${answer.erased_messages} message(s) in ${answer.tenants.join(', ') || 'no tenant'}` +
            ` (${answer.stopped_waiting} were waiting and will not be sent, ${answer.in_flight} in flight);` +
            ` suppressions removed ${answer.suppressions}, mailbox records cleared ${answer.mailbox_records},` +
            ` PEC receipts ${answer.pec_receipts}, events scrubbed ${answer.events_scrubbed}\n` +
            (answer.not_found.length === 0 ? '' : `not found: ${answer.not_found.join(', ')}\n`),
        );
      },
    },
  },
};
