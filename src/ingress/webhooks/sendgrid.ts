/**
 * SendGrid's signed Event Webhook: an ECDSA P-256 signature over
 * timestamp + raw body, checked with the account's verification key, then the
 * JSON array of events read into provider events. Engagement events are ignored.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { ProviderEvent } from '../../core/provider/index.js';
import { malformed, unauthorized, type ProviderAdapter, type WebhookReading } from './adapter.js';
import { MAIL_ID_KEY, objectOf, text, type Json } from './json-fields.js';

export interface SendgridAdapterOptions {
  /** How far the signed timestamp may be from now, either way. */
  replayWindowMs?: number;
}

type Draft = Pick<ProviderEvent, 'kind' | 'bounceType' | 'feedbackType'>;

const SIGNATURE_HEADER = 'X-Twilio-Email-Event-Webhook-Signature';
const TIMESTAMP_HEADER = 'X-Twilio-Email-Event-Webhook-Timestamp';
/** Far above SendGrid's batches; the HTTP layer sets the real limit. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Custom args (and legacy unique_args) arrive as top-level keys of each event. */
/** Classifications that blame the sender or the rate, not the address: the address stays usable. */
const SOFT_CLASSIFICATIONS = new Set(['Reputation', 'Frequency or Volume Too High']);
/** Deeper than SendGrid's flat events ever are; bounds the canonical digest's recursion. */
const MAX_DEPTH = 16;

export function createSendgridAdapter(options: SendgridAdapterOptions = {}): ProviderAdapter {
  const replayWindowMs = options.replayWindowMs ?? 10 * 60_000;
  return {
    provider: 'sendgrid',
    async receive(request, settings, now) {
      const signature = request.header(SIGNATURE_HEADER)?.trim() ?? '';
      const timestamp = request.header(TIMESTAMP_HEADER)?.trim() ?? '';
      if (signature === '' || timestamp === '')
        return unauthorized('webhook_signature_missing', 'the SendGrid signature headers are missing');
      if (request.body.length > MAX_BODY_BYTES) return malformed('the body is larger than any SendGrid batch');
      const keys = settings.flatMap((setting) =>
        setting.provider === 'sendgrid' ? [publicKeyOf(setting.publicKey)] : [],
      );
      const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), request.body]);
      const bytes = Buffer.from(signature, 'base64');
      if (!keys.some((key) => key !== null && signatureHolds(signed, key, bytes))) {
        return unauthorized(
          'webhook_signature_invalid',
          'the SendGrid signature does not verify with any configured key',
        );
      }
      // Checked after the signature, which covers it: a replayed batch is refused, not re-read.
      const sentAt = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) * 1000 : NaN;
      if (!(Math.abs(now - sentAt) <= replayWindowMs))
        return unauthorized('webhook_replayed', 'the SendGrid timestamp is outside the window');
      return readBatch(request.body, now);
    },
  };
}

/** Keys parsed once per setting: parsing one costs more than verifying with it. Bounded, as settings change rarely. */
const parsedKeys = new Map<string, KeyObject | null>();
const MAX_PARSED_KEYS = 256;

/** SendGrid shows the key as base64 DER SubjectPublicKeyInfo; a PEM is accepted too. */
function publicKeyOf(setting: string): KeyObject | null {
  const known = parsedKeys.get(setting);
  if (known !== undefined) return known;
  if (parsedKeys.size >= MAX_PARSED_KEYS) parsedKeys.clear();
  const key = parsePublicKey(setting);
  parsedKeys.set(setting, key);
  return key;
}

function parsePublicKey(setting: string): KeyObject | null {
  try {
    const textKey = setting.trim();
    const key = textKey.startsWith('-----BEGIN')
      ? createPublicKey(textKey)
      : createPublicKey({ key: Buffer.from(textKey.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ec' ? key : null;
  } catch {
    return null;
  }
}

function signatureHolds(signed: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return verify('sha256', signed, { key, dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}

function readBatch(body: Buffer, now: number): WebhookReading {
  let batch: unknown;
  try {
    batch = JSON.parse(body.toString('utf8'));
  } catch {
    return malformed('the body is not JSON');
  }
  if (!Array.isArray(batch)) return malformed('the body is not an array of SendGrid events');
  const events: ProviderEvent[] = [];
  for (const item of batch) {
    const event = objectOf(item);
    const name = event === null ? null : text(event.event);
    if (event === null || name === null) return malformed('a SendGrid event is not an object naming its event');
    const draft = draftOf(name, event);
    if (draft === null) continue;
    const eventId = text(event.sg_event_id) ?? digestOf(event);
    if (eventId === null) return malformed('a SendGrid event is nested deeper than SendGrid sends');
    events.push({
      provider: 'sendgrid',
      eventId,
      ...draft,
      recipient: text(event.email),
      providerMessageId: text(event.sg_message_id),
      mailId: text(event[MAIL_ID_KEY]),
      messageIdHeader: text(event['smtp-id']),
      at: typeof event.timestamp === 'number' && Number.isFinite(event.timestamp) ? event.timestamp * 1000 : now,
      status: text(event.status),
      reason: text(event.reason) ?? text(event.response),
    });
  }
  return { ok: true, events };
}

/** Null for engagement events (open, click, group_resubscribe) and any event SendGrid adds later. */
function draftOf(name: string, event: Json): Draft | null {
  const none = { bounceType: null, feedbackType: null } as const;
  switch (name) {
    case 'processed':
      return { ...none, kind: 'accepted' };
    case 'delivered':
      return { ...none, kind: 'delivered' };
    // A deferral is a temporary refusal that SendGrid keeps retrying: a soft bounce, never a suppression.
    case 'deferred':
      return { ...none, kind: 'bounced', bounceType: 'soft' };
    case 'bounce': {
      const soft = event.type === 'blocked' || SOFT_CLASSIFICATIONS.has(text(event.bounce_classification) ?? '');
      return { ...none, kind: 'bounced', bounceType: soft ? 'soft' : 'hard' };
    }
    case 'dropped':
      return { ...none, kind: 'dropped' };
    case 'spamreport':
      return { ...none, kind: 'complaint', feedbackType: 'abuse' };
    // The recipient used SendGrid's own unsubscribe link (of all its mail, or of one group).
    case 'unsubscribe':
    case 'group_unsubscribe':
      return { ...none, kind: 'unsubscribed' };
    default:
      return null;
  }
}

/** For events without sg_event_id: the same event delivered twice digests the same. */
function digestOf(event: Json): string | null {
  const canonical = canonicalOf(event, 0);
  return canonical === null ? null : `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

/** JSON with object keys sorted, so key order on the wire does not change the digest. */
function canonicalOf(value: unknown, depth: number): string | null {
  if (depth > MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    const items = value.map((item) => canonicalOf(item, depth + 1));
    return items.includes(null) ? null : `[${items.join(',')}]`;
  }
  const object = objectOf(value);
  if (object === null) return JSON.stringify(value) ?? 'null';
  const entries = Object.keys(object)
    .sort()
    .map((key) => {
      const item = canonicalOf(object[key], depth + 1);
      return item === null ? null : `${JSON.stringify(key)}:${item}`;
    });
  return entries.includes(null) ? null : `{${entries.join(',')}}`;
}
