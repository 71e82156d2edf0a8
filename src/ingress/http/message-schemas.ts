/**
 * Schemas of /add-messages and the /commands/* routes. A message is validated
 * on its own, so one bad message is rejected with its reason while the rest of
 * the request is queued.
 */
import { z } from 'zod';
import { isAddrSpec, parseMailbox } from '../../core/address.js';
import { CLIENT_ID_CHARACTERS, CLIENT_ID_MAX_LENGTH, CLIENT_ID_RULE } from '../../core/client-id.js';
import { PRIORITY_LABELS } from '../../core/message.js';
import { identifier, tenantScope } from './schemas.js';

const NO_LINE_BREAKS = /^[^\r\n\0]*$/;
const headerText = (max: number) => z.string().max(max).regex(NO_LINE_BREAKS, 'must not contain CR, LF or NUL');
const mailbox = z
  .string()
  .max(998)
  .refine((text) => parseMailbox(text) !== null, { message: 'invalid address' })
  .describe('an address; "Name <addr>" allowed');
/** One address or a list; the meta sits before the transform, where zod's input-side JSON Schema reads it. */
const mailboxes = (description: string, example: string | string[]) =>
  z
    .union([mailbox, z.array(mailbox)])
    .meta({ description, examples: [example] })
    .transform((value) => (Array.isArray(value) ? value : [value]));
/** The client id becomes the X-Genro-Mail-ID header value (core/client-id.ts). */
export const clientId = z.string().min(1).max(CLIENT_ID_MAX_LENGTH).regex(CLIENT_ID_CHARACTERS, CLIENT_ID_RULE);
const BASE64 = /^(data:[^,]*;base64,)?[A-Za-z0-9+/\s]*={0,2}\s*$/;

const PRIORITY_TEXT = '0 `immediate` (claimed at once, ahead of anything waiting), 1 `high`, 2 `normal`, 3 `low`: strict order between levels, FIFO within one';
export const priority = z.union([z.number().int().min(0).max(3), z.enum(PRIORITY_LABELS)]);
/** The same in a query string, where a number comes as text. */
export const priorityQuery = z.union([z.coerce.number().int().min(0).max(3), z.enum(PRIORITY_LABELS)]);

const attachment = z
  .object({
    filename: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^\r\n\0/\\]+$/, 'a file name without path separators or line breaks')
      .meta({ description: 'The name the recipient sees; no path separators or line breaks.', examples: ['invoice-2025-001.pdf'] }),
    storage_path: z
      .string()
      .min(1)
      .meta({
        description:
          'Where the bytes are, read by `fetch_mode` when the message is sent (not at submission): for `base64` the content itself, base64-encoded (whitespace and a `data:<type>;base64,` prefix allowed; it counts toward the message size limit); ' +
          'for `http_url` an http(s) URL fetched with GET (private addresses refused unless `dispatch.allow_private_attachment_urls`, at most 3 redirects); ' +
          'for `endpoint` an opaque reference of yours, posted as `{"storage_path": "..."}` to the tenant\'s `client_base_url` + `client_attachment_path` with its `client_auth`, which answers the bytes or JSON `{"content": "<base64>"}`. ' +
          'A fetch is bounded by `dispatch.attachment_timeout_seconds` (30) and `dispatch.attachment_max_bytes` (25 MiB); one that fails is retried like a relay deferral, or fails the message when retrying cannot help.',
        examples: ['JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI+PgpzdHJlYW0K'],
      }),
    fetch_mode: z
      .enum(['base64', 'http_url', 'endpoint'])
      .default('endpoint')
      .meta({
        description: 'How `storage_path` is read: `base64` inline content, `http_url` a URL to GET, `endpoint` a reference the client application resolves.',
        examples: ['base64'],
      }),
    mime_type: z
      .string()
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type like application/pdf')
      .nullable()
      .optional()
      .meta({ description: 'The Content-Type of the attachment; null or absent: guessed from the file name.', examples: ['application/pdf'] }),
    content_md5: z
      .string()
      .regex(/^[0-9a-fA-F]{32}$/, '32 hex digits')
      .nullable()
      .optional()
      .meta({
        description: 'MD5 of the bytes, 32 hex digits: fetched bytes that do not match are not sent (the attempt is retried like a deferral).',
        examples: ['9e107d9d372bb6826bd81d3542a419d6'],
      }),
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
    id: clientId.meta({
      description: `Your id of the message: the idempotency key within the tenant (resubmitting an id still waiting replaces it) and the X-Genro-Mail-ID header. ${CLIENT_ID_RULE}.`,
      examples: ['inv-2025-001'],
    }),
    tenant_id: identifier.optional().meta({
      description: 'The tenant: implied by a tenant key; required with the admin token (else rejected with `TENANT_REQUIRED`).',
      examples: ['acme'],
    }),
    account_id: identifier.optional().meta({
      description: "The account that sends it; absent: the tenant's default account (`is_default`, or its only account).",
      examples: ['main'],
    }),
    from: mailbox.meta({ description: 'The From header: an address, `Name <addr>` allowed.', examples: ['ACME Billing <billing@acme.example>'] }),
    to: mailboxes('To recipients: one address or a list, `Name <addr>` allowed. At least one recipient in `to`, `cc` or `bcc`.', [
      'Ann Smith <ann@example.net>',
      'bob@example.org',
    ]).optional(),
    cc: mailboxes('Cc recipients: one address or a list.', 'accounts@example.net').optional(),
    bcc: mailboxes('Bcc recipients (envelope only, not in any header): one address or a list.', ['archive@acme.example']).optional(),
    reply_to: mailbox
      .nullable()
      .optional()
      .meta({ description: 'The Reply-To header: an address, `Name <addr>` allowed.', examples: ['support@acme.example'] }),
    return_path: z
      .string()
      .max(254)
      .refine(isAddrSpec, { message: 'invalid address' })
      .nullable()
      .optional()
      .meta({
        description: 'The envelope sender (SMTP MAIL FROM), where bounces go: a bare address. Absent: the address of `from`.',
        examples: ['bounces@acme.example'],
      }),
    subject: headerText(998)
      .default('')
      .meta({ description: 'The Subject; one line, at most 998 characters. Default empty.', examples: ['Your invoice 2025-001'] }),
    body: z
      .string()
      .nullable()
      .optional()
      .meta({
        description: 'The text body; HTML when `content_type` is `html` and no `html` is given. With `html` too, it is the plain-text alternative.',
        examples: ['Dear Ann,\nyour invoice is attached.'],
      }),
    html: z
      .string()
      .nullable()
      .optional()
      .meta({
        description: 'The HTML body; with `body`, the message carries both as alternatives.',
        examples: ['<p>Dear Ann,<br>your invoice is attached.</p>'],
      }),
    content_type: z
      .enum(['plain', 'html'])
      .default('plain')
      .meta({ description: 'What `body` holds when `html` is absent: `plain` text or `html`. Default `plain`.', examples: ['plain'] }),
    headers: z
      .record(z.string().regex(/^[!-9;-~]{1,76}$/, 'a header name (RFC 5322 ftext)'), headerText(998))
      .optional()
      .meta({
        description:
          'Extra headers by name, one line each. The ones mailproxy writes itself (From, To, Cc, Bcc, Reply-To, Subject, Message-ID, MIME-Version, Content-Type, Content-Transfer-Encoding, X-Genro-Mail-ID) are not taken from here; a `Message-ID` here is used when `message_id` is absent.',
        examples: [{ 'X-Campaign': 'spring-2025', 'List-Unsubscribe': '<mailto:unsubscribe@acme.example>' }],
      }),
    attachments: z
      .array(attachment)
      .max(100)
      .optional()
      .meta({
        description: 'At most 100 files, each fetched when the message is sent, by its `fetch_mode`.',
        examples: [[{ filename: 'hello.txt', storage_path: 'aGVsbG8gd29ybGQK', fetch_mode: 'base64', mime_type: 'text/plain' }]],
      }),
    priority: priority.optional().meta({ description: `${PRIORITY_TEXT}. Absent: \`default_priority\`, else 2.`, examples: ['high'] }),
    deferred_ts: z
      .number()
      .nonnegative()
      .max(32503680000)
      .nullable()
      .optional()
      .meta({
        description: 'Not sent before this instant, epoch seconds (fractions allowed); null or in the past: as soon as possible.',
        examples: [1767225600],
      }),
    batch_code: headerText(128)
      .min(1)
      .refine((code) => code !== '*', { message: '"*" is reserved for the whole tenant' })
      .nullable()
      .optional()
      .meta({
        description:
          'A group of your choice (a campaign, a run), 1-128 characters on one line, not `*` (the whole tenant): `/commands/suspend` and `/commands/activate` act on it.',
        examples: ['newsletter-2025-05'],
      }),
    message_id: z
      .string()
      .max(998)
      .regex(/^<?[^<>\s@]+@[^<>\s@]+>?$/, 'a Message-ID like <local@domain>')
      .nullable()
      .optional()
      .meta({
        description:
          'The Message-ID header, `<local@domain>` (the brackets are added when missing). Absent: the `Message-ID` of `headers`, else one generated on the domain of `from`.',
        examples: ['<inv-2025-001@acme.example>'],
      }),
  })
  .strict()
  .refine((value) => (value.to?.length ?? 0) + (value.cc?.length ?? 0) + (value.bcc?.length ?? 0) > 0, {
    message: 'at least one recipient (to, cc or bcc) is required',
    path: ['to'],
  });

export type MessageItem = z.output<typeof messageItem>;

export const addMessagesBody = z
  .object({
    messages: z.array(z.unknown()).meta({
      description:
        'The messages, at most `http.max_batch_messages` (1000): each validated on its own (the items below), an invalid one rejected without the others.',
      examples: [[{ id: 'inv-2025-001', from: 'billing@acme.example', to: 'ann@example.net', subject: 'Your invoice', body: 'Attached.' }]],
    }),
    default_priority: priority.optional().meta({ description: `The priority of a message that gives none: ${PRIORITY_TEXT}. Absent: 2.`, examples: [2] }),
  })
  .strict();

/**
 * The /add-messages body as documented: the request's shape from `addMessagesBody`, each message as
 * `messageItem` checks it (on its own, after the shape: a bad message is rejected, not the request).
 */
export const addMessagesDocumented = addMessagesBody.extend({
  messages: z.array(messageItem).meta({
    description:
      'The messages, at most `http.max_batch_messages` (1000): each validated on its own, an invalid one rejected (listed in `rejected`) without the others.',
    examples: [[{ id: 'inv-2025-001', from: 'billing@acme.example', to: 'ann@example.net', subject: 'Your invoice', body: 'Attached.' }]],
  }),
});

const idList = (description: string) =>
  z
    .union([
      z.array(clientId),
      z.string().transform((text) =>
        text
          .split(',')
          .map((id) => id.trim())
          .filter((id) => id !== ''),
      ),
    ])
    .meta({ description: `${description}: 1-10000 client ids, a list or comma-separated text.`, examples: [['inv-2025-001', 'inv-2025-002']] })
    .pipe(z.array(clientId).min(1).max(10_000));
const batch = headerText(128)
  .min(1)
  .optional()
  .meta({ description: 'The `batch_code` of the messages; absent or `*`: the whole tenant.', examples: ['newsletter-2025-05'] });
const tenant = () => tenantScope('required');

export const tenantParams = z.object({ tenant_id: tenant() }).strict();
export const batchParams = z.object({ tenant_id: tenant(), batch_code: batch }).strict();
export const deleteIdsParams = z.object({ tenant_id: tenant(), ids: idList('The messages to delete (not one being sent)') }).strict();
export const resendIdsParams = z.object({ tenant_id: tenant(), ids: idList('The messages to send again (sent or failed ones)') }).strict();
export const cleanupParams = z
  .object({
    tenant_id: tenant(),
    older_than_seconds: z.coerce
      .number()
      .int()
      .nonnegative()
      .max(10 * 365 * 86400)
      .meta({
        description: 'Removes the messages whose outcome (and bounce, if any) was reported to the client more than this many seconds ago; at most ten years.',
        examples: [2592000],
      }),
  })
  .strict();
