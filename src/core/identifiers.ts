/**
 * Identifier rules shared by every edge. Tenant and account ids become NATS
 * subject tokens and file-safe names, so they are restricted to a safe alphabet.
 */

export const IDENTIFIER_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
