/** The face of src/core: what the rest of the product uses of it. */
export { isAddrSpec, normalizeAddress, parseMailbox } from './address.js';
export type { Mailbox } from './address.js';
export { redactDiagnostics, redactedText } from './address-redaction.js';
export { addressDigest, addressDigests } from './blind-index.js';
export type { BlindIndex, BlindKind } from './blind-index.js';
export { AppError, errorText, isAppError, notFound } from './app-error.js';
export type { AppErrorOptions, ErrorCode, ErrorDetails } from './app-error.js';
export { ageSeconds, epochSeconds } from './clock.js';
export type { Clock, IdSource } from './clock.js';
export { escapeHtml } from './html-text.js';
export { IDENTIFIER_PATTERN } from './identifiers.js';
export type { Logger } from './logger.js';
export type {
  AccountRepository,
  AdminStore,
  AdminTokenVerifier,
  ApiKeyIssuer,
  ChangeLog,
  SecretBox,
  TenantRepository,
  Transactor,
} from './ports.js';
export { deliveryFanOut } from './telemetry.js';
export type {
  AuthFailure,
  DeliveryTelemetry,
  HttpTelemetry,
  IntakeTelemetry,
  ReportTelemetry,
  SmtpListener,
  SmtpTelemetry,
  WebhookTelemetry,
} from './telemetry.js';
