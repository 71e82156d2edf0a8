/** `mailproxy suppressions`: the addresses a tenant's mail is not sent to. */
import { integerOption, stringOption } from '../args.js';
import { report } from '../cli-error.js';
import type { OkAnswer, SuppressionAdded } from '../answers.js';
import { tenantCall, type Command } from '../command.js';
import { READ_VERBS } from './resources.js';

export const suppressionsCommand: Command = {
  name: 'suppressions',
  summary: "Suppressions: a tenant's recipients that get no more mail (hard bounces, complaints, operator entries).",
  verbs: {
    ...READ_VERBS.suppressions,
    add: {
      usage: 'ADDRESS [--tenant T] [--reason TEXT] [--expires-ts EPOCH]',
      summary: 'suppress an address (until removed, or until --expires-ts)',
      options: { tenant: { type: 'string' }, reason: { type: 'string' }, 'expires-ts': { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const expires = integerOption(input.values, 'expires-ts', 1);
        if (!expires.ok) return report(input.cli.stderr, expires.error);
        const body = {
          address: input.positionals[0],
          reason: stringOption(input.values, 'reason'),
          expires_ts: expires.value,
        };
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<SuppressionAdded>('POST', '/suppression', { body: { tenant_id: tenantId, ...body } }),
          (answer) => `${answer.suppression.address} suppressed\n`,
        );
      },
    },
    delete: {
      usage: 'ADDRESS [--tenant T]',
      summary: 'lift a suppression',
      options: { tenant: { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: (input) => {
        const address = input.positionals[0] ?? '';
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<OkAnswer>('DELETE', `/suppression/${encodeURIComponent(address)}`, {
              query: { tenant_id: tenantId },
            }),
          () => `${address} no longer suppressed\n`,
        );
      },
    },
  },
};
