/** The face of src/core/delivery: what the rest of the product uses of it. */
export { isLimited, limitsOf, needsDueWake, planClaim } from './claim-plan.js';
export { decideDelivery } from './delivery-outcome.js';
export { isPushback } from './pushback.js';
export type { RelaySignal, RelaySignals } from './relay-signals.js';
export { destinationBudget } from './destination-budget.js';
export type { DestinationBudget } from './destination-budget.js';
export { relayFor } from './failover.js';
export type { AccountFailover, AccountFailovers, RelayConditions } from './failover.js';
export {
  accepted,
  claimAhead,
  DEFAULT_PACE_POLICY,
  freshPace,
  heardPushback,
  launched,
  mayLaunch,
  pushedBack,
  shownPace,
} from './relay-pace.js';
export type { AccountPace, AccountPaces, PacePolicy, RelayPace } from './relay-pace.js';
export type { DeliveryDecision } from './delivery-outcome.js';
export type {
  BuildRequest,
  BuiltMessage,
  Envelope,
  JobEnvelope,
  Handoff,
  HandoffJob,
  HandoffResult,
  MessageBuilder,
  RecipientRefusal,
  Relay,
  RelayConnections,
  RelayReply,
  RelayStage,
} from './relay.js';
export { exponentialBackoff, nextRetry } from './retry-policy.js';
export type { RetryPolicy } from './retry-policy.js';
