/** The face of src/core/account: what the rest of the product uses of it. */
export { SHARED_ACCOUNT_WRITES, createAccountService } from './account-service.js';
export type { AccountActivity, AccountInput, AccountService, AccountState } from './account-service.js';
export { DEFAULT_FAILOVER_AFTER_SECONDS, MAX_FALLBACK_ACCOUNTS, pecMailbox } from './account.js';
export type { Account, AccountChoice, AccountMailbox, LimitBehavior, PecMailboxAccount, TlsMode } from './account.js';
export { MAX_WARM_UP_DAYS, warmingUp } from './warm-up.js';
export { MAX_ROUTING_RULES } from './routing.js';
export {
  destinationWindows,
  MAX_DESTINATION_DOMAINS,
  MAX_DESTINATION_LIMITS,
  recipientDomains,
} from './destination-limit.js';
export type { DestinationLimit } from './destination-limit.js';
export type { RoutingRule } from './routing.js';
export type { WarmUp, WarmUpStatus } from './warm-up.js';
export { createAttemptLog } from './attempt-log.js';
export type { AttemptLog } from './attempt-log.js';
export { connectionTestResult } from './connection-test.js';
export type { ConnectionTestResult, TlsReport, TranscriptLine } from './connection-test.js';
export { pickAccount } from './default-account.js';
export type { AccountWarning } from './default-account.js';
export { availableBudget, RATE_LIMIT_EXCEEDED, WINDOW_KINDS, windowStart } from './rate-limit.js';
export type { Limits, Usage, WindowKind } from './rate-limit.js';
