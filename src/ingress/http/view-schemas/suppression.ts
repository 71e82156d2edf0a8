/**
 * What the suppression routes answer (routes/bounces.ts `view`): an entry of a
 * tenant's suppression list, and a page of them.
 */
import { z } from 'zod';
import { field, nullableSeconds, nullableText, ok, seconds } from './field.js';

const SUPPRESSION_EXAMPLE = {
  address: 'ann@example.net',
  digest: 'a3f09c1b27d4e6a5b8c90',
  reason: '550 5.1.1 user unknown',
  source: 'bounce' as const,
  created_ts: 1764003600,
  expires_ts: null,
};

const suppression = z.object({
  address: field(z.string(), 'The address mail is not sent to (lower case).', 'ann@example.net'),
  digest: field(
    z.string(),
    "The address's keyed digest: the entry's key (the address itself is stored only sealed), how its events and audit rows name it, and the page cursor.",
    'a3f09c1b27d4e6a5b8c90',
  ),
  reason: nullableText('Why: the bounce or complaint, or the reason given.', '550 5.1.1 user unknown'),
  source: field(
    z.enum(['manual', 'bounce', 'complaint', 'unsubscribe']),
    '`manual` (POST /suppression), a hard `bounce`, a `complaint`, or `unsubscribe` (the recipient clicked a one-click unsubscribe link).',
    'bounce',
  ),
  created_ts: seconds('When it was added', 1764003600),
  expires_ts: nullableSeconds('When it lapses by itself; null: until removed', null),
});

export const suppressionPage = z.object({
  suppressions: field(z.array(suppression), 'The entries, in the order of their digests; expired ones are left out.', [
    SUPPRESSION_EXAMPLE,
  ]),
  next: nullableText('Pass as `after` for the next page; null on the last one.', null),
});

export const suppressionAdded = z.object({
  ok,
  suppression: field(suppression, 'The entry as stored.', {
    ...SUPPRESSION_EXAMPLE,
    reason: 'asked to be removed by phone',
    source: 'manual' as const,
  }),
});
