/**
 * Reads what the DNS says of a sending domain (core/tenant/domain-check.ts DomainDnsReader): its
 * SPF record and SPF's verdict for each relay address (mailauth evaluates it, includes, macros and
 * the 10-lookup limit included), each key's DKIM record, its DMARC record and its MX, asking the
 * configured servers (`dns.servers`) or the system's.
 */
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { spf } from 'mailauth/lib/spf/index.js';
import type { DomainDns, DomainDnsReader } from '../core/tenant/index.js';

/** mailauth asks its resolver as node's dns does; a name without the record answers an empty list, as to it. */
type MailauthResolver = (name: string, type: string) => Promise<unknown>;

const NOT_THERE = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NXDOMAIN']);

export function createDomainDnsReader(servers: readonly string[]): DomainDnsReader {
  const resolver = new Resolver({ timeout: 3000, tries: 2 });
  if (servers.length > 0) resolver.setServers([...servers]);
  const missingAsEmpty = async <T>(lookup: Promise<T[]>): Promise<T[]> => {
    try {
      return await lookup;
    } catch (error) {
      if (NOT_THERE.has((error as { code?: string }).code ?? '')) return [];
      throw error;
    }
  };
  const txt = async (name: string): Promise<string[]> =>
    (await missingAsEmpty(resolver.resolveTxt(name))).map((strings) => strings.join(''));
  const mailauthResolver: MailauthResolver = async (name, type) => {
    switch (type) {
      case 'TXT':
        return resolver.resolveTxt(name);
      case 'MX':
        return resolver.resolveMx(name);
      case 'A':
        return resolver.resolve4(name);
      case 'AAAA':
        return resolver.resolve6(name);
      default:
        return resolver.resolve(name, type);
    }
  };
  const addresses = async (host: string): Promise<string[]> =>
    isIP(host) !== 0
      ? [host]
      : [...(await missingAsEmpty(resolver.resolve4(host))), ...(await missingAsEmpty(resolver.resolve6(host)))];

  return {
    async read(domain, relays) {
      const [spfRecords, dmarcRecords, mx] = await Promise.all([
        txt(domain.domain),
        txt(`_dmarc.${domain.domain}`),
        missingAsEmpty(resolver.resolveMx(domain.domain)),
      ]);
      const dkim = await Promise.all(
        domain.keys.map(async (key) => ({
          selector: key.selector,
          published:
            (await txt(`${key.selector}._domainkey.${domain.domain}`)).find((value) => /v=DKIM1/i.test(value)) ?? null,
        })),
      );
      const checked: DomainDns['relays'] = await Promise.all(
        relays.map(async (relay) => ({
          accountId: relay.accountId,
          host: relay.host,
          verdicts: await Promise.all(
            (await addresses(relay.host)).map(async (ip) => {
              const verdict = await spf({
                sender: `postmaster@${domain.domain}`,
                ip,
                helo: relay.host,
                mta: 'mailproxy',
                resolver: mailauthResolver as never,
              });
              return { ip, result: verdict.status.result, comment: verdict.status.comment ?? null };
            }),
          ),
        })),
      );
      return {
        spf: spfRecords.find((value) => /^v=spf1(\s|$)/i.test(value)) ?? null,
        relays: checked,
        dkim,
        dmarc: dmarcRecords.find((value) => /^v=DMARC1/i.test(value)) ?? null,
        mx: mx.sort((a, b) => a.priority - b.priority).map((record) => record.exchange),
      };
    },
  };
}
