/**
 * The latest state of a message, as kept in the JetStream KV bucket (seed 000:
 * two state machines, and a latest view that never moves backwards).
 *
 *   - handoff_state (our pipeline: queued, sending, deferred, sent, error) follows
 *     the order of our own events, the outbox `seq`: a retry legitimately goes
 *     from deferred back to sending, so a rank cannot order it, but `seq` can.
 *   - provider_state (the world after the relay: accepted, soft_bounced, delivered, bounced, dropped,
 *     complained) follows ranks: an event of lower rank than what is stored is not applied. A soft
 *     bounce is no verdict (a deferral: the message may still be delivered), so it ranks below the
 *     verdicts, as in the messages' provider_state column (core/provider/events.ts).
 *
 * `merge` is pure, idempotent and order-independent: applying the same events
 * in any order gives the same value, which is what lets writers race through CAS.
 */
import { PROVIDER_STATE_RANKS } from '../provider/events.js';

export const HANDOFF_STATES: Readonly<Record<string, string>> = {
  'message.queued': 'queued',
  'message.updated': 'queued',
  'message.resent': 'queued',
  'message.retry_now': 'queued',
  'message.released': 'queued',
  'message.lease_expired': 'queued',
  'message.sending': 'sending',
  'message.deferred': 'deferred',
  'message.sent': 'sent',
  'message.error': 'error',
  'message.expired': 'error',
};

/** Seed 000's provider ranks. */
export const PROVIDER_RANKS: Readonly<Record<string, number>> = {
  unknown: 0,
  accepted: 10,
  // The messages' provider_state column's rank for it (core/provider/events.ts): the two views agree.
  soft_bounced: PROVIDER_STATE_RANKS.soft_bounced,
  delivered: 100,
  bounced: 100,
  dropped: 100,
  complained: 100,
  timed_out: 90,
};
/** The relay's 250 is the provider accepting; its webhooks say the rest. */
const PROVIDER_EVENTS: Readonly<Record<string, string>> = {
  'message.sent': 'accepted',
  'message.provider_accepted': 'accepted',
  'message.delivered': 'delivered',
  'message.bounced': 'bounced',
  'message.dropped': 'dropped',
  'message.complained': 'complained',
};
/** Ranks of the handoff states, shown for readers; order within them is by `seq`. */
export const HANDOFF_RANKS: Readonly<Record<string, number>> = {
  created: 0,
  queued: 10,
  sending: 20,
  deferred: 30,
  sent: 100,
  error: 100,
};

export interface LatestState {
  tenant_id: string;
  message_id: string | null;
  message_pk: number;
  handoff_state: string;
  provider_state: string;
  /** The handoff state's rank. */
  rank: number;
  provider_rank: number;
  /** The outbox `seq` of the newest event applied: the value's version. */
  version: number;
  /** ISO time of that event. */
  at: string;
  handoff_version: number;
  provider_version: number;
  reported_at: string | null;
}

export interface LatestEvent {
  seq: number;
  eventType: string;
  tenantId: string;
  messageId: string | null;
  messagePk: number;
  occurredAt: number;
  /** A `message.bounced` event's `bounce_type` (hard, soft); absent for other events. */
  bounceType?: string | null | undefined;
}

/** Whether the event says anything about the latest state. */
export const affectsLatest = (eventType: string): boolean =>
  eventType in HANDOFF_STATES || eventType in PROVIDER_EVENTS || eventType === 'message.reported';

/**
 * The key of a message in the bucket: `<tenant_id>.<message_pk>`, and in fleet mode
 * `<tenant_id>.<node_id>.<message_pk>`: a pk is one node's SQLite row number, so two
 * nodes' messages would share a key (and overwrite each other's state) without the node.
 */
export const latestKey = (event: Pick<LatestEvent, 'tenantId' | 'messagePk'>, nodeId: string | null = null): string =>
  nodeId === null ? `${event.tenantId}.${event.messagePk}` : `${event.tenantId}.${nodeId}.${event.messagePk}`;

export function merge(current: LatestState | null, event: LatestEvent): LatestState {
  const base: LatestState = current ?? {
    tenant_id: event.tenantId,
    message_id: event.messageId,
    message_pk: event.messagePk,
    handoff_state: 'created',
    provider_state: 'unknown',
    rank: 0,
    provider_rank: 0,
    version: 0,
    at: new Date(event.occurredAt).toISOString(),
    handoff_version: 0,
    provider_version: 0,
    reported_at: null,
  };
  const next = { ...base };
  const handoff = HANDOFF_STATES[event.eventType];
  if (handoff !== undefined && event.seq > next.handoff_version) {
    next.handoff_state = handoff;
    next.rank = HANDOFF_RANKS[handoff] ?? 0;
    next.handoff_version = event.seq;
  }
  const provider =
    event.eventType === 'message.bounced' && event.bounceType === 'soft'
      ? 'soft_bounced'
      : PROVIDER_EVENTS[event.eventType];
  const providerRank = provider === undefined ? -1 : (PROVIDER_RANKS[provider] ?? 0);
  // Equal ranks: the later event wins, so that the result does not depend on the order applied.
  if (
    provider !== undefined &&
    (providerRank > next.provider_rank || (providerRank === next.provider_rank && event.seq > next.provider_version))
  ) {
    next.provider_state = provider;
    next.provider_rank = providerRank;
    next.provider_version = event.seq;
  }
  if (event.eventType === 'message.reported') {
    const at = new Date(event.occurredAt).toISOString();
    if (next.reported_at === null || at > next.reported_at) next.reported_at = at;
  }
  if (event.seq > next.version) {
    next.version = event.seq;
    next.at = new Date(event.occurredAt).toISOString();
    next.message_id = event.messageId ?? next.message_id;
  }
  return next;
}

/** Whether `merged` says more than `current`: a write is needed. */
export const advances = (current: LatestState | null, merged: LatestState): boolean =>
  current === null || JSON.stringify(current) !== JSON.stringify(merged);
