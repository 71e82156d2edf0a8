/** The face of src/core/provider: what the rest of the product uses of it. */
export { PROVIDERS, PROVIDER_STATE_RANKS, countOutcomes, isProvider, metadataHeader } from './events.js';
export type {
  EventOutcome,
  ProviderEvent,
  ProviderName,
  ProviderSettlement,
  WebhookOutcome,
  WebhookProblem,
  WebhookReceiver,
  WebhookRequest,
  WebhookSettings,
} from './events.js';
export type { ProviderLedger } from './ledger.js';
export { correlateProviderEvent, planProviderEvent } from './plan.js';
export type { ProviderPlan } from './plan.js';
export { providerIdOfReply } from './reply.js';
