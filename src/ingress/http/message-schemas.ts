/**
 * Schemas of /add-messages and the /commands/* routes. A message is validated
 * on its own, so one bad message is rejected with its reason while the rest of
 * the request is queued.
 */
import { z } from 'zod';
import { isAddrSpec, parseMailbox } from '../../core/address.js';
import { CLIENT_ID_CHARACTERS, CLIENT_ID_MAX_LENGTH, CLIENT_ID_RULE } from '../../core/client-id.js';
import { PRIORITY_LABELS } from '../../core/message.js';
import { BULK_ACTIONS } from '../../core/message-bulk.js';
import { MESSAGE_STATUSES, type MessageStatus } from '../../core/message-search.js';
import { identifier } from './schemas.js';

const NO_LINE_BREAKS = /^[^\r\n\0]*$/;
const headerText = (max: number) => z.string().max(max).regex(NO_LINE_BREAKS, 'must not contain CR, LF or NUL');
const mailbox = z
  .string()
  .max(998)
  .refine((text) => parseMailbox(text) !== null, { message: 'invalid address' })
  .describe('an address; "Name <addr>" allowed');
const mailboxes = z.union([mailbox, z.array(mailbox)]).transform((value) => (Array.isArray(value) ? value : [value]));
/** The client id becomes the X-Genro-Mail-ID header value (core/client-id.ts). */
export const clientId = z.string().min(1).max(CLIENT_ID_MAX_LENGTH).regex(CLIENT_ID_CHARACTERS, CLIENT_ID_RULE);
const BASE64 = /^(data:[^,]*;base64,)?[A-Za-z0-9+/\s]*={0,2}\s*$/;

export const priority = z.union([z.number().int().min(0).max(3), z.enum(PRIORITY_LABELS)]);
/** The same in a query string, where a number comes as text. */
export const priorityQuery = z.union([z.coerce.number().int().min(0).max(3), z.enum(PRIORITY_LABELS)]);

const attachment = z
  .object({
    filename: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^\r\n\0/\\]+$/, 'a file name without path separators or line breaks'),
    storage_path: z.string().min(1),
    fetch_mode: z.enum(['base64', 'http_url', 'endpoint']).default('endpoint'),
    mime_type: z
      .string()
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type like application/pdf')
      .nullable()
      .optional(),
    content_md5: z
      .string()
      .regex(/^[0-9a-fA-F]{32}$/, '32 hex digits')
      .nullable()
      .optional(),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.fetch_mode === 'base64' && !BASE64.test(value.storage_path))
      ctx.addIssue({ code: 'custom', path: ['storage_path'], message: 'not valid base64' });
    if (value.fetch_mode === 'http_url' && !/^https?:\/\/[^\s]+$/i.test(value.storage_path))
      ctx.addIssue({ code: 'custom', path: ['storage_path'], message: 'not an http(s) URL' });
  });

export const messageItem = z
  .object({
    id: clientId,
    tenant_id: identifier.optional(),
    account_id: identifier.optional(),
    from: mailbox,
    to: mailboxes.optional(),
    cc: mailboxes.optional(),
    bcc: mailboxes.optional(),
    reply_to: mailbox.nullable().optional(),
    return_path: z.string().max(254).refine(isAddrSpec, { message: 'invalid address' }).describe('the envelope sender: a bare address').nullable().optional(),
    subject: headerText(998).default(''),
    body: z.string().nullable().optional(),
    html: z.string().nullable().optional(),
    content_type: z.enum(['plain', 'html']).default('plain'),
    headers: z.record(z.string().regex(/^[!-9;-~]{1,76}$/, 'a header name (RFC 5322 ftext)'), headerText(998)).optional(),
    attachments: z.array(attachment).max(100).optional(),
    priority: priority.optional(),
    deferred_ts: z.number().nonnegative().max(32503680000).describe('not before this instant, epoch seconds').nullable().optional(),
    batch_code: headerText(128)
      .min(1)
      .refine((code) => code !== '*', { message: '"*" is reserved for the whole tenant' })
      .describe('not "*" (the whole tenant)')
      .nullable()
      .optional(),
    message_id: z
      .string()
      .max(998)
      .regex(/^<?[^<>\s@]+@[^<>\s@]+>?$/, 'a Message-ID like <local@domain>')
      .nullable()
      .optional(),
  })
  .strict()
  .refine((value) => (value.to?.length ?? 0) + (value.cc?.length ?? 0) + (value.bcc?.length ?? 0) > 0, {
    message: 'at least one recipient (to, cc or bcc) is required',
    path: ['to'],
  });

export type MessageItem = z.output<typeof messageItem>;

export const addMessagesBody = z.object({ messages: z.array(z.unknown()), default_priority: priority.optional() }).strict();

/**
 * The /add-messages body as documented: the request's shape from `addMessagesBody`, each message as
 * `messageItem` checks it (on its own, after the shape: a bad message is rejected, not the request).
 */
export const addMessagesDocumented = addMessagesBody.extend({ messages: z.array(messageItem) });

const idList = z
  .union([
    z.array(clientId),
    z.string().transform((text) =>
      text
        .split(',')
        .map((id) => id.trim())
        .filter((id) => id !== ''),
    ),
  ])
  .pipe(z.array(clientId).min(1).max(10_000))
  .describe('1-10000 client ids: a list, or comma-separated text');
const batch = headerText(128).min(1);

export const tenantParams = z.object({ tenant_id: identifier.optional() }).strict();
export const batchParams = z.object({ tenant_id: identifier.optional(), batch_code: batch.optional() }).strict();
export const idsParams = z.object({ tenant_id: identifier.optional(), ids: idList }).strict();
export const cleanupParams = z
  .object({
    tenant_id: identifier.optional(),
    older_than_seconds: z.coerce
      .number()
      .int()
      .nonnegative()
      .max(10 * 365 * 86400),
  })
  .strict();

/** The filters of GET /messages: a bulk action selects with the same ones (one filter language). */
export const searchFilterFields = {
  tenant_id: identifier.optional(),
  status: z.enum(MESSAGE_STATUSES as [MessageStatus, ...MessageStatus[]]).optional(),
  account_id: identifier.optional(),
  batch_code: z.string().min(1).max(255).optional(),
  recipient: z.string().min(3).max(320).optional(),
  sender: z.string().min(3).max(320).optional(),
  from_ts: z.coerce.number().int().min(0).optional(),
  to_ts: z.coerce.number().int().min(0).optional(),
  priority: priorityQuery.optional(),
  q: z.string().min(1).max(200).optional(),
};

/**
 * true/false in a JSON body, or as text in a query string; read with `isSet`. No transform here: zod
 * leaves a transformed schema's examples out of the (input-side) OpenAPI document.
 */
const flag = z.union([z.boolean(), z.enum(['true', 'false', '1', '0'])]);
export const isSet = (value: z.output<typeof flag> | undefined): boolean => value === true || value === 'true' || value === '1';

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
    ids: idsInput.meta({ description: 'client ids of messages waiting for a later attempt', examples: [['invoice-2024-0042', 'invoice-2024-0043']] }),
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
    dry_run: flag.optional().meta({ description: 'true: only count (and sample) what the action would reach; default false', examples: [true] }),
    all_tenants: flag
      .optional()
      .meta({ description: 'the admin token acting on every tenant (it must name a tenant_id otherwise); not for suspend/activate', examples: [true] }),
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
    tenant_id: f.tenant_id.meta({ description: 'the tenant (implied by a tenant key; the admin names one, or all_tenants)', examples: ['acme'] }),
    status: f.status.meta({ description: 'only messages in this status, as GET /messages', examples: ['error'] }),
    account_id: f.account_id.meta({ description: 'only messages sent through this account', examples: ['main'] }),
    batch_code: f.batch_code.meta({ description: 'only messages of this batch', examples: ['newsletter-2024-06'] }),
    recipient: f.recipient.meta({ description: 'only messages to this envelope recipient (whole address, any case)', examples: ['ann@example.net'] }),
    sender: f.sender.meta({ description: 'only messages from this envelope sender (whole address, any case)', examples: ['billing@acme.example'] }),
    from_ts: f.from_ts.meta({ description: 'accepted at or after this instant, epoch seconds', examples: [1717200000] }),
    to_ts: f.to_ts.meta({ description: 'accepted before this instant, epoch seconds', examples: [1717286400] }),
    priority: f.priority.meta({ description: 'only messages of this priority (0-3 or a label)', examples: ['low'] }),
    q: f.q.meta({ description: 'words of the subject, sender and recipients, all required (full text, as GET /messages)', examples: ['invoice june'] }),
  })
  .strict();
