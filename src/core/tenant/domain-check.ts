/**
 * A sending domain's DNS, judged as the big receivers judge it (Gmail and Yahoo since 2024,
 * Outlook.com since 2025): SPF authorising the relays its mail goes through (within SPF's 10
 * lookups), each DKIM key we sign with published as it is, a DMARC record, and an MX. Each finding
 * says what is wrong and how to fix it. Pure: the DNS answers and SPF verdicts come in as data.
 */
import { dkimRecord, keyState, type DkimKey, type SendingDomain } from './sending-domain.js';

/** What the DNS said of a domain, gathered by the adapter (src/delivery/domain-dns.ts). */
export interface DomainDns {
  /** The SPF record at the domain (`v=spf1 ...`), or null when it has none. */
  spf: string | null;
  /** Per relay the tenant sends through: its host, its addresses, and SPF's verdict for each. */
  relays: Array<{
    accountId: string;
    host: string;
    verdicts: Array<{ ip: string; result: string; comment: string | null }>;
  }>;
  /** Per key we sign with: what its selector's record holds, or null when it has none. */
  dkim: Array<{ selector: string; published: string | null }>;
  /** The DMARC record at `_dmarc.<domain>`, or null. */
  dmarc: string | null;
  /** The domain's MX hosts. */
  mx: string[];
}

export type FindingStatus = 'pass' | 'warn' | 'fail';

export interface DomainFinding {
  /** `dns`: the servers did not answer, so nothing else was checked. */
  check: 'spf' | 'dkim' | 'dmarc' | 'mx' | 'dns';
  status: FindingStatus;
  message: string;
  /** What to do about it; null when nothing is to be done. */
  fix: string | null;
}

const spfFindings = (domain: string, dns: DomainDns): DomainFinding[] => {
  if (dns.spf === null)
    return [
      {
        check: 'spf',
        status: 'fail',
        message: `${domain} has no SPF record: receivers cannot tell which servers may send its mail`,
        fix: `publish TXT at ${domain}: "v=spf1 ${dns.relays.flatMap((relay) => relay.verdicts.map((verdict) => `ip4:${verdict.ip}`)).join(' ') || 'include:<your provider>'} -all" (or your provider's include)`,
      },
    ];
  const findings: DomainFinding[] = [];
  for (const relay of dns.relays)
    for (const verdict of relay.verdicts) {
      if (verdict.result === 'pass')
        findings.push({
          check: 'spf',
          status: 'pass',
          message: `SPF authorises ${relay.host} (${verdict.ip}), account "${relay.accountId}"`,
          fix: null,
        });
      else if (verdict.result === 'permerror' || verdict.result === 'temperror')
        findings.push({
          check: 'spf',
          status: 'fail',
          message: `SPF of ${domain} cannot be evaluated (${verdict.result}${verdict.comment === null ? '' : `: ${verdict.comment}`})`,
          fix: /lookup|limit/i.test(verdict.comment ?? '')
            ? 'SPF allows at most 10 DNS lookups: flatten includes you do not need, or replace them by ip4:/ip6: ranges'
            : `correct the SPF record at ${domain}`,
        });
      else
        findings.push({
          check: 'spf',
          status: 'fail',
          message: `SPF of ${domain} does not authorise ${relay.host} (${verdict.ip}), the relay of account "${relay.accountId}" (${verdict.result})`,
          fix: `add "ip4:${verdict.ip}" (or the relay provider's include) to the SPF record at ${domain}, before its "all"`,
        });
    }
  return findings;
};

/** The key a DKIM record publishes (`p=`), or null. */
const publishedKey = (record: string | null): string | null =>
  /(?:^|;)\s*p=([^;]*)/.exec(record ?? '')?.[1]?.replace(/\s+/g, '') ?? null;

/** The selectors whose record holds the key we made for it. */
export const publishedSelectors = (domain: SendingDomain, dns: DomainDns): string[] =>
  domain.keys
    .filter(
      (key) =>
        publishedKey(dns.dkim.find((record) => record.selector === key.selector)?.published ?? null) === key.publicKey,
    )
    .map((key) => key.selector);

/** A key not in DNS as it should be: a failure for one that signs, a warning for one of a rotation. */
const unpublished = (key: DkimKey, message: string, fix: string): DomainFinding => {
  const state = keyState(key);
  if (state === 'active') return { check: 'dkim', status: 'fail', message, fix };
  const stage =
    state === 'pending'
      ? 'the next key (it signs once it is seen published)'
      : 'a replaced key (mail signed with it is still being verified)';
  return { check: 'dkim', status: 'warn', message: `${message}; it is ${stage}`, fix };
};

const dkimFindings = (domain: SendingDomain, dns: DomainDns): DomainFinding[] =>
  domain.keys.map((key) => {
    const expected = dkimRecord(domain.domain, key);
    const published = dns.dkim.find((record) => record.selector === key.selector)?.published ?? null;
    if (published === null)
      return unpublished(
        key,
        `no DKIM record at ${expected.name}: receivers cannot verify the ${key.algorithm} signature`,
        `publish TXT at ${expected.name}: "${expected.value}"`,
      );
    if (publishedKey(published) !== key.publicKey)
      return unpublished(
        key,
        `the key published at ${expected.name} is not the one we sign with (a stale or mistyped record)`,
        `replace the TXT at ${expected.name} with "${expected.value}"`,
      );
    return {
      check: 'dkim' as const,
      status: 'pass' as const,
      message: `${expected.name} publishes our ${key.algorithm} key`,
      fix: null,
    };
  });

const dmarcFindings = (domain: string, dns: DomainDns): DomainFinding[] => {
  const name = `_dmarc.${domain}`;
  if (dns.dmarc === null)
    return [
      {
        check: 'dmarc',
        status: 'fail',
        message: `${domain} has no DMARC record: Gmail, Yahoo and Outlook.com refuse bulk mail without one`,
        fix: `publish TXT at ${name}: "v=DMARC1; p=none; rua=mailto:dmarc-reports@${domain}" (then tighten p= once the reports are clean)`,
      },
    ];
  const policy = /(?:^|;)\s*p=\s*(none|quarantine|reject)/i.exec(dns.dmarc)?.[1]?.toLowerCase() ?? null;
  if (policy === null)
    return [
      {
        check: 'dmarc',
        status: 'fail',
        message: `the DMARC record at ${name} has no valid p= policy`,
        fix: `set "p=none", "p=quarantine" or "p=reject" in ${name}`,
      },
    ];
  // We sign with d= the From domain itself: DKIM aligns under relaxed and strict alike.
  const aligned = `DKIM aligns (signed with d=${domain})`;
  return [
    policy === 'none'
      ? {
          check: 'dmarc',
          status: 'warn',
          message: `DMARC policy p=none (monitoring only); ${aligned}`,
          fix: `once its reports show only your own mail, move ${name} to p=quarantine`,
        }
      : { check: 'dmarc', status: 'pass', message: `DMARC policy p=${policy}; ${aligned}`, fix: null },
  ];
};

const mxFindings = (domain: string, dns: DomainDns): DomainFinding[] =>
  dns.mx.length > 0
    ? [{ check: 'mx', status: 'pass', message: `${domain} receives mail at ${dns.mx.join(', ')}`, fix: null }]
    : [
        {
          check: 'mx',
          status: 'warn',
          message: `${domain} has no MX: replies and bounces to it cannot be delivered`,
          fix: `publish an MX for ${domain}`,
        },
      ];

/** The DNS servers did not answer: nothing could be checked, which is a finding too. */
export const unanswered = (error: unknown): DomainFinding => ({
  check: 'dns',
  status: 'fail',
  message: `the DNS did not answer (${(error as { code?: string }).code ?? 'error'}): nothing could be checked`,
  fix: 'check that the daemon reaches its DNS servers (dns.servers, else the system resolver), then check again',
});

export function domainFindings(domain: SendingDomain, dns: DomainDns): DomainFinding[] {
  return [
    ...spfFindings(domain.domain, dns),
    ...dkimFindings(domain, dns),
    ...dmarcFindings(domain.domain, dns),
    ...mxFindings(domain.domain, dns),
  ];
}

/** A sending domain whose last check found something failing: GET /status `domains` and the console's warning. */
export interface FailingDomain {
  tenant_id: string;
  domain: string;
  checked_ts: number;
  /** The checks that failed (`spf`, `dkim`, `dmarc`, `mx`, `dns`). */
  failing: string[];
}

/** The reader of a domain's DNS (src/delivery/domain-dns.ts): the relays are the tenant's accounts' hosts. */
export interface DomainDnsReader {
  read(domain: SendingDomain, relays: ReadonlyArray<{ accountId: string; host: string }>): Promise<DomainDns>;
}
