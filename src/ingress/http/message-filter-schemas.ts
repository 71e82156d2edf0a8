/**
 * The inputs that select messages by filter: the filters of GET /messages, which
 * POST /commands/bulk shares (one filter language), and the bodies of the bulk
 * and retry-now commands.
 */
import { z } from 'zod';
import { BULK_ACTIONS, MESSAGE_STATUSES, type MessageStatus } from '../../core/message/index.js';
import { clientId, priorityQuery } from './message-schemas.js';
import { identifier, tenantScope } from './schemas.js';

/** The filters of GET /messages: a bulk action selects with the same ones (one filter language). */
export const searchFilterFields = {
  tenant_id: tenantScope('every tenant'),
  status: z
    .enum(MESSAGE_STATUSES as [MessageStatus, ...MessageStatus[]])
    .optional()
    .meta({
      description: 'Only messages in this status (`suspended`: held by a suspension; `bounced`: sent, then returned).',
      examples: ['deferred'],
    }),
  account_id: identifier.optional().meta({ description: 'Only messages of this account.', examples: ['main'] }),
  batch_code: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'Only messages of this batch.', examples: ['newsletter-2025-05'] }),
  recipient: z
    .string()
    .min(3)
    .max(320)
    .optional()
    .meta({
      description: 'Only messages to this envelope recipient: the whole address, any case.',
      examples: ['ann@example.net'],
    }),
  sender: z
    .string()
    .min(3)
    .max(320)
    .optional()
    .meta({
      description: 'Only messages from this envelope sender: the whole address, any case.',
      examples: ['billing@acme.example'],
    }),
  from_ts: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'Only messages accepted at or after this instant, epoch seconds.', examples: [1764000000] }),
  to_ts: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'Only messages accepted before this instant, epoch seconds.', examples: [1764086400] }),
  priority: priorityQuery.optional().meta({
    description: 'Only messages of this priority: 0-3 or its label (`immediate`, `high`, `normal`, `low`).',
    examples: ['high'],
  }),
  q: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({
      description: 'Words of the subject, sender and recipients, all required, the last also as a prefix.',
      examples: ['invoice ann@example.net'],
    }),
};

/**
 * true/false in a JSON body, or as text in a query string; read with `isSet`. No transform here: zod
 * leaves a transformed schema's examples out of the (input-side) OpenAPI document.
 */
const flag = z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])]);
export const isSet = (value: z.output<typeof flag> | undefined): boolean =>
  value === true || value === 'true' || value === '1';

const splitIds = (text: string): string[] =>
  text
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
/** Client ids as a list or comma-separated text, checked without a transform (see flag); `idsOf` reads them. */
const idsInput = z.union([
  z.array(clientId).min(1).max(10_000),
  z.string().refine(
    (text) => {
      const ids = splitIds(text);
      return ids.length >= 1 && ids.length <= 10_000 && ids.every((id) => clientId.safeParse(id).success);
    },
    { message: '1-10000 client ids, comma-separated' },
  ),
]);
export const idsOf = (value: z.output<typeof idsInput>): string[] => (Array.isArray(value) ? value : splitIds(value));
const f = searchFilterFields;

export const retryNowParams = z
  .object({
    tenant_id: identifier.optional().meta({ description: 'the tenant (implied by a tenant key)', examples: ['acme'] }),
    ids: idsInput.meta({
      description: 'client ids of messages waiting for a later attempt',
      examples: [['invoice-2024-0042', 'invoice-2024-0043']],
    }),
  })
  .strict();

/** At most this many messages per bulk run (`max`): a larger selection is done by running again. */
export const BULK_MAX = 100_000;

export const bulkParams = z
  .object({
    action: z.enum(BULK_ACTIONS).meta({
      description: 'what to do with every message the filter finds (suspend/activate: a tenant or one batch of it)',
      examples: ['resend'],
    }),
    dry_run: flag.optional().meta({
      description: 'true: only count (and sample) what the action would reach; default false',
      examples: [true],
    }),
    all_tenants: flag.optional().meta({
      description:
        'the admin token acting on every tenant (it must name a tenant_id otherwise); not for suspend/activate',
      examples: [true],
    }),
    max: z.coerce
      .number()
      .int()
      .min(1)
      .max(BULK_MAX)
      .optional()
      .meta({
        description: `at most this many messages acted on in this run (default and limit ${BULK_MAX}); the rest is reported as remaining`,
        examples: [5000],
      }),
    tenant_id: f.tenant_id.meta({
      description: 'the tenant (implied by a tenant key; the admin names one, or all_tenants)',
      examples: ['acme'],
    }),
    status: f.status.meta({ description: 'only messages in this status, as GET /messages', examples: ['error'] }),
    account_id: f.account_id.meta({ description: 'only messages sent through this account', examples: ['main'] }),
    batch_code: f.batch_code.meta({ description: 'only messages of this batch', examples: ['newsletter-2024-06'] }),
    recipient: f.recipient.meta({
      description: 'only messages to this envelope recipient (whole address, any case)',
      examples: ['ann@example.net'],
    }),
    sender: f.sender.meta({
      description: 'only messages from this envelope sender (whole address, any case)',
      examples: ['billing@acme.example'],
    }),
    from_ts: f.from_ts.meta({
      description: 'accepted at or after this instant, epoch seconds',
      examples: [1717200000],
    }),
    to_ts: f.to_ts.meta({ description: 'accepted before this instant, epoch seconds', examples: [1717286400] }),
    priority: f.priority.meta({ description: 'only messages of this priority (0-3 or a label)', examples: ['low'] }),
    q: f.q.meta({
      description: 'words of the subject, sender and recipients, all required (full text, as GET /messages)',
      examples: ['invoice june'],
    }),
  })
  .strict();
