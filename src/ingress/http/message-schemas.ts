/**
 * Schemas of /add-messages and the /commands/* routes. A message is validated
 * on its own, so one bad message is rejected with its reason while the rest of
 * the request is queued.
 */
import { z } from 'zod';
import { isAddrSpec, parseMailbox } from '../../core/address.js';
import { CLIENT_ID_CHARACTERS, CLIENT_ID_MAX_LENGTH, CLIENT_ID_RULE } from '../../core/client-id.js';
import { PRIORITY_LABELS } from '../../core/message.js';
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
