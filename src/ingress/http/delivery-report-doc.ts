/**
 * The delivery report mailproxy POSTs to a client application (src/sync, README
 * "Delivery reports"), described for the OpenAPI document's `webhooks`. The body is
 * core/contracts/delivery-report.ts's; this file only documents it.
 */
import { z } from 'zod';
import type { ReportItem } from '../../core/contracts/index.js';
import type { WebhookDoc } from './route-doc.js';
import { field, nullableText, seconds } from './view-schemas/field.js';

const base = {
  id: field(z.string(), 'The client id of the message (its `id` at submission).', 'inv-2025-001'),
  tenant_id: field(z.string(), 'The tenant.', 'acme'),
  account_id: nullableText('The account that sent it.', 'main'),
  pk: field(z.number().int(), "mailproxy's own number of the message.", 1234),
  batch_code: nullableText('Its batch; null: none.', null),
  event_id: field(
    z.string(),
    'The id of this event, unique: delivery is at least once, so drop an item whose `event_id` you already have.',
    '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  ),
};
const event = <E extends ReportItem['event']>(events: [E, ...E[]], description: string) =>
  field(z.enum(events), `What happened: ${description}.`, events[0]);

const sent = z.object({
  ...base,
  event: event(['sent'], 'the relay accepted the message'),
  sent_ts: seconds('When the relay accepted it'),
});
const error = z.object({
  ...base,
  event: event(
    ['error', 'expired'],
    '`error`: it failed for good; `expired`: not delivered within `dispatch.max_age_seconds`',
  ),
  error_ts: seconds('When it failed'),
  error: nullableText('Why (the relay answer, `rate_limit_exceeded`, the expiry).', '550 5.1.1 user unknown'),
});
const deferred = z.object({
  ...base,
  event: event(['deferred'], 'refused for now; it is tried again'),
  deferred_ts: seconds('When it was deferred', 1764000000),
  deferred_reason: nullableText('Why (the relay answer).', '451 4.3.0 try again later'),
  next_attempt_ts: field(z.number().int().nullable(), 'When it is tried again, epoch seconds.', 1764000060),
});
const bounced = z.object({
  ...base,
  event: event(['bounced'], 'a bounce (DSN) came back for it after it was sent'),
  bounce_ts: seconds('When the bounce was read', 1764003600),
  bounce_type: nullableText('`hard` (permanent) or `soft` (temporary).', 'hard'),
  bounce_code: nullableText('The status code the bounce gives.', '5.1.1'),
  bounce_reason: nullableText('The reason the bounce gives.', 'user unknown'),
  bounce_recipient: nullableText('The recipient it is about.', 'ann@example.net'),
});
const complained = z.object({
  ...base,
  event: event(['complained'], 'a recipient reported it (an ARF feedback report)'),
  complaint_ts: seconds('When the complaint was read', 1764007200),
  complaint_type: nullableText('The feedback type.', 'abuse'),
  complaint_recipient: nullableText('The recipient who complained.', 'ann@example.net'),
});
const PEC_DETAILS = {
  recipient: 'ann@pec.example.it',
  receipt_id: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  error: null,
  issuer: 'Aruba PEC S.p.A.',
  identificativo: 'opec210.20251124160001.12345.01.1.1@pec.aruba.it',
  issued_ts: 1764000100,
  received_ts: 1764000120,
  matched_by: 'mail_id',
};
const pec = z.object({
  ...base,
  event: event(['pec'], 'a PEC (certified mail) receipt about it, or no acceptance in time'),
  pec_ts: seconds("The provider's certified time of the receipt when it gives one, else when it was read", 1764000100),
  pec_event: nullableText(
    'The receipt type (`accettazione`, `non-accettazione`, `presa-in-carico`, `avvenuta-consegna`, `errore-consegna`, `preavviso-errore-consegna`, `rilevazione-virus`) or `acceptance_timeout`.',
    'avvenuta-consegna',
  ),
  pec_details: field(
    z.record(z.string(), z.unknown()),
    'The receipt as read: `recipient`, `receipt_id` (GET /pec-receipts/{receipt_id}/raw), `error`, `error_code`, `error_detail`, `issuer`, `identificativo`, `receipt_kind`, `issued_ts`, `received_ts`, `matched_by`.',
    PEC_DETAILS,
  ),
});

const provider = z.object({
  ...base,
  event: event(
    ['delivered', 'dropped'],
    "the relay's provider (SES, SendGrid, Mailgun, Postmark) reported by webhook that it delivered, or dropped, the message",
  ),
  provider_ts: seconds('When the provider says it happened', 1764000200),
  provider: nullableText('The provider: `ses`, `sendgrid`, `mailgun` or `postmark`.', 'ses'),
  provider_recipient: nullableText('The recipient it is about.', 'ann@example.net'),
  provider_reason: nullableText("The provider's words (its SMTP answer, why it dropped the message).", '250 2.0.0 OK'),
});

const erased = z.object({
  ...base,
  event: event(['erased'], 'its personal data was erased on request (POST /commands/erase)'),
  erased_ts: seconds('When it was erased', 1764010800),
  was_waiting: field(z.boolean(), 'It was still waiting: it will never be sent.', true),
});

const unsubscribed = z.object({
  ...base,
  event: event(
    ['unsubscribed'],
    'the recipient clicked its one-click unsubscribe link (`list_unsubscribe` of the tenant); they are on the suppression list now',
  ),
  unsubscribe_ts: seconds('When the link was followed', 1764014400),
  unsubscribe_recipient: nullableText('The recipient who unsubscribed.', 'ann@example.net'),
  unsubscribe_list: nullableText(
    'The batch code of the message, the list they left; null: none.',
    'newsletter-2026-11',
  ),
});

const downloaded = z.object({
  ...base,
  event: event(
    ['downloaded'],
    'a recipient downloaded one of its attachments offloaded to a link (`attachment_offload` of the tenant); one item per download, up to 100 per file',
  ),
  download_ts: seconds('When it was downloaded', 1764018000),
  file_index: field(z.number().nullable(), "The attachment's place in the submission's `attachments`, from 0.", 0),
  downloads: field(z.number().nullable(), "That file's downloads so far, this one included.", 1),
});

/** One item per reportable event, in event order. */
export const reportItem = z.union([
  sent,
  error,
  deferred,
  bounced,
  complained,
  pec,
  provider,
  erased,
  unsubscribed,
  downloaded,
]) satisfies z.ZodType<ReportItem>;

export const reportBody = z.object({
  delivery_report: field(z.array(reportItem), 'The events, oldest first; an empty list is a heartbeat.', [
    {
      id: 'inv-1',
      tenant_id: 'acme',
      account_id: 'main',
      pk: 7,
      batch_code: null,
      event: 'sent',
      event_id: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      sent_ts: 1764000061,
    },
  ]),
});

/** What the client answers to acknowledge a report (core/report/report.ts interpretReply). */
export const reportAcknowledgement = z.object({
  ok: field(z.literal(true), 'Required: the whole list is acknowledged. Without it the items come again.', true),
  queued: field(
    z.number().int().min(0).optional(),
    'Optional: n > 0 asks for the next round at once (at most `reports.max_followup_rounds`, 10, in a row).',
    0,
  ),
  next_sync_after: field(
    z.number().optional(),
    'Optional, epoch seconds: do not disturb before then (no heartbeat; real reports held at most `reports.max_hold_seconds`, 60).',
    1764003600,
  ),
});

export const DELIVERY_REPORT_WEBHOOK: WebhookDoc = {
  name: 'deliveryReport',
  summary: "Delivery reports, POSTed by mailproxy to the tenant's `client_base_url` + `client_sync_path`",
  description:
    "Every `sent`, `error`, `expired`, `deferred`, `bounced`, `complained`, `pec`, `delivered`, `dropped`, `erased`, `unsubscribed` and `downloaded` event of a tenant's mail, in event order, usually within a fraction of a second " +
    "(bounces, complaints, deliveries and drops come from the bounce mailbox or the provider's webhooks); " +
    'with nothing to report, a heartbeat (`{"delivery_report": []}`) every `reports.sync_interval_seconds` (300). At most `reports.batch_size` (500) items per round. ' +
    'Anything but a 2xx with `{"ok": true}` (another status, no answer within `reports.request_timeout_seconds` (30), a redirect, a refused connection) leaves the items to be sent again, ' +
    'the same items first, after a backoff doubling from `reports.retry_initial_seconds` (2) to `reports.retry_max_seconds` (300). Each tenant has its own round in flight.',
  headers: {
    Authorization: {
      description:
        "The tenant's `client_auth`: `Bearer <token>` or `Basic <base64 user:password>`; absent with method `none` or no `client_auth`.",
      required: false,
      example: 'Bearer client-app-token-4f9c2a',
    },
    'X-Mailproxy-Report-Id': {
      description: 'The id of this round (a UUID); the same items sent again come under a new id.',
      required: true,
      example: '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    },
    'X-Mailproxy-Signature': {
      description:
        '`t=<epoch seconds>,v1=<hex HMAC-SHA256(client_signing_secret, "<t>." + raw body)>`; absent when the tenant has no signing secret. Recompute it over the raw body, compare in constant time, and refuse a `t` more than a few minutes from your clock (src/security/report-signature.ts `verifyReportSignature`).',
      required: false,
      example: 't=1764000000,v1=5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592',
    },
    'User-Agent': { description: 'Always `mailproxy`.', required: true, example: 'mailproxy' },
  },
  body: reportBody,
  responses: {
    '2XX': {
      description:
        'Acknowledged, when the body is JSON with `"ok": true`: the messages are marked reported and their timeline gets a `reported` event.',
      schema: reportAcknowledgement,
    },
    default: {
      description:
        'Anything else (another status, a 2xx without `"ok": true`): not acknowledged, the items come again after the backoff.',
      contentType: 'text/plain',
    },
  },
};
