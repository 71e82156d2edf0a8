/**
 * Provider webhooks, whole: the tenant's accounts say which
 * providers they relay through and how each verifies; the provider's adapter
 * verifies the request and reads its events; each event is tied to one of the
 * tenant's messages, planned (core/provider-plan.ts) and applied with the
 * others of its request in one durable transaction, each at most once. A
 * request refused or malformed changes nothing. Every outcome is counted
 * (telemetry: /metrics).
 */
import type { BouncePolicy } from '../../core/bounce-plan.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import {
  countOutcomes,
  isProvider,
  type EventOutcome,
  type ProviderEvent,
  type ProviderName,
  type ProviderSettlement,
  type WebhookOutcome,
  type WebhookProblem,
  type WebhookReceiver,
  type WebhookRequest,
  type WebhookSettings,
} from '../../core/provider-events.js';
import type { ProviderLedger } from '../../core/provider-ledger.js';
import { correlateProviderEvent, planProviderEvent } from '../../core/provider-plan.js';
import type { WebhookTelemetry } from '../../core/telemetry.js';
import type { ProviderAdapter } from './adapter.js';

export interface WebhookServiceDeps {
  adapters: readonly ProviderAdapter[];
  /** The webhook settings of the tenant's accounts that relay through this provider. */
  settingsOf(tenantId: string, provider: ProviderName): WebhookSettings[];
  ledger: ProviderLedger;
  policy: BouncePolicy;
  /** Visits a verified SNS subscription's SubscribeURL (the adapter checked its host). */
  confirmSubscription(url: string): Promise<void>;
  telemetry?: WebhookTelemetry;
  /**
   * Fleet mode: the other nodes, asked to apply the events no message here matched (a message lives
   * on the node that took it). One outcome per event; throws when a node that may hold some cannot
   * be asked. Absent on a single node.
   */
  elsewhere?: (tenantId: string, events: readonly ProviderEvent[]) => Promise<EventOutcome[]>;
  clock: Clock;
  log: Logger;
}

export type WebhookService = WebhookReceiver;

const refused = (status: WebhookProblem['status'], code: string, message: string): WebhookOutcome => ({ ok: false, problem: { status, code, message } });

export function createWebhookService(deps: WebhookServiceDeps): WebhookService {
  const adapters = new Map(deps.adapters.map((adapter) => [adapter.provider, adapter]));

  const receive = async (provider: string, tenantId: string, request: WebhookRequest): Promise<WebhookOutcome> => {
    const adapter = isProvider(provider) ? adapters.get(provider) : undefined;
    // An unknown provider is a wrong URL, not a refused signature: it names no configuration.
    if (adapter === undefined || !isProvider(provider)) return refused(404, 'webhook_provider_unknown', `no webhook for provider ${provider}`);
    const settings = deps.settingsOf(tenantId, provider);
    // The same answer for a tenant that does not exist and one without such an account: a stranger learns nothing.
    if (settings.length === 0) return refused(401, 'webhook_not_configured', `no account of this tenant relays through ${provider}`);
    const now = deps.clock.now();
    const reading = await adapter.receive(request, settings, now);
    if (!reading.ok) return reading;
    if (reading.confirm !== undefined) {
      try {
        await deps.confirmSubscription(reading.confirm);
      } catch (error) {
        // Ours to retry, not the sender's fault: a 5xx has SNS send the confirmation again.
        deps.log.warn({ err: error, tenantId, provider }, 'could not visit the subscription URL to confirm it');
        return refused(503, 'webhook_confirmation_failed', 'the subscription URL could not be visited; try again');
      }
      deps.log.info({ tenantId, provider }, 'provider webhook subscription confirmed');
      return { ok: true, settlement: { applied: 0, duplicates: 0, unmatched: 0 }, confirmed: true };
    }
    const outcomes = await apply(tenantId, reading.events);
    if (outcomes === null) {
      return refused(503, 'webhook_fleet_incomplete', 'a fleet node that may hold these messages cannot be reached');
    }
    const settlement = countOutcomes(outcomes);
    if (settlement.unmatched > 0) deps.log.info({ tenantId, provider, unmatched: settlement.unmatched }, 'provider events about no message of the tenant');
    return { ok: true, settlement, confirmed: false };
  };

  /** Verified events applied to the messages held here: correlated, planned, settled once each. */
  const applyHere = async (tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[]> => {
    if (events.length === 0) return [];
    const now = deps.clock.now();
    const items = events.map((event) => {
      const correlation = correlateProviderEvent(event, (by, value) => deps.ledger.candidates(by, value, tenantId));
      return { event, plan: correlation.matched ? planProviderEvent(event, correlation.candidate, correlation.by, deps.policy, now) : null };
    });
    return deps.ledger.settle(tenantId, items, now);
  };

  /**
   * Here first; in a fleet, the events no message here matched go to the other nodes. Null when a
   * node that may hold some of them cannot be asked: the provider is answered 503 and delivers the
   * request again (what was applied meanwhile is applied once).
   */
  const apply = async (tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[] | null> => {
    const outcomes = await applyHere(tenantId, events);
    const missing = outcomes.flatMap((outcome, index) => (outcome === 'unmatched' ? [index] : []));
    if (deps.elsewhere === undefined || missing.length === 0) return outcomes;
    try {
      const there = await deps.elsewhere(
        tenantId,
        missing.map((index) => events[index] as ProviderEvent),
      );
      missing.forEach((index, position) => (outcomes[index] = there[position] ?? 'unmatched'));
      return outcomes;
    } catch (error) {
      deps.log.warn({ err: error, tenantId, events: missing.length }, 'provider events for other fleet nodes could not be delivered to all of them');
      return null;
    }
  };

  return {
    async receive(provider, tenantId, request) {
      // A store refusing writes throws through (the HTTP edge answers 503, and the provider retries).
      const outcome = await receive(provider, tenantId, request);
      const label = isProvider(provider) ? provider : 'unknown';
      deps.telemetry?.request(label, outcome.ok ? 'ok' : outcome.problem.code);
      if (outcome.ok) for (const [name, count] of Object.entries(outcome.settlement)) deps.telemetry?.events(label, name as keyof ProviderSettlement, count);
      return outcome;
    },
    apply: applyHere,
  };
}
