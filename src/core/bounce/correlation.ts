/**
 * Tying mail that came back (a bounce, a PEC receipt) to the message of ours
 * it is about: its references, strongest first, each looked up in turn. When
 * a reference fits several messages (a client id in several tenants, a
 * repeated Message-ID), the recipients the mail names pick the one sent to
 * them, or the mail stays unmatched as `ambiguous`.
 */
import { normalizeAddress } from '../address.js';
import type { MessageCandidate, UnmatchedReason } from './bounce.js';

export type Correlated<By extends string> =
  { matched: true; candidate: MessageCandidate; by: By } | { matched: false; reason: UnmatchedReason };

export function correlateReferences<By extends string>(
  references: ReadonlyArray<readonly [By, string | null]>,
  lookup: (by: By, value: string) => readonly MessageCandidate[],
  namedRecipients: ReadonlyArray<string | null>,
): Correlated<By> {
  if (references.every(([, value]) => value === null)) return { matched: false, reason: 'no_reference' };
  let ambiguous = false;
  for (const [by, value] of references) {
    if (value === null) continue;
    const found = lookup(by, value);
    const picked = found.length <= 1 ? found[0] : pickByRecipient(found, namedRecipients);
    if (picked !== undefined) return { matched: true, candidate: picked, by };
    if (found.length > 1) ambiguous = true;
  }
  return { matched: false, reason: ambiguous ? 'ambiguous' : 'not_found' };
}

function pickByRecipient(
  candidates: readonly MessageCandidate[],
  named: ReadonlyArray<string | null>,
): MessageCandidate | undefined {
  const addresses = new Set(named.flatMap((address) => (address === null ? [] : [normalizeAddress(address)])));
  const fitting = candidates.filter((candidate) =>
    candidate.rcptTo.some((address) => addresses.has(normalizeAddress(address))),
  );
  return fitting.length === 1 ? fitting[0] : undefined;
}
