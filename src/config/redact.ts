/**
 * The effective configuration for display, secrets replaced. A key is secret by
 * its name (passwords, tokens, keys, secrets), so a secret added to the schema
 * later is redacted without anyone remembering to list it here; credentials
 * written into a URL (`nats://user:pass@host`) are redacted too.
 */
import type { Config } from './schema.js';

export const REDACTED = '[redacted]';

const SECRET_NAME = /(password|token|secret|secret_keys?|api_key|secret_access_key)$/i;
/** `scheme://userinfo@`: whatever sits between `//` and `@` is a credential. */
const URL_CREDENTIALS = /(\/\/)[^/@\s]+@/g;

export function redactConfig(config: Readonly<Config>): Record<string, unknown> {
  return redactValue(config, '') as Record<string, unknown>;
}

function redactValue(value: unknown, name: string): unknown {
  if (Array.isArray(value)) return value.map((item) => redactValue(item, name));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactValue(inner, key)]));
  }
  if (typeof value !== 'string') return value;
  // An empty secret stays empty: "not set" is worth seeing, and reveals nothing.
  if (SECRET_NAME.test(name)) return value === '' ? '' : REDACTED;
  return value.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
}
