/**
 * A provider's webhook adapter: verifies a request by the provider's
 * own signature scheme, then reads its body into provider events (core terms).
 * Nothing is applied when it answers a problem: 401 for anything unsigned,
 * badly signed, stale or from a certificate host not allowed; 400 for a body
 * that is not what the provider sends; 503 when our side cannot verify now.
 */
import type {
  ProviderEvent,
  ProviderName,
  WebhookProblem,
  WebhookRequest,
  WebhookSettings,
} from '../../core/provider/index.js';

export type { WebhookRequest };

export type WebhookReading =
  /** `confirm`: an SNS subscription confirmation's SubscribeURL, visited once the request is verified. */
  { ok: true; events: ProviderEvent[]; confirm?: string } | { ok: false; problem: WebhookProblem };

export interface ProviderAdapter {
  provider: ProviderName;
  /**
   * `settings`: those of the tenant's accounts that relay through this provider (any one of them
   * verifying the request is enough). `now` in ms, for replay windows.
   */
  receive(request: WebhookRequest, settings: ReadonlyArray<WebhookSettings>, now: number): Promise<WebhookReading>;
}

export type WebhookRefusal = Extract<WebhookReading, { ok: false }>;

export const unauthorized = (code: string, message: string): WebhookRefusal => ({
  ok: false,
  problem: { status: 401, code, message },
});
export const malformed = (message: string): WebhookRefusal => ({
  ok: false,
  problem: { status: 400, code: 'webhook_body_malformed', message },
});
/** Our side failed (a signing certificate that cannot be fetched now): a 5xx, which the provider retries, where a 4xx would lose the event. */
export const unavailable = (code: string, message: string): WebhookRefusal => ({
  ok: false,
  problem: { status: 503, code, message },
});
