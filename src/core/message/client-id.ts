/**
 * The client id: the id a client gives a message (its idempotency key per tenant),
 * carried on every message we relay in one header, so that bounces, receipts and
 * the client's own logs can name the message. One rule for every edge that takes it.
 */

/** The header that carries the client id (ARCHITECTURE.md §4.4). */
export const MAIL_ID_HEADER = 'X-Genro-Mail-ID';
/** The same name lower-cased, as parsed header maps key it. */
export const MAIL_ID_FIELD = MAIL_ID_HEADER.toLowerCase();

/** A header value must fit on its line: printable ASCII without spaces. */
export const CLIENT_ID_CHARACTERS = /^[\x21-\x7e]+$/;
export const CLIENT_ID_MAX_LENGTH = 255;
/** The rule in words, as both edges answer a bad id. */
export const CLIENT_ID_RULE = 'printable ASCII without spaces, 1-255 characters';

export function isClientId(text: string): boolean {
  return text.length >= 1 && text.length <= CLIENT_ID_MAX_LENGTH && CLIENT_ID_CHARACTERS.test(text);
}
