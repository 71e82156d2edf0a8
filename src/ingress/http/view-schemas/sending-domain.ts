/** The answers of the sending-domain routes (DKIM): a domain with its keys' selectors and the DNS records to publish. */
import { z } from 'zod';
import { field, nullableSeconds, ok, seconds } from './field.js';

const EXAMPLE_KEY = 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA...';

const sendingDomain = z.object({
  tenant_id: field(z.string(), 'The tenant whose mail it signs.', 'acme'),
  domain: field(z.string(), 'The From domain whose mail is signed (`d=`), lower case.', 'example.com'),
  keys: field(
    z.array(
      z.object({
        algorithm: field(z.enum(['rsa-sha256', 'ed25519-sha256']), 'The signature algorithm.', 'rsa-sha256'),
        selector: field(
          z.string(),
          "The key's selector (`s=`): its record is `<selector>._domainkey.<domain>`.",
          'mp1',
        ),
        state: field(
          z.enum(['pending', 'active', 'retiring']),
          "`pending`: a rotation's new key, to publish (it signs once a check sees it published); `active`: it signs; `retiring`: replaced, keep its record published until `retire_ts`.",
          'active',
        ),
        retire_ts: nullableSeconds('When a retiring key is removed (its record may go then)', null),
      }),
    ),
    'Its keys: RSA 2048, and Ed25519 as a second signature when asked.',
    [{ algorithm: 'rsa-sha256', selector: 'mp1', state: 'active', retire_ts: null }],
  ),
  dns_records: field(
    z.array(
      z.object({
        name: field(z.string(), 'The record name to publish.', 'mp1._domainkey.example.com'),
        type: field(z.literal('TXT'), 'Always TXT.', 'TXT'),
        value: field(
          z.string(),
          'The record value (split it into strings of at most 255 characters where the DNS host asks).',
          `v=DKIM1; k=rsa; p=${EXAMPLE_KEY}`,
        ),
      }),
    ),
    'The records to publish for each key; receivers verify the signatures against them.',
    [{ name: 'mp1._domainkey.example.com', type: 'TXT', value: `v=DKIM1; k=rsa; p=${EXAMPLE_KEY}` }],
  ),
  created_ts: seconds('When it was added'),
});

const SENDING_DOMAIN_EXAMPLE: z.output<typeof sendingDomain> = {
  tenant_id: 'acme',
  domain: 'example.com',
  keys: [{ algorithm: 'rsa-sha256', selector: 'mp1', state: 'active', retire_ts: null }],
  dns_records: [{ name: 'mp1._domainkey.example.com', type: 'TXT', value: `v=DKIM1; k=rsa; p=${EXAMPLE_KEY}` }],
  created_ts: 1764000061,
};
const domainField = field(
  sendingDomain,
  'The sending domain, with the DNS records to publish.',
  SENDING_DOMAIN_EXAMPLE,
);

export const sendingDomainAdded = z.object({ ok, domain: domainField });
export const sendingDomainAnswer = z.object({ domain: domainField });
export const sendingDomainList = z.object({
  domains: field(z.array(sendingDomain), "The tenant's sending domains.", []),
});

const finding = z.object({
  check: field(
    z.enum(['spf', 'dkim', 'dmarc', 'mx', 'dns']),
    'What was checked (`dns`: the DNS servers did not answer, nothing else was).',
    'dmarc',
  ),
  status: field(
    z.enum(['pass', 'warn', 'fail']),
    '`fail`: receivers will refuse or distrust the mail until it is fixed.',
    'fail',
  ),
  message: field(
    z.string(),
    'What was found, in words.',
    'example.com has no DMARC record: Gmail, Yahoo and Outlook.com refuse bulk mail without one',
  ),
  fix: field(
    z.string().nullable(),
    'What to do about it; null when nothing is to be done.',
    'publish TXT at _dmarc.example.com: "v=DMARC1; p=none; rua=mailto:dmarc-reports@example.com"',
  ),
});

export const domainCheckAnswer = z.object({
  tenant_id: field(z.string(), 'The tenant.', 'acme'),
  domain: field(z.string(), 'The sending domain checked.', 'example.com'),
  ok: field(z.boolean(), 'True when no finding fails.', false),
  checked_ts: seconds('When the DNS was asked'),
  published_selectors: field(
    z.array(z.string()),
    'The selectors whose record holds the key we made for it; once every pending key is among them, the rotation completes (this check did it).',
    ['mp1'],
  ),
  findings: field(z.array(finding), 'Each check with what it found and, where something is wrong, the fix.', [
    {
      check: 'dmarc',
      status: 'fail',
      message: 'example.com has no DMARC record: Gmail, Yahoo and Outlook.com refuse bulk mail without one',
      fix: 'publish TXT at _dmarc.example.com: "v=DMARC1; p=none; rua=mailto:dmarc-reports@example.com"',
    },
  ]),
});
