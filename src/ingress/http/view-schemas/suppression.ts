/**
 * What the suppression routes answer (routes/bounces.ts `view`): an entry of a
 * tenant's suppression list, and a page of them.
 */
import { z } from 'zod';
import { field, nullableSeconds, nullableText, ok, seconds } from './field.js';

const SUPPRESSION_EXAMPLE = {
  address: 'ann@example.net',
  reason: '550 5.1.1 user unknown',
  source: 'bounce' as const,
  created_ts: 1764003600,
  expires_ts: null,
};

const suppression = z.object({
  address: field(z.string(), 'The address mail is not sent to (lower case).', 'ann@example.net'),
  reason: nullableText('Why: the bounce or complaint, or the reason given.', '550 5.1.1 user unknown'),
  source: field(
    z.enum(['manual', 'bounce', 'complaint']),
    '`manual` (POST /suppression), a hard `bounce`, or a `complaint`.',
    'bounce',
  ),
  created_ts: seconds('When it was added', 1764003600),
  expires_ts: nullableSeconds('When it lapses by itself; null: until removed', null),
});

export const suppressionPage = z.object({
  suppressions: field(z.array(suppression), 'The entries, in address order; expired ones are left out.', [
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
