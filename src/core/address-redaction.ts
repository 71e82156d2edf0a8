/**
 * Diagnostic texts (a relay's reply, a bounce's reason, a PEC receipt's error) are kept
 * without the people they quote: every e-mail address in them reads `…@domain`, its local
 * part hidden behind one ellipsis (U+2026), its domain kept so that an operator still sees
 * which provider answered, and all around it (angle brackets, quotes, the rest of the reply)
 * left as it was: `550 5.1.1 <ann@example.net>: Recipient address rejected` is kept as
 * `550 5.1.1 <…@example.net>: Recipient address rejected`. Pure and stable: a text always
 * redacts the same way, and a redacted text redacts to itself.
 */

/**
 * Beyond ASCII (RFC 6531), anything but spaces, controls and the brackets and quotes prose
 * wraps an address in. Generous on purpose: hiding a character too many costs readability,
 * one too few would leave part of a person's name.
 */
const WIDE = '(?:(?![\\p{Z}\\p{Cc}\\p{Cf}\\p{Ps}\\p{Pe}\\p{Pi}\\p{Pf}])[\\u{80}-\\u{10FFFF}])';
/** atext (RFC 5322 §3.2.3) and dots, in any order: an address too malformed to send is still hidden whole. */
const LOCAL_CHAR = `(?:[A-Za-z0-9!#$%&'*+/=?^_\`{|}~.\\-]|${WIDE})`;
/** A dot-atom starts at no quote or dot: `'ann@example.net'` keeps its opening quote. */
const LOCAL_FIRST = `(?:[A-Za-z0-9!#$%&*+/=?^_{|}~\\-]|${WIDE})`;
/** RFC 5322 quoted-string: `"ann smith"@example.net`. */
const QUOTED = '"(?:[^"\\\\\\r\\n]|\\\\[^\\r\\n])*"';
const DOMAIN_CHAR = `(?:[A-Za-z0-9_\\-]|${WIDE})`;
/** Labels and dots, never a trailing dot (the end of a sentence), or an address literal. */
const DOMAIN = `(?:\\[[^\\[\\]\\s]+\\]|${DOMAIN_CHAR}+(?:\\.${DOMAIN_CHAR}+)*)`;

/**
 * A dot-atom is only tried where a run of its characters starts (the look-behind): a long
 * word without an address is then read once, not once per character.
 */
const ADDRESS = new RegExp(`(?:${QUOTED}|(?<!${LOCAL_FIRST})${LOCAL_FIRST}${LOCAL_CHAR}*)@(${DOMAIN})`, 'gu');

/** What stands for a hidden local part. */
const HIDDEN_LOCAL_PART = '…';

/** `text` with the local part of every address in it hidden (see above). */
export function redactAddresses(text: string): string {
  return text.includes('@') ? text.replace(ADDRESS, `${HIDDEN_LOCAL_PART}@$1`) : text;
}

/** As redactAddresses, for a text that may be absent. */
export const redactedText = (text: string | null | undefined): string | null =>
  text === null || text === undefined ? null : redactAddresses(text);

/**
 * Fields of a message event's data that carry a diagnostic text (core/contracts/event.ts):
 * kept in the timeline and reported to the client, so kept redacted like the event's text.
 */
const DIAGNOSTIC_FIELDS = ['reason', 'bounce_reason', 'error', 'error_detail'] as const;

/** An event's data with its diagnostic texts redacted; the other fields as they were. */
export function redactDiagnostics(data: Record<string, unknown>): Record<string, unknown> {
  if (!DIAGNOSTIC_FIELDS.some((field) => typeof data[field] === 'string')) return data;
  const redacted = { ...data };
  for (const field of DIAGNOSTIC_FIELDS) {
    const value = redacted[field];
    if (typeof value === 'string') redacted[field] = redactAddresses(value);
  }
  return redacted;
}
