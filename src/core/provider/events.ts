/**
 * The provider's side of a message (seed 000's provider_state): what
 * a relay provider (Amazon SES, SendGrid, Mailgun, Postmark) reports by
 * webhook about mail we handed it. Each provider's adapter (ingress/webhooks/)
 * turns a verified request into these events; this module says what one means
 * for the message, its timeline and the tenant's suppression list. Pure.
 */

export const PROVIDERS = ['ses', 'sendgrid', 'mailgun', 'postmark'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export const isProvider = (value: string): value is ProviderName => (PROVIDERS as readonly string[]).includes(value);

/**
 * Seed 000's provider states (bounced and complaint keep the bounce mailbox's names), and
 * `unsubscribed`: the recipient asked for no more mail, which says nothing of the delivery.
 */
export type ProviderEventKind = 'accepted' | 'delivered' | 'bounced' | 'dropped' | 'complaint' | 'unsubscribed';

/**
 * Our own one-click unsubscribe link (core/tenant/unsubscribe-service.ts): what a recipient tells
 * about a message settles like what a provider tells, once, on the node that holds it.
 */
export const ONE_CLICK = 'one_click';

/** One event as a provider reported it, read by its adapter (or as a recipient's unsubscribe link told it). */
export interface ProviderEvent {
  provider: ProviderName | typeof ONE_CLICK;
  /**
   * The provider's own id of this event (SNS MessageId, sg_event_id, Mailgun's event id,
   * Postmark's bounce ID or a digest of the record): the same event delivered twice is applied once.
   */
  eventId: string;
  kind: ProviderEventKind;
  /** For `bounced`: hard (permanent) or soft (transient); null otherwise. */
  bounceType: 'hard' | 'soft' | null;
  /** The recipient the event is about, as the provider wrote it. */
  recipient: string | null;
  /** The provider's id of the message (what its SMTP 250 reply named, or the id its API shows). */
  providerMessageId: string | null;
  /** Our X-Genro-Mail-ID, when the provider echoed it back (custom metadata, tags, original headers). */
  mailId: string | null;
  /** The Message-ID header of the message, when the provider echoed it. */
  messageIdHeader: string | null;
  /** When the provider says it happened (ms); the receipt time when it does not say. */
  at: number;
  /** Enhanced status (5.1.1) or reply code the provider passed on, when any. */
  status: string | null;
  /** The provider's words: diagnostic, bounce description, drop reason. */
  reason: string | null;
  /** For `complaint`: the feedback type (abuse, ...) when given. */
  feedbackType: string | null;
  /** For `unsubscribed`: the list (batch code) the recipient left, when named. */
  list?: string | null;
}

/** An adapter's verdict on a request: a stable code for whatever is refused. */
export type WebhookProblem = { status: 400 | 401 | 404 | 503; code: string; message: string };

/**
 * A message's provider state (its `provider_state` column): seed 000's, with a soft bounce apart.
 * A provider's deferral is no verdict: it must not hide a delivery reported before it.
 */
export type ProviderState = Exclude<ProviderEventKind, 'bounced' | 'unsubscribed'> | 'bounced' | 'soft_bounced';

/** Seed 000's ranks: a state of lower rank never replaces a higher one (an equal one does: the later word wins). */
export const PROVIDER_STATE_RANKS: Readonly<Record<ProviderState, number>> = {
  accepted: 10,
  soft_bounced: 50,
  delivered: 100,
  bounced: 100,
  dropped: 100,
  complaint: 100,
};

/** Null for an unsubscribe: it leaves the provider state as it was. */
export const providerStateOf = (event: Pick<ProviderEvent, 'kind' | 'bounceType'>): ProviderState | null =>
  event.kind === 'unsubscribed'
    ? null
    : event.kind === 'bounced' && event.bounceType === 'soft'
      ? 'soft_bounced'
      : event.kind;

/**
 * How webhooks of an account's provider are verified (the account's configuration, sealed at rest
 * with its relay password): the SNS topics SES publishes to, SendGrid's signed-webhook public key,
 * Mailgun's HTTP webhook signing key, Postmark's basic-auth credentials and/or a token header.
 */
export type WebhookSettings =
  | { provider: 'ses'; topicArns: readonly string[] }
  | { provider: 'sendgrid'; publicKey: string }
  | { provider: 'mailgun'; signingKey: string }
  | { provider: 'postmark'; username: string | null; password: string | null; token: string | null };

/** How one event ended: applied, already applied (a redelivery), or about no message of the tenant (here). */
export type EventOutcome = 'applied' | 'duplicate' | 'unmatched';

/** How a request's events ended, counted. */
export interface ProviderSettlement {
  applied: number;
  duplicates: number;
  unmatched: number;
}

export function countOutcomes(outcomes: readonly EventOutcome[]): ProviderSettlement {
  const settlement = { applied: 0, duplicates: 0, unmatched: 0 };
  for (const outcome of outcomes) {
    if (outcome === 'applied') settlement.applied += 1;
    else if (outcome === 'duplicate') settlement.duplicates += 1;
    else settlement.unmatched += 1;
  }
  return settlement;
}

/** A webhook request as received: its raw bytes (what signatures cover) and its headers. */
export interface WebhookRequest {
  body: Buffer;
  /** A header by name (case-insensitive); undefined when absent. */
  header(name: string): string | undefined;
}

export type WebhookOutcome =
  { ok: true; settlement: ProviderSettlement; confirmed: boolean } | { ok: false; problem: WebhookProblem };

/** The webhook port the HTTP edge calls (ingress/webhooks/webhook-service.ts): verify, read, apply. */
export interface WebhookReceiver {
  receive(provider: string, tenantId: string, request: WebhookRequest): Promise<WebhookOutcome>;
  /**
   * Applies events another fleet node verified to the messages this node holds (fleet mode: a
   * provider's webhook reaches any node, a message lives on one); one outcome per event.
   */
  apply(tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[]>;
  /**
   * Applies events verified here otherwise (a recipient's unsubscribe link) wherever their messages
   * are: here first, then, in a fleet, on the other nodes; null when a node that may hold some cannot be asked.
   */
  settle(tenantId: string, events: readonly ProviderEvent[]): Promise<EventOutcome[] | null>;
}

/** SES message tag values: ASCII letters, digits, `_`, `-`, `.`, `@` (a client id outside them goes untagged). */
const SES_TAG_VALUE = /^[A-Za-z0-9_.@-]{1,255}$/;

/**
 * The header that has the provider echo our X-Genro-Mail-ID in its webhooks (its custom metadata),
 * added by the relay to what it sends through the account; null when the provider has none for it.
 * A client id is printable ASCII without spaces (core/message/client-id.ts), safe in a header as it is.
 */
export function metadataHeader(provider: ProviderName, clientId: string): string | null {
  switch (provider) {
    case 'ses':
      return SES_TAG_VALUE.test(clientId) ? `X-SES-MESSAGE-TAGS: genro_mail_id=${clientId}` : null;
    case 'sendgrid':
      return `X-SMTPAPI: ${JSON.stringify({ unique_args: { genro_mail_id: clientId } })}`;
    case 'mailgun':
      return `X-Mailgun-Variables: ${JSON.stringify({ genro_mail_id: clientId })}`;
    case 'postmark':
      return `X-PM-Metadata-genro_mail_id: ${clientId}`;
  }
}
