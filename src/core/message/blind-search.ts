/**
 * Search over sealed fields (issue 45): a message's subject, sender and recipients
 * are stored only sealed, and what GET /messages finds them by is a string of
 * blind-index digests (core/blind-index.ts), its *search terms*, in a full-text
 * index of their own:
 *
 *   words     one per word of the subject, the sender and each recipient, in that
 *             order (so `ann@example.net` is still the phrase of its parts);
 *   prefixes  the first 3 to 6 letters of each word of the subject (typing as you search);
 *   addresses `f` before the sender's digest, `t` before each recipient's.
 *
 * Digests are letters and hex: the index keeps each whole, and never a word of what
 * was digested. What is lost against a clear index: a prefix longer than six letters
 * is matched on its first six, and an address's parts are matched whole (`ross` does not find
 * `ann.rossi@…`, `rossi` does).
 */
import { normalizeAddress } from '../address.js';
import { addressDigest, type BlindIndex } from '../blind-index.js';

/** The personal fields of a message as the product reads them (sealed as stored). */
export interface PersonalFields {
  mailFrom: string;
  rcptTo: string[];
  subject: string | null;
}

const PREFIX_MIN = 3;
const PREFIX_MAX = 6;

const ASCII = /^[\x00-\x7f]*$/;

/** Words as the index has them: lower case, without diacritics, split at anything not a letter or digit. */
const wordsOf = (text: string): string[] =>
  ASCII.test(text)
    ? text
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .filter(Boolean)
    : text
        .normalize('NFKD')
        .replace(/\p{M}/gu, '')
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u)
        .filter(Boolean);

/** The first `length` letters of a word (whole code points beyond ASCII). */
const prefixOf = (word: string, length: number): string =>
  ASCII.test(word) ? word.slice(0, length) : [...word].slice(0, length).join('');

const lettersIn = (word: string): number => (ASCII.test(word) ? word.length : [...word].length);

/** The search terms of a message: words, their prefixes, then its addresses (space-separated). */
export function searchTerms(index: BlindIndex, fields: PersonalFields): string {
  const subject = wordsOf(fields.subject ?? '');
  const words = [...subject, ...wordsOf(fields.mailFrom), ...fields.rcptTo.flatMap(wordsOf)];
  // Prefixes of the subject's words only: an address is found by its whole parts (`rossi`), and
  // its prefixes would be most of a message's terms (intake and erasure pay for each).
  const prefixes = new Set<string>();
  for (const word of subject) {
    const letters = ASCII.test(word) ? word : [...word];
    for (let length = PREFIX_MIN; length <= Math.min(letters.length, PREFIX_MAX); length += 1)
      prefixes.add(typeof letters === 'string' ? letters.slice(0, length) : letters.slice(0, length).join(''));
  }
  const addresses = fields.mailFrom === '' ? fields.rcptTo : [fields.mailFrom, ...fields.rcptTo];
  const [wordTerms = [], prefixTerms = [], addressTerms = []] = index.digestGroups([
    { kind: 'word', values: words },
    { kind: 'prefix', values: [...prefixes] },
    { kind: 'address', values: addresses.map(normalizeAddress) },
  ]);
  const senders = fields.mailFrom === '' ? 0 : 1;
  return [
    ...wordTerms,
    ...prefixTerms,
    ...addressTerms.map((digest, position) => (position < senders ? `f${digest}` : `t${digest}`)),
  ].join(' ');
}

/** The term of an envelope address in the search terms: `f` for the sender, `t` for a recipient. */
export const addressTerm = (index: BlindIndex, role: 'sender' | 'recipient', address: string): string =>
  `${role === 'sender' ? 'f' : 't'}${addressDigest(index, address)}`;

/**
 * Free text as an FTS5 query over search terms: each word the phrase of its parts, all
 * required; the last word also found by its last part as the prefix of a subject's word when
 * that part has three letters or more.
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
      if (position < typed.length - 1 || lettersIn(last) < PREFIX_MIN)
        return `"${index.digest('word', parts).join(' ')}"`;
      const [prefix] = index.digest('prefix', [prefixOf(last, PREFIX_MAX)]);
      const whole = `"${index.digest('word', parts).join(' ')}"`;
      const before = parts.slice(0, -1);
      // The word whole (an address's parts, a word typed to its end), or its last part as a subject word's prefix.
      return before.length === 0
        ? `(${whole} OR ${prefix})`
        : `(${whole} OR ("${index.digest('word', before).join(' ')}" AND ${prefix}))`;
    })
    .join(' AND ');
}
