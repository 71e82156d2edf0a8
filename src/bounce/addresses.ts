/**
 * Email addresses in free text (bounce prose, DSN values, quoted headers).
 * Bounded by RFC 5321 §4.5.3.1 (local part ≤ 64, domain label ≤ 63), so that a
 * long run of address characters without an `@` costs linear time, not
 * quadratic backtracking. An address does not begin after an accented Latin letter:
 * the tail of an internationalised local part is not an address of its own.
 */

const ADDRESS =
  /(?<![A-Za-z0-9._%+=!#$&'*/?^`{|}~\u00c0-\u024f-])([A-Za-z0-9._%+=!#$&'*/?^`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?){1,8})/g;

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
    if (isMailbox(address)) found.push({ address, index: match.index ?? 0 });
  }
  return found;
}

/**
 * A mailbox someone can send to: a local part and a domain. A pipe or a file
 * a local delivery names (`|/usr/bin/procmail`, `/var/mail/ann`, which Postfix
 * may qualify with its host name) and a source route's hop (`@relay.example`)
 * are not, although their characters are allowed in a local part.
 */
export function isMailbox(address: string): boolean {
  const at = address.lastIndexOf('@');
  return at > 0 && at < address.length - 1 && !/^["']?[|/]/.test(address);
}

export function firstAddress(text: string): string | null {
  return addressesIn(text)[0]?.address ?? null;
}
