/**
 * What a one-click unsubscribe link (list-unsubscribe.ts) does when it is
 * followed. A GET only shows what a POST would do: link scanners and previews
 * fetch links, and must never unsubscribe anyone. A POST (the mailbox
 * provider's one-click, or the confirmation page's button) puts the recipient
 * on the tenant's suppression list, shared with the fleet like an operator's
 * entry, and then records `unsubscribed` on the message wherever it lives, once
 * however often the link is followed, which reports it to the client.
 */
import { redactAddresses } from '../address-redaction.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { ONE_CLICK, type ProviderEvent, type WebhookReceiver } from '../provider/events.js';
import type { UnsubscribeClaim, UnsubscribeLinks } from './list-unsubscribe.js';
import type { SuppressionService } from './suppression-service.js';
import type { Tenant } from './tenant.js';

export interface UnsubscribeServiceDeps {
  links: UnsubscribeLinks;
  tenants: { get(id: string): Tenant | null };
  suppressions: Pick<SuppressionService, 'add'>;
  /** Records the message's event where the message is (the provider events' settlement). */
  events: Pick<WebhookReceiver, 'settle'>;
  clock: Clock;
  log: Logger;
}

/** What the confirmation page names: the sender, and the recipient with their local part hidden. */
export interface UnsubscribePreview {
  sender: string;
  recipient: string;
  list: string | null;
}

/** A link that does not open, or whose tenant is gone, is the same to whoever holds it: no such link. */
export type UnsubscribeAnswer<T> = { ok: true; value: T } | { ok: false };

export interface UnsubscribeService {
  preview(token: string): UnsubscribeAnswer<UnsubscribePreview>;
  /** Answered once the suppression is durable (and shared with the fleet). */
  unsubscribe(token: string, correlationId: string | null): Promise<UnsubscribeAnswer<UnsubscribePreview>>;
}

const previewOf = (claim: UnsubscribeClaim, tenant: Tenant): UnsubscribePreview => ({
  sender: tenant.name ?? tenant.id,
  recipient: redactAddresses(claim.recipient),
  list: claim.list,
});

/**
 * The message's event: one per message (it had one recipient), so the link followed twice, or
 * POSTed by the provider and then clicked, is recorded once.
 */
const eventOf = (claim: UnsubscribeClaim, at: number): ProviderEvent => ({
  provider: ONE_CLICK,
  eventId: `unsubscribe:${claim.messageId}`,
  kind: 'unsubscribed',
  bounceType: null,
  recipient: claim.recipient,
  providerMessageId: null,
  mailId: claim.messageId,
  messageIdHeader: null,
  at,
  status: null,
  reason: null,
  feedbackType: null,
  list: claim.list,
});

export function createUnsubscribeService(deps: UnsubscribeServiceDeps): UnsubscribeService {
  const open = (token: string): { claim: UnsubscribeClaim; tenant: Tenant } | null => {
    const claim = deps.links.open(token);
    const tenant = claim === null ? null : deps.tenants.get(claim.tenantId);
    return claim === null || tenant === null ? null : { claim, tenant };
  };
  return {
    preview(token) {
      const opened = open(token);
      return opened === null ? { ok: false } : { ok: true, value: previewOf(opened.claim, opened.tenant) };
    },
    async unsubscribe(token, correlationId) {
      const opened = open(token);
      if (opened === null) return { ok: false };
      const { claim, tenant } = opened;
      // The recipient's wish first, durably and fleet-wide: what follows only tells the client.
      await deps.suppressions.add(
        { principal: { kind: 'tenant', tenantId: tenant.id }, correlationId, via: 'unsubscribe' },
        tenant.id,
        {
          address: claim.recipient,
          reason: claim.list === null ? 'unsubscribed' : `unsubscribed from ${claim.list}`,
          source: 'unsubscribe',
        },
      );
      const outcomes = await deps.events.settle(tenant.id, [eventOf(claim, deps.clock.now())]);
      // The message gone (retention, erasure) or on a node that cannot be asked: the suppression stands all the same.
      if (outcomes === null)
        deps.log.warn(
          { tenantId: tenant.id, messageId: claim.messageId },
          'unsubscribed, but a fleet node that may hold the message could not be asked: no report item for it',
        );
      return { ok: true, value: previewOf(claim, tenant) };
    },
  };
}
