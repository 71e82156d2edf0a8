/**
 * Mailgun's webhooks: one JSON event per request, `signature`
 * beside `event-data`. Verified as Mailgun documents it: the hex HMAC-SHA256,
 * with the account's HTTP webhook signing key, of `timestamp` followed by
 * `token`; a timestamp outside the replay window is refused, and a token seen
 * again is the same event again (its id is applied once by the ledger).
 *
 * Mailgun's SMTP relay answers `250 Great success`, naming no id: its events are
 * tied back by our X-Genro-Mail-ID, which the relay passes as a user variable
 * (X-Mailgun-Variables), else by the Message-ID header it echoes.
 */
import { createHash, createHmac } from 'node:crypto';
import type { ProviderEvent } from '../../core/provider/index.js';
import { malformed, unauthorized, type ProviderAdapter, type WebhookReading } from './adapter.js';
import { MAIL_ID_KEY, numberOf, objectOf, parseJson, sameSecret, text, type Json } from './json-fields.js';

export interface MailgunAdapterOptions {
  /** How far from now a signed timestamp may be (ms). Default 10 minutes. */
  replayWindowMs?: number;
}

const DEFAULT_REPLAY_WINDOW_MS = 10 * 60_000;
/** Tokens remembered at most (a bound under a flood of signed requests; the window prunes them first). */
const MAX_TOKENS = 100_000;

/** Mailgun's reasons for a permanent failure that are its own suppression, not the receiver's answer: a drop. */
const SUPPRESSED = /^suppress-/;

export function createMailgunAdapter(options: MailgunAdapterOptions = {}): ProviderAdapter {
  const windowMs = options.replayWindowMs ?? DEFAULT_REPLAY_WINDOW_MS;
  /**
   * Mailgun's signature covers the timestamp and token, not the body: a captured request could be
   * sent again with another body within the window. Each token is remembered with its body's
   * digest for the window (in memory: a restart forgets them, the window still bounds the risk):
   * the same token with the same body is a redelivery (applied once by its event id), with
   * another body a replay.
   */
  const tokens = new Map<string, { digest: string; at: number }>();
  const remember = (token: string, digest: string, now: number): boolean => {
    for (const [seen, { at }] of tokens) {
      if (now - at <= windowMs && tokens.size < MAX_TOKENS) break;
      tokens.delete(seen);
    }
    const known = tokens.get(token);
    if (known !== undefined) return known.digest === digest;
    tokens.set(token, { digest, at: now });
    return true;
  };
  return {
    provider: 'mailgun',
    async receive(request, settings, now) {
      const body = objectOf(parseJson(request.body));
      if (body === null) return malformed('not a JSON object');
      const signature = objectOf(body.signature);
      // Mailgun sends the timestamp as a string; a number is read as its digits all the same.
      const timestamp =
        text(signature?.timestamp) ?? (typeof signature?.timestamp === 'number' ? String(signature.timestamp) : null);
      const token = text(signature?.token);
      const given = text(signature?.signature);
      if (timestamp === null || token === null || given === null)
        return unauthorized('webhook_signature_missing', 'no signature, timestamp or token');
      const keys = settings.flatMap((setting) => (setting.provider === 'mailgun' ? [setting.signingKey] : []));
      const holds = keys.some((key) =>
        sameSecret(
          given.toLowerCase(),
          createHmac('sha256', key)
            .update(timestamp + token)
            .digest('hex'),
        ),
      );
      if (!holds)
        return unauthorized('webhook_signature_invalid', 'the signature does not verify with the signing key');
      const signedAt = (numberOf(timestamp) ?? 0) * 1000;
      if (Math.abs(now - signedAt) > windowMs)
        return unauthorized('webhook_replayed', 'the signed timestamp is outside the replay window');
      if (!remember(token, createHash('sha256').update(request.body).digest('hex'), now)) {
        return unauthorized('webhook_replayed', 'this signed token came before with another body');
      }
      const data = objectOf(body['event-data']);
      if (data === null) return malformed('no event-data');
      return readEvent(data, token, now);
    },
  };
}

function readEvent(data: Json, token: string, now: number): WebhookReading {
  const name = text(data.event);
  if (name === null) return malformed('event-data without an event');
  const status = objectOf(data['delivery-status']);
  const headers = objectOf(objectOf(data.message)?.headers);
  const variables = objectOf(data['user-variables']);
  const at = numberOf(data.timestamp);
  const code = numberOf(status?.code);
  const reject = objectOf(data.reject);
  const base: Omit<ProviderEvent, 'kind' | 'bounceType'> = {
    provider: 'mailgun',
    // Mailgun's event id; the token (one per request) when it gives none.
    eventId: text(data.id) ?? `token:${token}`,
    recipient: text(data.recipient),
    providerMessageId: null,
    mailId: text(variables?.[MAIL_ID_KEY]),
    messageIdHeader: text(headers?.['message-id']),
    // A signed timestamp still has to be a sane one: seconds since 1970, not beyond tomorrow.
    at: at === null || at < 0 || at * 1000 > now + 86_400_000 ? now : Math.round(at * 1000),
    // Both the reply code and the enhanced status, when given: the plan reads each from here.
    status:
      [code === null ? null : String(code), text(status?.['enhanced-code'])]
        .filter((part) => part !== null)
        .join(' ') || null,
    reason:
      text(status?.description) ??
      text(status?.message) ??
      text(reject?.reason) ??
      text(reject?.description) ??
      text(data.reason),
    feedbackType: null,
  };
  const event = (kind: ProviderEvent['kind'], bounceType: ProviderEvent['bounceType'] = null): WebhookReading => ({
    ok: true,
    events: [{ ...base, kind, bounceType }],
  });
  switch (name) {
    case 'accepted':
      return event('accepted');
    case 'delivered':
      return event('delivered');
    case 'failed': {
      const reason = text(data.reason) ?? '';
      if (SUPPRESSED.test(reason)) return event('dropped');
      return event('bounced', text(data.severity) === 'temporary' ? 'soft' : 'hard');
    }
    case 'rejected':
      return event('dropped');
    case 'complained':
      return { ok: true, events: [{ ...base, kind: 'complaint', bounceType: null, feedbackType: 'abuse' }] };
    // The recipient used Mailgun's own unsubscribe link.
    case 'unsubscribed':
      return event('unsubscribed');
    default:
      // opened, clicked, stored: not about delivery.
      return { ok: true, events: [] };
  }
}
