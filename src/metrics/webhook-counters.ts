/**
 * Provider webhook counters: requests by provider and result (`ok`
 * or the refusal's stable code: a bad signature, a replay, a malformed body),
 * events by outcome. Labels come from our own sets (the providers, the
 * adapters' codes), never from a request, so a scanner cannot grow the series.
 */
import { Counter, type Registry } from 'prom-client';
import { PROVIDERS } from '../core/provider/index.js';
import type { WebhookTelemetry } from '../core/index.js';

const OUTCOMES = ['applied', 'duplicates', 'unmatched'] as const;

export function registerWebhookCounters(registers: Registry[]): WebhookTelemetry {
  const requests = new Counter({
    name: 'mailproxy_webhook_requests_total',
    help: "Provider webhook requests answered, by provider and result (ok, or the refusal's code: webhook_signature_invalid, webhook_replayed, webhook_body_malformed, ...)",
    labelNames: ['provider', 'result'],
    registers,
  });
  const events = new Counter({
    name: 'mailproxy_webhook_events_total',
    help: "Provider events read from verified webhooks, by provider and outcome (applied; duplicates: delivered again; unmatched: about no message of the tenant's)",
    labelNames: ['provider', 'outcome'],
    registers,
  });
  // Zero from the start, so that rate() and increase() see the first event.
  for (const provider of PROVIDERS) for (const outcome of OUTCOMES) events.inc({ provider, outcome }, 0);
  return {
    request: (provider, result) => requests.inc({ provider, result }),
    events: (provider, outcome, count) => events.inc({ provider, outcome }, count),
  };
}
