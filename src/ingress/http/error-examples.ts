/**
 * One example error envelope per stable code, as the daemon answers it (the
 * messages and details are the ones the code raising it writes). A Record over
 * every code, so a new code cannot reach the OpenAPI document without one.
 */
import type { HttpErrorCode } from './http-error.js';

export interface ErrorExample {
  /** When a client meets it, for the example's summary. */
  summary: string;
  message: string;
  details: unknown;
}

export const ERROR_EXAMPLES: Readonly<Record<HttpErrorCode, ErrorExample>> = {
  VALIDATION_FAILED: {
    summary: 'a field is missing or out of bounds: one {path, message} per problem',
    message: 'invalid request body',
    details: [
      { path: 'id', message: 'must match ^[A-Za-z0-9_-]{1,64}$' },
      { path: 'api_key_expires_in_seconds', message: 'Too big: expected number to be <=315360000' },
    ],
  },
  INVALID_JSON: {
    summary: 'the body is not JSON',
    message: 'the body is not valid JSON',
    details: { reason: "Expected property name or '}' in JSON at position 1" },
  },
  UNAUTHORIZED: {
    summary: 'no token, an unknown one or an expired key (answered with WWW-Authenticate)',
    message: 'invalid credentials',
    details: null,
  },
  WEBHOOK_UNVERIFIED: {
    summary:
      "a provider's webhook that did not verify: `details.reason` is webhook_signature_missing, webhook_signature_invalid, webhook_replayed, webhook_topic_refused, webhook_certificate_refused or webhook_not_configured",
    message: 'the signature does not verify with the signing key',
    details: { reason: 'webhook_signature_invalid' },
  },
  FORBIDDEN: {
    summary: 'a tenant key on an admin route',
    message: 'this operation requires the admin token',
    details: null,
  },
  NOT_FOUND: {
    summary:
      'it does not exist, or belongs to another tenant (the same answer, so a key cannot learn what others have)',
    message: 'tenant not found',
    details: { tenant: 'acme' },
  },
  METHOD_NOT_ALLOWED: {
    summary: 'the path exists, not with this method',
    message: 'method not allowed',
    details: null,
  },
  CONFLICT: {
    summary: 'the current state forbids it (undelivered mail without force, a backup already running)',
    message: 'account has messages not yet delivered; pass force=true to delete them too',
    details: { account_id: 'main', pending_messages: 3 },
  },
  GONE: {
    summary: "an offloaded attachment's link that expired, or whose message was erased: the file is gone",
    message: 'this file is no longer available',
    details: null,
  },
  RANGE_NOT_SATISFIABLE: {
    summary: "a download's Range that starts past the file's end",
    message: 'range not satisfiable',
    details: { size_bytes: 5242880 },
  },
  PAYLOAD_TOO_LARGE: {
    summary:
      'the body, declared or chunked, is over http.max_body_bytes (64 MiB; on /webhooks, webhooks.max_body_bytes: 1 MiB)',
    message: 'request body too large',
    details: { max_bytes: 67108864 },
  },
  UNSUPPORTED_MEDIA_TYPE: {
    summary: 'a body sent as something other than application/json',
    message: 'send the body as application/json',
    details: { content_type: 'text/plain' },
  },
  AUTH_THROTTLED: {
    summary: 'too many failed authentications from this client address: wait Retry-After seconds',
    message: 'too many failed authentication attempts',
    details: { retry_after_seconds: 30 },
  },
  CONFIG_INVALID: { summary: 'the configuration does not allow it', message: 'invalid configuration', details: null },
  INTERNAL: {
    summary: 'a bug: logged with its stack; the request was not applied',
    message: 'internal error; the request was not applied',
    details: null,
  },
  STORE_UNAVAILABLE: {
    summary: 'the database cannot write now (full, locked, I/O error): nothing was changed; retry after Retry-After',
    message: 'the store cannot write right now; nothing was changed',
    details: { reason: 'SQLITE_FULL' },
  },
  UNAVAILABLE: {
    summary: 'a worker thread is being replaced: retry after Retry-After',
    message: 'submission-parser worker is restarting',
    details: null,
  },
  NODE_DRAINING: {
    summary: 'this fleet node is draining (POST /fleet/drain): submit to another node of the fleet',
    message: 'this node is draining: submit to another node of the fleet',
    details: { node_id: 'n2', phase: 'draining' },
  },
  ATTACHMENT_UNAVAILABLE: {
    summary: 'an attachment could not be fetched from where its storage_path points',
    message: 'attachment invoice.pdf unavailable: server answered 404',
    details: { filename: 'invoice.pdf', status: 404 },
  },
  CONFIG_CONFLICT: {
    summary:
      'fleet mode: another node changed the same tenant, account, suppression or suspension first; read it again and retry',
    message: 'the object was changed on another node meanwhile: read it again and retry',
    details: { key: 'account.acme.main' },
  },
  FLEET_UNAVAILABLE: {
    summary:
      'fleet mode: the cluster cannot be reached, so a configuration change cannot be shared (answered with Retry-After; mail still flows)',
    message: 'the fleet cluster cannot be reached: configuration changes are refused until it can (mail still flows)',
    details: { retry_after_seconds: 5 },
  },
};
