/**
 * Mailbox parsing and addr-spec validation (RFC 5321 §4.1.2, RFC 5322 §3.4,
 * RFC 6531 for UTF-8). Accepts `addr@example.com` and `Name <addr@example.com>`;
 * refuses anything that could smuggle a header or an SMTP command.
 */

export interface Mailbox {
  name: string | null;
  address: string;
}

// dot-atom local part: atext (plus any non-ASCII, RFC 6531) separated by single dots.
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u0080-\\u{10FFFF}]";
const DOT_ATOM_LOCAL = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*$`, 'u');
// quoted-string local part: printable characters, with \ escapes; no CR, LF or NUL.
const QUOTED_LOCAL = /^"(?:[^"\\\r\n\0]|\\[^\r\n\0])*"$/u;
const LABEL = /^(?!-)[A-Za-z0-9\-\u0080-\u{10FFFF}]{1,63}(?<!-)$/u;
const IPV4_LITERAL = /^\[(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\]$/;
const IPV6_LITERAL = /^\[IPv6:[0-9A-Fa-f:.]{2,45}\]$/;

export function isAddrSpec(address: string): boolean {
  if (/[\r\n\0\s<>]/u.test(address.replace(/"[^"]*"/gu, '""'))) return false;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (Buffer.byteLength(local, 'utf8') > 64 || Buffer.byteLength(address, 'utf8') > 254) return false;
  if (!DOT_ATOM_LOCAL.test(local) && !QUOTED_LOCAL.test(local)) return false;
  if (IPV4_LITERAL.test(domain) || IPV6_LITERAL.test(domain)) return true;
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((label) => LABEL.test(label));
}

/** Parses one mailbox; null when it is not a valid single mailbox. */
export function parseMailbox(text: string): Mailbox | null {
  if (/[\r\n\0]/.test(text)) return null;
  const trimmed = text.trim();
  const angle = /^(.*?)\s*<([^<>]+)>$/su.exec(trimmed);
  if (angle === null) return isAddrSpec(trimmed) ? { name: null, address: trimmed } : null;
  const rawName = (angle[1] ?? '').trim();
  const address = (angle[2] ?? '').trim();
  if (!isAddrSpec(address)) return null;
  const name = rawName.startsWith('"') && rawName.endsWith('"') && rawName.length >= 2 ? rawName.slice(1, -1) : rawName;
  if (/[<>]/.test(rawName) && !rawName.startsWith('"')) return null;
  return { name: name === '' ? null : name, address };
}

/** An address's local part and domain, split at its last `@` (a quoted local part may hold one). */
export function splitAddress(address: string): [local: string, domain: string] {
  const at = address.lastIndexOf('@');
  return [address.slice(0, at), address.slice(at + 1)];
}

/** The form used for suppression lookups and de-duplication: the domain is case-insensitive. */
export function normalizeAddress(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}@${address.slice(at + 1).toLowerCase()}`.toLowerCase();
}

/**
 * Whether a domain (lower case) matches a pattern: the domain itself, or `*.example.com` for
 * example.com and every domain under it. Routing rules and destination limits read patterns alike.
 */
export function domainMatches(domain: string, pattern: string): boolean {
  const wanted = pattern.toLowerCase();
  if (!wanted.startsWith('*.')) return domain === wanted;
  const parent = wanted.slice(2);
  return domain === parent || domain.endsWith(`.${parent}`);
}
