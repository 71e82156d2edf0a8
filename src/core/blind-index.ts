/**
 * Keyed digests of personal values (a blind index): what the product matches on
 * where it keeps the value itself only sealed. Suppressions, the sender and
 * recipient filters, erasure by address and full-text search compare digests;
 * equal values of a kind digest equally, and without the key nothing else can be
 * learnt from a digest, not even by trying addresses one by one.
 */
import { normalizeAddress } from './address.js';

/** What a digest stands for: the same text digests differently as an address, a word and a prefix. */
export type BlindKind = 'address' | 'word' | 'prefix';

export interface BlindIndex {
  /** One digest per value, in order: short lowercase alphanumeric tokens (a full-text index keeps each whole). */
  digest(kind: BlindKind, values: readonly string[]): string[];
  /** As `digest` for several kinds at once (one pass over the key: a message's search terms), group by group. */
  digestGroups(groups: ReadonlyArray<{ kind: BlindKind; values: readonly string[] }>): string[][];
}

/** An address's digest, on its normalized form (any case matches). */
export const addressDigest = (index: BlindIndex, address: string): string =>
  index.digest('address', [normalizeAddress(address)])[0] as string;

/** Digests of several addresses, normalized, in order. */
export const addressDigests = (index: BlindIndex, addresses: readonly string[]): string[] =>
  index.digest('address', addresses.map(normalizeAddress));
