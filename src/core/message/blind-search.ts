/**
 * Search over sealed fields (issue 45): a message's subject, sender and recipients
 * are stored only sealed, and what GET /messages finds them by is a string of
 * blind-index digests (core/blind-index.ts), its *search terms*, in a full-text
 * index of their own:
 *
 *   words     one per word of the subject, the sender and each recipient, in that
 *             order (so `ann@example.net` is still the phrase of its parts);
 *   prefixes  the first 3 to 6 letters of each word (typing as you search);
 *   addresses `f` before the sender's digest, `t` before each recipient's.
 *
 * Digests are letters and hex: the index keeps each whole, and never a word of what
 * was digested. What is lost against a clear index: a prefix longer than six letters
 * is matched on its first six.
 */
import { addressDigest, addressDigests, type BlindIndex } from '../blind-index.js';

/** The personal fields of a message as the product reads them (sealed as stored). */
export interface PersonalFields {
  mailFrom: string;
  rcptTo: string[];
  subject: string | null;
}

const PREFIX_MIN = 3;
const PREFIX_MAX = 6;

/** Words as the index has them: lower case, without diacritics, split at anything not a letter or digit. */
const wordsOf = (text: string): string[] =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

const prefixOf = (word: string, length: number): string => [...word].slice(0, length).join('');

/** The search terms of a message: words, their prefixes, then its addresses (space-separated). */
export function searchTerms(index: BlindIndex, fields: PersonalFields): string {
  const words = [...wordsOf(fields.subject ?? ''), ...wordsOf(fields.mailFrom), ...fields.rcptTo.flatMap(wordsOf)];
  const prefixes = new Set<string>();
  for (const word of words) {
    const letters = [...word].length;
    for (let length = PREFIX_MIN; length <= Math.min(letters, PREFIX_MAX); length += 1)
      prefixes.add(prefixOf(word, length));
  }
  return [
    ...index.digest('word', words),
    ...index.digest('prefix', [...prefixes]),
    ...(fields.mailFrom === '' ? [] : [`f${addressDigest(index, fields.mailFrom)}`]),
    ...addressDigests(index, fields.rcptTo).map((digest) => `t${digest}`),
  ].join(' ');
}

/** The term of an envelope address in the search terms: `f` for the sender, `t` for a recipient. */
export const addressTerm = (index: BlindIndex, role: 'sender' | 'recipient', address: string): string =>
  `${role === 'sender' ? 'f' : 't'}${addressDigest(index, address)}`;

/**
 * Free text as an FTS5 query over search terms: each word the phrase of its parts, all
 * required, the last part of the last word as a prefix when it has three letters or more.
 * Terms are digests (letters and digits): nothing typed can be read as FTS syntax.
 */
export function blindTextQuery(index: BlindIndex, text: string): string | null {
  const typed = text
    .split(/\s+/)
    .map(wordsOf)
    .filter((parts) => parts.length > 0);
  if (typed.length === 0) return null;
  return typed
    .map((parts, position) => {
      const last = parts[parts.length - 1] as string;
      if (position < typed.length - 1 || [...last].length < PREFIX_MIN)
        return `"${index.digest('word', parts).join(' ')}"`;
      const [prefix] = index.digest('prefix', [prefixOf(last, PREFIX_MAX)]);
      const before = parts.slice(0, -1);
      return before.length === 0 ? `${prefix}` : `("${index.digest('word', before).join(' ')}" AND ${prefix})`;
    })
    .join(' AND ');
}
