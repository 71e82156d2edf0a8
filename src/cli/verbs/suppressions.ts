/** `mailproxy suppressions`: the addresses a tenant's mail is not sent to. */
import { integerOption, stringOption } from '../args.js';
import { report } from '../cli-error.js';
import { tenantCall, type Command } from '../command.js';
import { instant, table } from '../output.js';

export const suppressionsCommand: Command = {
  name: 'suppressions',
  summary: "Suppressions: a tenant's recipients that get no more mail (hard bounces, complaints, operator entries).",
  verbs: {
    list: {
      usage: '[--tenant T] [--prefix TEXT] [--after ADDR] [--limit N]',
      summary: 'the list in address order',
      options: { tenant: { type: 'string' }, prefix: { type: 'string' }, after: { type: 'string' }, limit: { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: async (input) => {
        const limit = integerOption(input.values, 'limit', 1);
        if (!limit.ok) return report(input.cli.stderr, limit.error);
        const query = { prefix: stringOption(input.values, 'prefix'), after: stringOption(input.values, 'after'), limit: limit.value };
        return tenantCall(
          input,
          (client, tenantId) => client.request('GET', '/suppressions', { query: { tenant_id: tenantId, ...query } }),
          (body) => {
            const rows = table(body.suppressions, [
              { header: 'ADDRESS', value: (s: any) => s.address },
              { header: 'SOURCE', value: (s: any) => s.source },
              { header: 'REASON', value: (s: any) => s.reason },
              { header: 'CREATED', value: (s: any) => instant(s.created_ts) },
              { header: 'EXPIRES', value: (s: any) => (s.expires_ts === null ? 'never' : instant(s.expires_ts)) },
            ]);
            return body.next === null ? rows : `${rows}(more: --after ${body.next})\n`;
          },
        );
      },
    },
    add: {
      usage: 'ADDRESS [--tenant T] [--reason TEXT] [--expires-ts EPOCH]',
      summary: 'suppress an address (until removed, or until --expires-ts)',
      options: { tenant: { type: 'string' }, reason: { type: 'string' }, 'expires-ts': { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const expires = integerOption(input.values, 'expires-ts', 1);
        if (!expires.ok) return report(input.cli.stderr, expires.error);
        const body = { address: input.positionals[0], reason: stringOption(input.values, 'reason'), expires_ts: expires.value };
        return tenantCall(
          input,
          (client, tenantId) => client.request('POST', '/suppression', { body: { tenant_id: tenantId, ...body } }),
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
          (client, tenantId) => client.request('DELETE', `/suppression/${encodeURIComponent(address)}`, { query: { tenant_id: tenantId } }),
          () => `${address} no longer suppressed\n`,
        );
      },
    },
  },
};
