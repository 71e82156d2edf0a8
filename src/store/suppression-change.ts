/**
 * The admin event a suppression learnt from the provider's side (bounce mailbox, webhook) is
 * mirrored as. It names the entry by its address's digest (suppression-repository.ts), never by
 * the address: the audit row and the outbox keep no address in clear.
 */
import type { SuppressionRecord } from '../core/bounce/index.js';
import type { ChangeRecord } from '../core/events/index.js';

interface SuppressionOrigin {
  eventId: string;
  tenantId: string;
  /** Who added it: `bounce:<mailbox>`, `webhook:<provider>`. */
  actor: string;
  /** The client id of the message that taught it. */
  messageId: string;
}

export function suppressionAdded(
  suppression: SuppressionRecord,
  digest: string,
  source: SuppressionOrigin,
): ChangeRecord {
  return {
    eventId: source.eventId,
    occurredAt: suppression.createdAt,
    actor: source.actor,
    command: 'suppression.add',
    tenantId: source.tenantId,
    aggregateType: 'suppression',
    aggregateId: `${source.tenantId}/${digest}`,
    eventType: 'suppression.added',
    eventVersion: 1,
    data: {
      address_digest: digest,
      reason: suppression.reason,
      source: suppression.source,
      expires_at: suppression.expiresAt,
      message_id: source.messageId,
    },
    correlationId: null,
  };
}
