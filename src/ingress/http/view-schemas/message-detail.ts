/**
 * GET /messages/{id}: the message's state fields and its `status`, its event timeline
 * and why it waits (views/message-detail-view.ts, views/waiting-view.ts), and its PEC
 * receipts (views/pec-receipt-view.ts).
 */
import { z } from 'zod';
import type { PecReceiptView } from '../views/pec-receipt-view.js';
import type { MessageEventView, MessageView } from '../views/message-detail-view.js';
import type { WaitingView } from '../views/waiting-view.js';
import { field, nullableSeconds, nullableText, seconds } from './field.js';
import { missingNodes, nodeIdField } from './fleet.js';
import { handoffState, messageStatus, priorityField } from './message.js';

const count = (description: string, example: number) => field(z.number().int(), description, example);
const nullableInt = (description: string, example: number | null) =>
  field(z.number().int().nullable(), description, example);

const MESSAGE_EXAMPLE: MessageView = {
  pk: 1234,
  id: 'inv-2025-001',
  tenant_id: 'acme',
  account_id: 'main',
  priority: 2,
  batch_code: null,
  source: 'http',
  state: 'sent',
  suspended: false,
  attempts: 2,
  mail_from: 'billing@acme.example',
  rcpt_to: ['ann@example.net'],
  subject: 'Your invoice 2025-001',
  message_id: '<inv-2025-001@acme.example>',
  size_bytes: 48213,
  created_ts: 1764000000,
  updated_ts: 1764000061,
  next_attempt_ts: null,
  deferred_ts: 1764000000,
  deferred_reason: '451 4.3.0 try again later',
  sent_ts: 1764000061,
  error_ts: null,
  error: null,
  last_reply_code: 250,
  last_enhanced_status: '2.0.0',
  refused_recipients: null,
  reported_ts: 1764000062,
  bounce_type: null,
  bounce_code: null,
  bounce_reason: null,
  bounce_ts: null,
  bounce_reported_ts: null,
  complaint_ts: null,
  complaint_type: null,
  provider_message_id: null,
  provider_state: null,
  provider_state_ts: null,
  pec_rda_ts: null,
  pec_rdc_ts: null,
  pec_error: null,
  pec_error_ts: null,
  body_shredded_ts: null,
  erased_ts: null,
  status: 'sent',
};

const message = z.object({
  pk: count("mailproxy's own number of the message.", 1234),
  id: field(z.string(), 'The client id.', 'inv-2025-001'),
  tenant_id: field(z.string(), 'The tenant.', 'acme'),
  account_id: field(z.string(), 'The account that sends it.', 'main'),
  priority: priorityField,
  batch_code: nullableText('Its batch; null: none.', null),
  source: field(z.enum(['http', 'smtp']), 'How it was submitted: `/add-messages` or SMTP.', 'http'),
  state: handoffState,
  suspended: field(z.boolean(), 'Held by a suspension of its tenant or batch.', false),
  attempts: count('Attempts made so far.', 2),
  mail_from: field(z.string(), 'The envelope sender.', 'billing@acme.example'),
  rcpt_to: field(z.array(z.string()), 'The envelope recipients.', ['ann@example.net']),
  subject: nullableText('The Subject.', 'Your invoice 2025-001'),
  message_id: nullableText('The Message-ID header.', '<inv-2025-001@acme.example>'),
  size_bytes: count(
    'Its size as stored, bytes (attachments fetched at sending time not counted, inline base64 ones are).',
    48213,
  ),
  created_ts: seconds('When it was accepted', 1764000000),
  updated_ts: seconds('When its state last changed', 1764000061),
  next_attempt_ts: nullableSeconds('When it is next tried, while waiting', null),
  deferred_ts: nullableSeconds('When it was last deferred', 1764000000),
  deferred_reason: nullableText('Why it was last deferred (the relay answer).', '451 4.3.0 try again later'),
  sent_ts: nullableSeconds('When the relay accepted it'),
  error_ts: nullableSeconds('When it failed for good', null),
  error: nullableText('Why it failed for good (the relay answer, `rate_limit_exceeded`, an expiry).', null),
  last_reply_code: nullableInt("The relay's last SMTP reply code.", 250),
  last_enhanced_status: nullableText("The relay's last enhanced status code (RFC 3463).", '2.0.0'),
  refused_recipients: field(
    z.array(z.unknown()).nullable(),
    'Recipients the relay refused while taking the message for the others, each `{recipient, replyCode, enhancedStatus, text}`; null: none.',
    null,
  ),
  reported_ts: nullableSeconds('When the client acknowledged the delivery report of its outcome', 1764000062),
  bounce_type: nullableText('`hard` or `soft` once a bounce came back.', null),
  bounce_code: nullableText('The bounce status code.', null),
  bounce_reason: nullableText('The bounce reason.', null),
  bounce_ts: nullableSeconds('When the bounce was read', null),
  bounce_reported_ts: nullableSeconds('When the client acknowledged the report of the bounce', null),
  complaint_ts: nullableSeconds("When a recipient's complaint (ARF feedback report) was read", null),
  complaint_type: nullableText('The feedback type of the complaint (`abuse`, ...).', null),
  provider_message_id: nullableText(
    "The relay provider's id of the message, from its 250 reply (`250 Ok <id>`, `queued as <id>`); null: it named none.",
    null,
  ),
  provider_state: nullableText(
    "What the relay's provider last reported by webhook, by rank (`accepted` < `soft_bounced` < `delivered`, `bounced`, `dropped`, `complaint`); null: nothing yet.",
    null,
  ),
  provider_state_ts: nullableSeconds('When the provider says that happened', null),
  pec_rda_ts: nullableSeconds('PEC: when the acceptance receipt (ricevuta di accettazione) was issued', null),
  pec_rdc_ts: nullableSeconds('PEC: when the delivery receipt (ricevuta di avvenuta consegna) was issued', null),
  pec_error: nullableText('PEC: what went wrong (non-accettazione, errore-consegna, acceptance_timeout, ...).', null),
  pec_error_ts: nullableSeconds('PEC: when it went wrong', null),
  body_shredded_ts: nullableSeconds(
    "When its body's key was destroyed (`retention.body_retention_seconds` after its outcome was reported, or erasure): it can no longer be sent again",
    null,
  ),
  erased_ts: nullableSeconds('When its personal data was erased on request (POST /commands/erase)', null),
  status: messageStatus,
}) satisfies z.ZodType<MessageView>;

const EVENT_EXAMPLE: MessageEventView = {
  event_type: 'deferred',
  ts: 1764000000,
  attempt: 1,
  reply_code: 451,
  enhanced_status: '4.3.0',
  text: '451 4.3.0 try again later',
  data: { next_attempt_ts: 1764000060 },
};

const event = z.object({
  event_type: field(
    z.string(),
    'What happened: `queued`, `sending`, `deferred`, `sent`, `error`, `expired`, `bounced`, `reported`, `resent`, ...',
    'deferred',
  ),
  ts: seconds('When', 1764000000),
  attempt: count("The message's attempt count when it happened (0 before the first attempt).", 1),
  reply_code: nullableInt('The SMTP reply code, when the relay answered.', 451),
  enhanced_status: nullableText('The enhanced status code, when given.', '4.3.0'),
  text: nullableText('The relay answer or a note.', '451 4.3.0 try again later'),
  data: field(z.record(z.string(), z.unknown()).nullable(), "The event's own data (JSON).", {
    next_attempt_ts: 1764000060,
  }),
}) satisfies z.ZodType<MessageEventView>;

const WHY_EXAMPLE: WaitingView = {
  waiting: true,
  reasons: [
    {
      code: 'retry_backoff',
      message: 'attempt 1 was refused for now (451 4.3.0 try again later); next attempt at 2025-11-24T16:01:00.000Z',
      until_ts: 1764000060,
    },
  ],
  expires_ts: 1764432000,
};

const why = z.object({
  waiting: field(z.boolean(), 'False once it is sent or failed: nothing holds it any more.', true),
  reasons: field(
    z.array(
      z.object({
        code: field(
          z.enum([
            'tenant_inactive',
            'tenant_suspended',
            'batch_suspended',
            'account_missing',
            'account_paused',
            'rate_limited',
            'relay_backoff',
            'destination_limited',
            'scheduled',
            'retry_backoff',
            'suppressed',
            'sending',
            'due',
          ]),
          'What holds it, stable.',
          'retry_backoff',
        ),
        message: field(
          z.string(),
          'The same in words.',
          'attempt 1 was refused for now (451 4.3.0 try again later); next attempt at 2025-11-24T16:01:00.000Z',
        ),
        until_ts: nullableSeconds('When it stops holding by itself; null when it takes an operator', 1764000060),
      }),
    ),
    'Everything that holds it back now, most decisive first.',
    WHY_EXAMPLE.reasons,
  ),
  expires_ts: nullableSeconds('When it is given up (`dispatch.max_age_seconds` after it was accepted)', 1764432000),
}) satisfies z.ZodType<WaitingView>;

/** A PEC receipt as GET /pec-receipts and a message's `pec_receipts` list it. */
export const receipt = z.object({
  receipt_id: field(
    z.string(),
    'The receipt id (GET /pec-receipts/{receipt_id}/raw).',
    '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
  ),
  tenant_id: field(z.string(), 'The tenant.', 'acme'),
  account_id: field(z.string(), 'The PEC account whose mailbox held it.', 'pec'),
  message_id: nullableText('The client id of the message it is about; null when none of ours fits.', 'atto-2025-17'),
  receipt_type: field(
    z.string(),
    'The X-Ricevuta type: `accettazione`, `avvenuta-consegna`, `errore-consegna`, ...',
    'avvenuta-consegna',
  ),
  recognised_by: field(z.string(), 'How it was recognised: `header`, `daticert` or `subject`.', 'header'),
  matched_by: nullableText('How it was tied to the message: `mail_id`, `message_id` or `identificativo`.', 'mail_id'),
  recipient: nullableText('The recipient it is about.', 'ann@pec.example.it'),
  error: nullableText("The provider's error, when one.", null),
  error_detail: nullableText("The provider's error text.", null),
  issuer: nullableText('The provider that issued it.', 'Aruba PEC S.p.A.'),
  identificativo: nullableText("The provider's id of the message.", 'opec210.20251124160001.12345.01.1.1@pec.aruba.it'),
  referenced_message_id: nullableText('The Message-ID it refers to.', '<atto-2025-17@acme.example>'),
  header_message_id: nullableText("The receipt's own Message-ID.", '<opec210.20251124160001.12345@pec.aruba.it>'),
  subject: nullableText("The receipt's subject.", 'CONSEGNA: Atto 2025-17'),
  issued_ts: nullableSeconds('When the provider issued it (its certified time)', 1764000100),
  received_ts: seconds('When it was read from the mailbox', 1764000120),
  size_bytes: count('Its size, bytes.', 8123),
  complete: field(
    z.boolean(),
    'False when it was larger than `[pec] max_receipt_bytes` and only its first bytes were kept.',
    true,
  ),
  sha256: field(
    z.string(),
    'SHA-256 of its bytes, hex.',
    'a3f5c0e1b2d4968877665544332211000ffeeddccbbaa99887766554433221100',
  ),
}) satisfies z.ZodType<PecReceiptView>;

export const messageDetail = z.object({
  message: field(message, 'The message and its state fields.', MESSAGE_EXAMPLE),
  events: field(z.array(event), 'Its timeline, oldest first.', [EVENT_EXAMPLE]),
  why: field(why, 'While it waits: what holds it back.', WHY_EXAMPLE),
  pec_receipts: field(z.array(receipt), 'Its PEC receipts, in the order they arrived (see GET /pec-receipts).', []),
  node_id: nodeIdField.optional(),
  missing_nodes: missingNodes.optional(),
});

/** GET /pec-receipts: a page of receipts. */
export const receiptPage = z.object({
  receipts: field(z.array(receipt), 'The receipts, newest first.', []),
  next: field(z.number().int().nullable(), 'Pass as `before` for the next page; null on the last one.', null),
});
