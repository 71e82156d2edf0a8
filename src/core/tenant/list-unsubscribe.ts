/**
 * One-click unsubscribe (RFC 8058, RFC 2369): what a tenant asks for, the link a
 * relayed message carries, and what the link stands for. Gmail, Yahoo and
 * Outlook.com refuse bulk mail without it. Pure: the link's sealing is a port
 * (security/unsubscribe-links.ts), the headers are text the relay puts in front.
 *
 * A link names one recipient of one message, so only mail to a single recipient
 * carries one: with several, a click could not say who asked.
 */
import { isAddrSpec } from '../address.js';
import { AppError } from '../app-error.js';

/** A tenant's setting; null on the tenant: no header is added. */
export interface ListUnsubscribe {
  /**
   * The daemon's public https URL, as recipients' mailbox providers reach it (its
   * `/unsubscribe/{token}` is public): e.g. `https://mail.example.com`.
   */
  baseUrl: string;
  /** An address for the `mailto:` form beside the link (the tenant's to read), or null. */
  mailto: string | null;
  /** `all`: every single-recipient message; `batches`: only mail with a batch code (newsletters, campaigns). */
  scope: 'all' | 'batches';
}

/** What a link stands for: the recipient of one message of a tenant, and the list (batch) it came in. */
export interface UnsubscribeClaim {
  tenantId: string;
  /** The client's id of the message (X-Genro-Mail-ID). */
  messageId: string;
  /** As it was sent to (normalized). */
  recipient: string;
  /** The message's batch code, or null. */
  list: string | null;
}

/** Seals claims into opaque, authenticated link tokens and opens them; a forged or altered token opens to null. */
export interface UnsubscribeLinks {
  issue(claim: UnsubscribeClaim): string;
  open(token: string): UnsubscribeClaim | null;
}

export const UNSUBSCRIBE_PATH = '/unsubscribe/';

/** The link of a token under the tenant's public base URL. */
const unsubscribeUrl = (settings: ListUnsubscribe, token: string): string =>
  `${settings.baseUrl.replace(/\/+$/, '')}${UNSUBSCRIBE_PATH}${token}`;

/** The message a list-unsubscribe link may be put in: one recipient, and a batch when the tenant asks for batches only. */
export function takesUnsubscribe(
  settings: ListUnsubscribe | null,
  message: { rcptTo: readonly string[]; batchCode: string | null },
): boolean {
  if (settings === null || message.rcptTo.length !== 1) return false;
  return settings.scope === 'all' || message.batchCode !== null;
}

/**
 * The two header lines (RFC 8058 §3.1): the https link first (what one-click POSTs to), the
 * mailto beside it for clients that only know that form. A token is base64url and dots: safe in a URL as it is.
 */
export function unsubscribeHeaders(settings: ListUnsubscribe, token: string): string[] {
  const mailto =
    settings.mailto === null ? '' : `, <mailto:${settings.mailto}?subject=unsubscribe%20${encodeURIComponent(token)}>`;
  return [
    `List-Unsubscribe: <${unsubscribeUrl(settings, token)}>${mailto}`,
    'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
  ];
}

/** A setting as it may be saved; VALIDATION_FAILED naming each problem otherwise. */
export function checkListUnsubscribe(settings: ListUnsubscribe | null | undefined): void {
  if (settings === null || settings === undefined) return;
  const details = listUnsubscribeProblems(settings);
  if (details.length > 0) throw new AppError('VALIDATION_FAILED', 'invalid request body', { details });
}

/** A setting's problems (field, message), empty when it may be saved. */
function listUnsubscribeProblems(settings: ListUnsubscribe): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  let url: URL | null = null;
  try {
    url = new URL(settings.baseUrl);
  } catch {
    problems.push({ path: 'list_unsubscribe.base_url', message: 'not a URL' });
  }
  // RFC 8058 §3.1: the one-click URI must be https; mailbox providers ignore anything else.
  if (url !== null && url.protocol !== 'https:')
    problems.push({ path: 'list_unsubscribe.base_url', message: 'must be an https URL (RFC 8058)' });
  if (url !== null && (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== ''))
    problems.push({ path: 'list_unsubscribe.base_url', message: 'no query, fragment or credentials' });
  if (settings.mailto !== null && !isAddrSpec(settings.mailto))
    problems.push({
      path: 'list_unsubscribe.mailto',
      message: 'expected an addr-spec such as unsubscribe@example.com',
    });
  return problems;
}
