/**
 * Postmark's webhooks: one JSON record per request, `RecordType`
 * saying which. Postmark signs nothing; it sends the credentials its webhook
 * was configured with: basic auth in the URL (an Authorization header) and/or
 * custom HTTP headers, of which we read `X-Webhook-Token`. Every credential
 * the account configures must be present and right. A replay carries the same
 * record, whose id the ledger applies once.
 *
 * Postmark's MessageID is its own id of the message (what its SMTP relay
 * answers); our X-Genro-Mail-ID comes back as metadata (X-PM-Metadata-…).
 */
import { createHash } from 'node:crypto';
import type { ProviderEvent, WebhookSettings } from '../../core/provider/index.js';
import { malformed, unauthorized, type ProviderAdapter, type WebhookReading, type WebhookRequest } from './adapter.js';
import { instantOf, MAIL_ID_KEY, objectOf, parseJson, sameSecret, text, type Json } from './json-fields.js';

export const POSTMARK_TOKEN_HEADER = 'X-Webhook-Token';

/** Postmark's bounce types (its Bounce API's `Type`) that are permanent; the others are transient. */
const HARD_TYPES = new Set(['HardBounce', 'BadEmailAddress', 'ManuallyDeactivated', 'Unconfirmed']);
/** Types that are not about delivering the message at all. */
const NOT_BOUNCES = new Set([
  'Subscribe',
  'Unsubscribe',
  'AutoResponder',
  'AddressChange',
  'OpenRelayTest',
  'ChallengeVerification',
  'InboundError',
]);

type PostmarkSettings = Extract<WebhookSettings, { provider: 'postmark' }>;

function basicCredentials(header: string | undefined): { user: string; password: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (match === null) return null;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Whether the request carries every credential this account configured (and it configured at least one). */
function authorized(request: WebhookRequest, setting: PostmarkSettings): boolean {
  const wantsBasic = setting.username !== null || setting.password !== null;
  if (!wantsBasic && setting.token === null) return false;
  if (wantsBasic) {
    const given = basicCredentials(request.header('authorization'));
    if (
      given === null ||
      !sameSecret(given.user, setting.username ?? '') ||
      !sameSecret(given.password, setting.password ?? '')
    )
      return false;
  }
  if (setting.token !== null && !sameSecret(request.header(POSTMARK_TOKEN_HEADER) ?? '', setting.token)) return false;
  return true;
}

export function createPostmarkAdapter(): ProviderAdapter {
  return {
    provider: 'postmark',
    async receive(request, settings, now) {
      const accounts = settings.filter((setting): setting is PostmarkSettings => setting.provider === 'postmark');
      if (request.header('authorization') === undefined && request.header(POSTMARK_TOKEN_HEADER) === undefined) {
        return unauthorized('webhook_signature_missing', 'no basic auth and no token header');
      }
      if (!accounts.some((setting) => authorized(request, setting)))
        return unauthorized('webhook_signature_invalid', 'the credentials do not match');
      // Postmark's IDs are 64-bit: read past 2^53 as numbers, two bounces would share one id. Taken as text instead.
      const record = objectOf(
        parseJson(Buffer.from(request.body.toString('utf8').replace(/("ID"\s*:\s*)(\d{16,})/g, '$1"$2"'))),
      );
      if (record === null) return malformed('not a JSON object');
      return readRecord(record, now);
    },
  };
}

function readRecord(record: Json, now: number): WebhookReading {
  const type = text(record.RecordType);
  if (type === null) return malformed('no RecordType');
  const messageId = text(record.MessageID);
  const recipient = text(record.Recipient) ?? text(record.Email);
  const base: Omit<ProviderEvent, 'kind' | 'bounceType' | 'eventId' | 'at'> = {
    provider: 'postmark',
    recipient,
    providerMessageId: messageId,
    mailId: text(objectOf(record.Metadata)?.[MAIL_ID_KEY]),
    messageIdHeader: null,
    status: null,
    reason: text(record.Details) ?? text(record.Description),
    feedbackType: null,
  };
  const bounceId =
    typeof record.ID === 'number' && Number.isSafeInteger(record.ID)
      ? String(record.ID)
      : typeof record.ID === 'string' && /^\d{1,20}$/.test(record.ID)
        ? record.ID
        : null;
  switch (type) {
    case 'Delivery':
      return {
        ok: true,
        events: [
          {
            ...base,
            kind: 'delivered',
            bounceType: null,
            // A delivery has no id of its own: the message and the recipient are one delivery.
            eventId: `delivery:${digest(`${messageId ?? ''}\n${recipient ?? ''}`)}`,
            at: instantOf(record.DeliveredAt) ?? now,
          },
        ],
      };
    case 'Bounce':
    case 'SpamComplaint': {
      if (bounceId === null) return malformed(`a ${type} without an ID`);
      const bounceType = text(record.Type) ?? 'Unknown';
      const at = instantOf(record.BouncedAt) ?? now;
      const eventId = `bounce:${bounceId}`;
      if (type === 'SpamComplaint' || bounceType === 'SpamComplaint') {
        return {
          ok: true,
          events: [{ ...base, kind: 'complaint', bounceType: null, eventId, at, feedbackType: 'abuse' }],
        };
      }
      if (NOT_BOUNCES.has(bounceType)) return { ok: true, events: [] };
      const hard = HARD_TYPES.has(bounceType);
      return { ok: true, events: [{ ...base, kind: 'bounced', bounceType: hard ? 'hard' : 'soft', eventId, at }] };
    }
    default:
      // Open, Click, SubscriptionChange: not about delivery.
      return { ok: true, events: [] };
  }
}

const digest = (value: string): string => createHash('sha256').update(value).digest('hex').slice(0, 32);
