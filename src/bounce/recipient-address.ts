/**
 * A failed recipient as one comparable key, from however a report wrote it:
 * `rfc822; <Ann@Example.NET.>`, `utf-8; ann\x{E9}@example.net` (RFC 6533 §3),
 * an xtext-encoded ORCPT `ann+2Btag@example.net` (RFC 3461 §4), `mailto:`,
 * a quoted display form. Addresses are lower-cased whole, as everywhere in the
 * product (suppressions are keyed so), and the domain loses a trailing dot.
 */
import { firstAddress, isMailbox } from './addresses.js';

/** RFC 3461 §4: "+" and two upper-case hex digits encode one octet; a bare "+" cannot occur in xtext. */
const XTEXT_ESCAPE = /\+([0-9A-F]{2})/g;
/**
 * A source route before the mailbox (`@relay.example,@hub.example:`): RFC 5321
 * §4.1.2 keeps it in the grammar only so that servers can ignore it (Appendix C);
 * the mailbox after it is the address.
 */
const SOURCE_ROUTE = /^(<?)\s*@[^\s:<>]{1,255}(?:,\s*@[^\s:<>]{1,255}){0,8}:/;
/** RFC 6533 §3: a Unicode code point written `\x{HHHH}` in a utf-8 address type. */
const UNITEXT_ESCAPE = /\\x\{([0-9A-Fa-f]{1,6})\}/g;

/**
 * Decodes xtext only when the value is well-formed xtext (every "+" starts an
 * escape): a plain address with a sub-address (`ann+news@`) is left as it is.
 */
export function decodeXtext(value: string): string {
  const plusses = value.split('+').length - 1;
  const escapes = [...value.matchAll(XTEXT_ESCAPE)].length;
  if (plusses === 0 || plusses !== escapes) return value;
  return value.replace(XTEXT_ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

export function decodeUnitext(value: string): string {
  return value.replace(UNITEXT_ESCAPE, (whole, hex: string) => {
    const point = Number.parseInt(hex, 16);
    return point <= 0x10ffff ? String.fromCodePoint(point) : whole;
  });
}

/**
 * The address in a recipient value, normalised; null when there is none.
 * `encoded` says the value may be xtext (an Original-Recipient copies ORCPT).
 */
export function normaliseRecipient(value: string | null | undefined, encoded = false): string | null {
  if (value === null || value === undefined) return null;
  const semicolon = value.indexOf(';');
  const type = semicolon >= 0 && semicolon < 20 ? value.slice(0, semicolon).trim().toLowerCase() : '';
  let bare = (semicolon >= 0 && semicolon < 20 ? value.slice(semicolon + 1) : value).trim();
  if (type === 'utf-8') bare = decodeUnitext(bare);
  if (encoded) bare = decodeXtext(bare);
  bare = bare.replace(/^mailto:/i, '').replace(SOURCE_ROUTE, '$1');
  const address = (firstAddress(bare) ?? unicodeAddress(bare))?.replace(/\.+$/, '') ?? null;
  return address !== null && isMailbox(address) ? address : null;
}

/**
 * An internationalised address (RFC 6531) that the ASCII pattern does not
 * match: `<…@…>` or the bare value, its domain qualified (a dot, or an address
 * literal): a bare host name is a mailbox inside one system, not one we sent to.
 */
function unicodeAddress(value: string): string | null {
  const inner =
    /<([^<>\s]{1,320}@[^<>\s]{1,255})>/.exec(value)?.[1] ?? /^"?([^\s"<>]{1,320}@[^\s"<>]{1,255})"?$/.exec(value)?.[1];
  if (inner === undefined || !/@(?:[^@.]+\.[^@]*[^@.]|\[[^@]+\])$/.test(inner)) return null;
  return inner.toLowerCase();
}
