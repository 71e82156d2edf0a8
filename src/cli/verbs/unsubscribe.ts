/** `mailproxy unsubscribe`: a tenant's one-click unsubscribe links (RFC 8058), as PUT /tenant/{id} `list_unsubscribe` sets them. */
import { stringOption } from '../args.js';
import { cliError, report } from '../cli-error.js';
import { tenantCall, type Command, type VerbInput } from '../command.js';
import { fields } from '../fields.js';
import { tenantPath } from './resources.js';

interface Setting {
  base_url: string;
  mailto: string | null;
  scope: 'all' | 'batches';
}

type TenantAnswer = { tenant: { id: string; list_unsubscribe: Setting | null } };

const shown = (answer: TenantAnswer): string => {
  const setting = answer.tenant.list_unsubscribe;
  if (setting === null) return `tenant ${answer.tenant.id}: no unsubscribe link is added to its mail\n`;
  return fields([
    ['tenant', answer.tenant.id],
    ['links under', `${setting.base_url.replace(/\/+$/, '')}/unsubscribe/…`],
    ['mailto', setting.mailto ?? '(none)'],
    ['in', setting.scope === 'all' ? 'every message to one recipient' : 'batch mail to one recipient'],
  ]);
};

const tenantOption = { tenant: { type: 'string' } } as const;

/** The tenant read (GET) or its setting replaced (PUT), then shown. */
const onTenant = (input: VerbInput, method: 'GET' | 'PUT', setting?: Setting | null) =>
  tenantCall(
    input,
    (client, tenantId) =>
      client.request<TenantAnswer>(
        method,
        tenantPath(tenantId ?? ''),
        setting === undefined ? {} : { body: { list_unsubscribe: setting } },
      ),
    shown,
  );

export const unsubscribeCommand: Command = {
  name: 'unsubscribe',
  summary: "One-click unsubscribe links (RFC 8058) in a tenant's mail (admin token).",
  verbs: {
    show: {
      usage: '[--tenant T]',
      summary: "the tenant's setting: where its links point, and which mail carries them",
      options: tenantOption,
      positionals: [0, 0],
      api: true,
      run: (input) =>
        tenantCall(input, (client, tenantId) => client.request<TenantAnswer>('GET', tenantPath(tenantId ?? '')), shown),
    },
    set: {
      usage: '--base-url https://HOST [--mailto ADDRESS] [--scope all|batches] [--tenant T]',
      summary: "add links under the daemon's public https URL to mail to one recipient (`batches`: batch mail only)",
      options: {
        ...tenantOption,
        'base-url': { type: 'string' },
        mailto: { type: 'string' },
        scope: { type: 'string' },
      },
      positionals: [0, 0],
      api: true,
      run: async (input) => {
        const baseUrl = stringOption(input.values, 'base-url');
        if (baseUrl === undefined) return report(input.cli.stderr, cliError('USAGE', '--base-url is required'));
        // The scope as typed: the API names what it takes when it is neither.
        const scope = (stringOption(input.values, 'scope') ?? 'all') as Setting['scope'];
        return onTenant(input, 'PUT', {
          base_url: baseUrl,
          mailto: stringOption(input.values, 'mailto') ?? null,
          scope,
        });
      },
    },
    off: {
      usage: '[--tenant T]',
      summary: 'add no more links (links in mail already sent keep working)',
      options: tenantOption,
      positionals: [0, 0],
      api: true,
      run: (input) => onTenant(input, 'PUT', null),
    },
  },
};
