/**
 * Email addresses in free text (bounce prose, DSN values, quoted headers).
 * Bounded by RFC 5321 §4.5.3.1 (local part ≤ 64, domain label ≤ 63), so that a
 * long run of address characters without an `@` costs linear time, not
 * quadratic backtracking.
 */

const ADDRESS =
  /(?<![A-Za-z0-9._%+=!#$&'*/?^`{|}~-])([A-Za-z0-9._%+=!#$&'*/?^`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){1,8})/g;

export interface AddressAt {
  address: string;
  index: number;
}

/** Every address in the text, lower-cased, with where it starts. */
export function addressesIn(text: string): AddressAt[] {
  const found: AddressAt[] = [];
  for (const match of text.matchAll(ADDRESS)) {
    // A leading dot or quote belongs to the prose, not to the address.
    const address = (match[1] as string).replace(/^[.'`]+/, '').toLowerCase();
    if (address.includes('@') && !address.startsWith('@')) found.push({ address, index: match.index ?? 0 });
  }
  return found;
}

export function firstAddress(text: string): string | null {
  return addressesIn(text)[0]?.address ?? null;
}
