/**
 * Provider webhooks, whole: the tenant's accounts say which
 * providers they relay through and how each verifies; the provider's adapter
 * verifies the request and reads its events; each event is tied to one of the
 * tenant's messages, planned (core/provider/plan.ts) and applied with the
 * others of its request in one durable transaction, each at most once. A
 * request refused or malformed changes nothing. Every outcome is counted
 * (telemetry: /metrics).
 */
import {
  countOutcomes,
  isProvider,
  type ProviderName,
  type ProviderSettlement,
  type WebhookOutcome,
  type WebhookProblem,
  type WebhookReceiver,
  type WebhookRequest,
  type WebhookSettings,
} from '../../core/provider/index.js';
import type { WebhookTelemetry } from '../../core/index.js';
import type { ProviderAdapter } from './adapter.js';
import { createEventSettlement, type EventSettlementDeps } from './event-settlement.js';

export interface WebhookServiceDeps extends EventSettlementDeps {
  adapters: readonly ProviderAdapter[];
  /** The webhook settings of the tenant's accounts that relay through this provider. */
  settingsOf(tenantId: string, provider: ProviderName): WebhookSettings[];
  /** Visits a verified SNS subscription's SubscribeURL (the adapter checked its host). */
  confirmSubscription(url: string): Promise<void>;
  telemetry?: WebhookTelemetry;
}

export type WebhookService = WebhookReceiver;

const refused = (status: WebhookProblem['status'], code: string, message: string): WebhookOutcome => ({
  ok: false,
  problem: { status, code, message },
});

export function createWebhookService(deps: WebhookServiceDeps): WebhookService {
  const adapters = new Map(deps.adapters.map((adapter) => [adapter.provider, adapter]));
  const settlement = createEventSettlement(deps);

  const receive = async (provider: string, tenantId: string, request: WebhookRequest): Promise<WebhookOutcome> => {
    const adapter = isProvider(provider) ? adapters.get(provider) : undefined;
    // An unknown provider is a wrong URL, not a refused signature: it names no configuration.
    if (adapter === undefined || !isProvider(provider))
      return refused(404, 'webhook_provider_unknown', `no webhook for provider ${provider}`);
    const settings = deps.settingsOf(tenantId, provider);
    // The same answer for a tenant that does not exist and one without such an account: a stranger learns nothing.
    if (settings.length === 0)
      return refused(401, 'webhook_not_configured', `no account of this tenant relays through ${provider}`);
    const now = deps.clock.now();
    const reading = await adapter.receive(request, settings, now);
    if (!reading.ok) return reading;
    if (reading.confirm !== undefined) return confirm(deps, tenantId, provider, reading.confirm);
    const outcomes = await settlement.everywhere(tenantId, reading.events);
    if (outcomes === null) {
      return refused(503, 'webhook_fleet_incomplete', 'a fleet node that may hold these messages cannot be reached');
    }
    const settled = countOutcomes(outcomes);
    if (settled.unmatched > 0)
      deps.log.info(
        { tenantId, provider, unmatched: settled.unmatched },
        'provider events about no message of the tenant',
      );
    return { ok: true, settlement: settled, confirmed: false };
  };

  return {
    async receive(provider, tenantId, request) {
      // A store refusing writes throws through (the HTTP edge answers 503, and the provider retries).
      const outcome = await receive(provider, tenantId, request);
      countOutcome(deps.telemetry, isProvider(provider) ? provider : 'unknown', outcome);
      return outcome;
    },
    apply: settlement.here,
    settle: settlement.everywhere,
  };
}

/** A verified SNS subscription confirmed by visiting its URL; no event is applied. */
async function confirm(
  deps: WebhookServiceDeps,
  tenantId: string,
  provider: ProviderName,
  url: string,
): Promise<WebhookOutcome> {
  try {
    await deps.confirmSubscription(url);
  } catch (error) {
    // Ours to retry, not the sender's fault: a 5xx has SNS send the confirmation again.
    deps.log.warn({ err: error, tenantId, provider }, 'could not visit the subscription URL to confirm it');
    return refused(503, 'webhook_confirmation_failed', 'the subscription URL could not be visited; try again');
  }
  deps.log.info({ tenantId, provider }, 'provider webhook subscription confirmed');
  return { ok: true, settlement: { applied: 0, duplicates: 0, unmatched: 0 }, confirmed: true };
}

/** Every outcome counted: the request's answer, and each of its events by how it settled. */
function countOutcome(telemetry: WebhookTelemetry | undefined, label: string, outcome: WebhookOutcome): void {
  telemetry?.request(label, outcome.ok ? 'ok' : outcome.problem.code);
  if (outcome.ok)
    for (const [name, count] of Object.entries(outcome.settlement))
      telemetry?.events(label, name as keyof ProviderSettlement, count);
}
