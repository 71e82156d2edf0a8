/** `mailproxy tenants` and `mailproxy token rotate`: the admin's tenant routes. */
import { integerOption, stringOption } from '../args.js';
import { report } from '../cli-error.js';
import type { IssuedKey, OkAnswer, TenantCreated } from '../answers.js';
import { apiCall, type Command } from '../command.js';
import { fields } from '../fields.js';
import { instant } from '../output.js';
import { READ_VERBS, tenantPath } from './resources.js';

export const tenantsCommand: Command = {
  name: 'tenants',
  summary: 'Tenants: the applications that send through mailproxy (admin token).',
  verbs: {
    ...READ_VERBS.tenants,
    add: {
      usage:
        'ID [--name NAME] [--client-base-url URL] [--client-sync-path PATH] [--inactive] [--key-expires-in SECONDS]',
      summary: 'create a tenant; prints its API key and report-signing secret once',
      options: {
        name: { type: 'string' },
        'client-base-url': { type: 'string' },
        'client-sync-path': { type: 'string' },
        inactive: { type: 'boolean' },
        'key-expires-in': { type: 'string' },
      },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const expires = integerOption(input.values, 'key-expires-in', 1);
        if (!expires.ok) return report(input.cli.stderr, expires.error);
        const body = {
          id: input.positionals[0],
          name: stringOption(input.values, 'name'),
          client_base_url: stringOption(input.values, 'client-base-url'),
          client_sync_path: stringOption(input.values, 'client-sync-path'),
          active: input.values.inactive === true ? false : undefined,
          api_key_expires_in_seconds: expires.value,
        };
        return apiCall(
          input,
          (client) => client.request<TenantCreated>('POST', '/tenant', { body }),
          (answer) =>
            `tenant ${answer.tenant.id} created\n` +
            fields([
              ['api key', answer.api_key],
              ...(answer.client_signing_secret === undefined
                ? []
                : [['signing secret', answer.client_signing_secret] as const]),
            ]) +
            'Store them now: they cannot be read again (rotate with `mailproxy token rotate`).\n',
        );
      },
    },
    delete: {
      usage: 'ID [--force]',
      summary: 'delete a tenant; --force also when it has undelivered mail (which goes with it)',
      options: { force: { type: 'boolean' } },
      positionals: [1, 1],
      api: true,
      run: (input) => {
        const id = input.positionals[0] ?? '';
        return apiCall(
          input,
          (client) =>
            client.request<OkAnswer>('DELETE', tenantPath(id), {
              query: { force: input.values.force === true ? 'true' : undefined },
            }),
          () => `tenant ${id} deleted\n`,
        );
      },
    },
  },
};

export const tokenCommand: Command = {
  name: 'token',
  summary: "A tenant's API key (admin token).",
  verbs: {
    rotate: {
      usage: 'TENANT [--expires-in SECONDS]',
      summary: 'a new API key for the tenant, printed once; the old key stops working at once',
      options: { 'expires-in': { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const expires = integerOption(input.values, 'expires-in', 1);
        if (!expires.ok) return report(input.cli.stderr, expires.error);
        const tenant = input.positionals[0] ?? '';
        return apiCall(
          input,
          (client) =>
            client.request<IssuedKey>('POST', `${tenantPath(tenant)}/api-key`, {
              body: { expires_in_seconds: expires.value },
            }),
          (answer) =>
            `new API key of tenant ${answer.tenant_id} (the old one no longer works; store it now, it cannot be read again):\n${answer.api_key}\n` +
            (answer.api_key_expires_at === null ? '' : `expires ${instant(answer.api_key_expires_at)}\n`),
        );
      },
    },
  },
};
