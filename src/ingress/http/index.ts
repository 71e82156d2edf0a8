export { createHttpApp, type HttpAppDeps } from './app.js';
// The route tables the MCP tools are made of (ingress/mcp): each tool is one route.
export { ACCOUNT_ROUTES } from './routes/accounts.js';
export { BOUNCE_ROUTES } from './routes/bounces.js';
export { MESSAGE_READ_ROUTES } from './routes/message-reads.js';
export { MESSAGE_ROUTES } from './routes/messages.js';
export { STATUS_ROUTES } from './routes/status.js';
export type { ReadinessCheck } from './routes/health.js';
export { clientAddress, tokenOfHeaders } from './auth.js';
export { daemonHealth } from './daemon-health.js';
export type { HealthSources } from './daemon-health.js';
export { statusOf } from './errors.js';
export { transportError } from './http-error.js';
export type { HttpError } from './http-error.js';
export { createHttpService } from './http-service.js';
export { createSubmissionParsing } from './parser-threads.js';
export type { SubmissionParsing } from './parser-threads.js';
export { bodyLimit, requestBody } from './request-body.js';
export { validate } from './request-input.js';
export type { FleetDrainControl } from './routes/fleet-drain.js';
export { decodeCursor, encodeCursor } from './routes/message-cursor.js';
export { receiptResponse } from './routes/pec.js';
export { parseSubmission } from './submission-parser.js';
export type { ParserLimits } from './submission-parser.js';
export type { accountAnswer, accountDeleted, accountList, accountUpserted } from './view-schemas/account.js';
export type { messageDetail } from './view-schemas/message-detail.js';
export type {
  activateResult,
  bulkResult,
  eraseResult,
  messagePage,
  retryNowResult,
  suspendResult,
} from './view-schemas/message.js';
export type { statusAnswer } from './view-schemas/operations.js';
export type { suppressionAdded, suppressionPage } from './view-schemas/suppression.js';
export type { issuedKey, tenantAnswer, tenantCreated, tenantList } from './view-schemas/tenant.js';
export { viewAccountState } from './views/account-view.js';
export type { AccountActivityView } from './views/account-view.js';
export { viewConnectionTest } from './views/connection-test-view.js';
export type { ConnectionTestView } from './views/connection-test-view.js';
export { messageStatusOf } from './views/message-detail-view.js';
export { queueOverview } from './views/queue-overview.js';
export type { QueueOverview } from './views/queue-overview.js';
export { viewReportAttempt } from './views/report-log-view.js';
