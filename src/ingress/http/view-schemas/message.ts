/**
 * What the message routes answer: the /add-messages result (views/rejection-view.ts),
 * the operator commands' results (core/message/commands.ts) and the GET /messages page
 * (views/message-summary-view.ts).
 */
import { z } from 'zod';
import {
  BULK_ACTIONS,
  type BulkResult,
  MESSAGE_STATUSES,
  type MessageStatus,
  REJECTION_CODES,
  type RejectionCode,
} from '../../../core/message/index.js';
import type { BulkPreviewView } from '../views/bulk-preview-view.js';
import type { MessageSummaryView } from '../views/message-summary-view.js';
import type { RejectionView } from '../views/rejection-view.js';
import { field, nullableSeconds, nullableText, ok, seconds } from './field.js';
import { fleetCommandFields, missingNodes, nodeIdField } from './fleet.js';

const count = (description: string, example: number) => field(z.number().int(), description, example);
const ids = (description: string, example: string[]) => field(z.array(z.string()), description, example);
const tenantId = field(z.string(), 'The tenant.', 'acme');

export const STATUS_TEXT =
  '`queued` (waiting), `deferred` (waiting for a retry or its `deferred_ts`), `sending` (handed to the relay), `sent`, `error` (failed or expired for good), `suspended` (held by a suspension), `bounced` (sent, then returned)';
export const messageStatus = field(
  z.enum(MESSAGE_STATUSES as [MessageStatus, ...MessageStatus[]]),
  STATUS_TEXT,
  'sent',
);
export const handoffState = field(
  z.enum(['queued', 'deferred', 'sending', 'sent', 'error']),
  'The delivery state alone, without suspension or bounce (see `status`).',
  'sent',
);
export const priorityField = field(z.literal([0, 1, 2, 3]), 'Priority: 0 immediate, 1 high, 2 normal, 3 low.', 2);

const rejection = z.object({
  index: count('Its position in `messages`, from 0.', 1),
  id: nullableText('Its `id`, or null when it had none readable.', 'inv-2025-002'),
  reason: field(
    z.string(),
    'Why, for people (the text genro clients read).',
    'to: at least one recipient (to, cc or bcc) is required',
  ),
  code: field(
    z.enum(REJECTION_CODES as [RejectionCode, ...RejectionCode[]]),
    'Why, stable: match on this.',
    'INVALID_MESSAGE',
  ),
}) satisfies z.ZodType<RejectionView>;

export const addMessagesResult = z.object({
  ok,
  queued: count("Messages accepted and committed (fsync'd) before this answer.", 1),
  rejected: field(z.array(rejection), 'The messages not accepted, each with its reason; the others are queued.', [
    {
      index: 1,
      id: 'inv-2025-002',
      reason: 'to: at least one recipient (to, cc or bcc) is required',
      code: 'INVALID_MESSAGE',
    },
  ]),
});

const batchCode = field(z.string(), 'The batch acted on; `*`: the whole tenant.', 'newsletter-2025-05');
const suspensions = ids("The tenant's suspended batch codes after the command (`*`: the whole tenant).", [
  'newsletter-2025-05',
]);

export const runNowResult = z.object({
  ok,
  woken: field(z.literal(true), 'The dispatcher was asked to look for due mail now.', true),
});
export const suspendResult = z.object({
  ok,
  batch_code: batchCode,
  suspended_messages: count('Waiting messages now held.', 120),
  suspensions,
});
export const activateResult = z.object({
  ok,
  batch_code: batchCode,
  activated_messages: count('Held messages released to be sent.', 120),
  suspensions: ids("The tenant's suspended batch codes after the command (`*`: the whole tenant).", []),
});
export const deleteResult = z.object({
  ok,
  deleted: ids('Ids deleted.', ['inv-2025-001']),
  not_found: ids('Ids of no message of the tenant.', ['inv-1999-404']),
  in_flight: ids('Ids being sent now: not deleted.', []),
  ...fleetCommandFields,
});
export const eraseResult = z.object({
  ok,
  tenants: ids('The tenants it erased in.', ['acme']),
  erased_messages: count(
    'Messages whose body key was destroyed and personal fields cleared; their status and times stay.',
    3,
  ),
  stopped_waiting: count('Of them, messages that were still waiting: they will not be sent (reported as `erased`).', 1),
  in_flight: count(
    'Of them, messages being sent at that moment: the relay has them; their outcome is still recorded.',
    0,
  ),
  not_found: ids('Ids of no message of the tenant (or erased already).', []),
  suppressions: count('Suppressions removed.', 1),
  mailbox_records: count('Bounce and PEC mailbox records cleared.', 1),
  pec_receipts: count('PEC receipts whose original bytes were destroyed.', 0),
  events_scrubbed: count('Timeline and change events whose personal fields were cleared.', 7),
});
export const resendResult = z.object({
  ok,
  resent: ids('Ids queued again (attempts start over).', ['inv-2025-001']),
  not_found: ids('Ids of no message of the tenant.', []),
  not_final: ids('Ids still waiting or being sent: left as they are.', ['inv-2025-003']),
  body_erased: ids(
    'Ids whose body is gone (`retention.body_retention_seconds` after their outcome was reported, or erased): they cannot be sent again; submit them anew.',
    [],
  ),
  ...fleetCommandFields,
});
export const cleanupResult = z.object({ ok, removed: count('Messages removed.', 5230) });

const SUMMARY_EXAMPLE: MessageSummaryView = {
  pk: 1234,
  id: 'inv-2025-001',
  tenant_id: 'acme',
  account_id: 'main',
  status: 'sent',
  state: 'sent',
  priority: 2,
  batch_code: null,
  subject: 'Your invoice 2025-001',
  mail_from: 'billing@acme.example',
  rcpt_to: ['ann@example.net'],
  attempts: 1,
  created_ts: 1764000000,
  next_attempt_ts: null,
  sent_ts: 1764000001,
  error_ts: null,
  error: null,
  bounce_type: null,
};

const summary = z.object({
  pk: count("mailproxy's own number of the message (unique across tenants).", 1234),
  id: field(z.string(), 'The client id.', 'inv-2025-001'),
  tenant_id: tenantId,
  account_id: field(z.string(), 'The account that sends it.', 'main'),
  status: messageStatus,
  state: handoffState,
  priority: priorityField,
  batch_code: nullableText('Its batch; null: none.', null),
  subject: nullableText('The Subject.', 'Your invoice 2025-001'),
  mail_from: field(z.string(), 'The envelope sender.', 'billing@acme.example'),
  rcpt_to: ids('The envelope recipients.', ['ann@example.net']),
  attempts: count('Attempts made so far.', 1),
  created_ts: seconds('When it was accepted', 1764000000),
  next_attempt_ts: nullableSeconds('When it is next tried, while waiting', null),
  sent_ts: nullableSeconds('When the relay accepted it', 1764000001),
  error_ts: nullableSeconds('When it failed for good', null),
  error: nullableText('Why it failed; null: it did not.', null),
  bounce_type: nullableText('`hard` or `soft` once a bounce came back; null: none.', null),
  node_id: nodeIdField.optional(),
}) satisfies z.ZodType<MessageSummaryView>;

export const messagePage = z.object({
  messages: field(z.array(summary), 'The page of messages, in the order asked.', [SUMMARY_EXAMPLE]),
  next_cursor: nullableText('Pass as `cursor` for the next page; null on the last one.', 'eyJwayI6MTIzNH0'),
  missing_nodes: missingNodes.optional(),
});

export const retryNowResult = z.object({
  ok,
  retried: ids('Ids made due now; the dispatcher was woken.', ['inv-2025-001']),
  not_found: ids('Ids of no message of the tenant.', []),
  not_applicable: ids(
    'Ids not waiting for a later attempt (sent, failed, in flight, already due, or held by a suspension): left as they are.',
    ['inv-2025-003'],
  ),
});

const bulkAction = field(z.enum(BULK_ACTIONS), 'The action asked for.', 'resend');
const bulkPreview = z.object({
  ok,
  action: bulkAction,
  dry_run: field(z.literal(true), 'A dry run: nothing changed.', true),
  matching: count('Messages the filter finds.', 40),
  applicable: count('Of those, the ones the action applies to.', 37),
  sample: field(
    z.array(z.object({ tenant_id: tenantId, id: field(z.string(), 'The client id.', 'inv-2025-001') })),
    'Up to 20 of the applicable ones, newest first.',
    [{ tenant_id: 'acme', id: 'inv-2025-001' }],
  ),
}) satisfies z.ZodType<BulkPreviewView & { ok: true }>;
const bulkRun = z.object({
  ok,
  action: bulkAction,
  dry_run: field(z.literal(false), 'A real run.', false),
  matching: count('Messages the filter found.', 40),
  done: count('Messages acted on.', 37),
  not_applicable: count('Found but not in a state the action applies to (in flight, already sent, ...).', 3),
  remaining: count('Still applicable after the run: more than `max`, or arrived meanwhile.', 0),
  suspensions: ids("suspend and activate: the tenant's suspended batch codes afterwards.", [
    'newsletter-2025-05',
  ]).optional(),
}) satisfies z.ZodType<BulkResult & { ok: true }>;
export const bulkResult = z.union([bulkPreview, bulkRun]);
