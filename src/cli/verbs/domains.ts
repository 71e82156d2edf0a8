/** `mailproxy domains`: a tenant's sending domains (DKIM keys, the records to publish) and their DNS checks. */
import { integerOption, stringOption } from '../args.js';
import { cliError, report } from '../cli-error.js';
import { tenantCall, type Command, type VerbInput } from '../command.js';

interface DomainView {
  domain: string;
  keys: Array<{ algorithm: string; selector: string; state: string; retire_ts: number | null }>;
  dns_records: Array<{ name: string; type: string; value: string }>;
}

interface DomainCheckView {
  domain: string;
  ok: boolean;
  findings: Array<{ check: string; status: string; message: string; fix: string | null }>;
}

const scoped = (path: string, tenantId: string | undefined): string =>
  `${path}?tenant_id=${encodeURIComponent(tenantId ?? '')}`;
const domainPath = (domain: string): string => `/domains/${encodeURIComponent(domain)}`;

/** A domain in lines: its keys, then each record to publish. */
const domainLines = (domain: DomainView): string =>
  [
    `${domain.domain}`,
    ...domain.keys.map((key) => `  key ${key.selector} ${key.algorithm} ${key.state}`),
    ...domain.dns_records.map((record) => `  publish ${record.type} ${record.name}\n    ${record.value}`),
  ].join('\n') + '\n';

const checkLines = (checked: DomainCheckView): string =>
  [
    `${checked.domain}: ${checked.ok ? 'ok' : 'FAILING'}`,
    ...checked.findings.map(
      (finding) =>
        `  ${finding.status.padEnd(4)} ${finding.check.padEnd(5)} ${finding.message}${finding.fix === null ? '' : `\n             fix: ${finding.fix}`}`,
    ),
  ].join('\n') + '\n';

const one = (input: VerbInput): string => input.positionals[0] ?? '';

export const domainsCommand: Command = {
  name: 'domains',
  summary: 'Sending domains: DKIM keys the daemon signs with, the DNS records to publish, and their checks.',
  verbs: {
    add: {
      usage: 'DOMAIN --selector S [--ed25519] [--tenant T]',
      summary: 'make the keys for DOMAIN and print the DNS records to publish (mail from it is signed from now)',
      options: { tenant: { type: 'string' }, selector: { type: 'string' }, ed25519: { type: 'boolean' } },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const selector = stringOption(input.values, 'selector');
        if (selector === undefined) return report(input.cli.stderr, cliError('USAGE', '--selector is required'));
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<{ domain: DomainView }>('POST', '/domains', {
              body: { tenant_id: tenantId, domain: one(input), selector, ed25519: input.values.ed25519 === true },
            }),
          (answer) => domainLines(answer.domain),
        );
      },
    },
    list: {
      usage: '[--tenant T]',
      summary: "the tenant's sending domains with their keys and records",
      options: { tenant: { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: (input) =>
        tenantCall(
          input,
          (client, tenantId) => client.request<{ domains: DomainView[] }>('GET', scoped('/domains', tenantId)),
          (answer) => (answer.domains.length === 0 ? 'no sending domains\n' : answer.domains.map(domainLines).join('')),
        ),
    },
    check: {
      usage: 'DOMAIN [--tenant T]',
      summary: 'ask the DNS now: SPF, DKIM, DMARC, MX, each finding with its fix (exit 1 when one fails)',
      options: { tenant: { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        let failing = false;
        const code = await tenantCall(
          input,
          (client, tenantId) =>
            client.request<DomainCheckView>('GET', scoped(`${domainPath(one(input))}/check`, tenantId)),
          (answer) => {
            failing = !answer.ok;
            return checkLines(answer);
          },
        );
        return code === 0 && failing ? 1 : code;
      },
    },
    rotate: {
      usage: 'DOMAIN --selector S [--retire-after-seconds N] [--tenant T]',
      summary: 'make new keys under S (pending: publish them; they sign once a check sees them)',
      options: {
        tenant: { type: 'string' },
        selector: { type: 'string' },
        'retire-after-seconds': { type: 'string' },
      },
      positionals: [1, 1],
      api: true,
      run: async (input) => {
        const selector = stringOption(input.values, 'selector');
        if (selector === undefined) return report(input.cli.stderr, cliError('USAGE', '--selector is required'));
        const retire = integerOption(input.values, 'retire-after-seconds', 0);
        if (!retire.ok) return report(input.cli.stderr, retire.error);
        return tenantCall(
          input,
          (client, tenantId) =>
            client.request<{ domain: DomainView }>('POST', scoped(`${domainPath(one(input))}/rotate`, tenantId), {
              body: { selector, retire_after_seconds: retire.value },
            }),
          (answer) => domainLines(answer.domain),
        );
      },
    },
    remove: {
      usage: 'DOMAIN [--tenant T]',
      summary: 'stop signing for DOMAIN and forget its keys',
      options: { tenant: { type: 'string' } },
      positionals: [1, 1],
      api: true,
      run: (input) =>
        tenantCall(
          input,
          (client, tenantId) => client.request<{ ok: true }>('DELETE', scoped(domainPath(one(input)), tenantId)),
          () => `sending domain ${one(input)} removed\n`,
        ),
    },
  },
};
