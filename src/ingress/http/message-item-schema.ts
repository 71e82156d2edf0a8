/**
 * One message of /add-messages, validated on its own: a bad message is rejected with its reason while
 * the others of the request are queued.
 */
import { z } from 'zod';
import { isAddrSpec } from '../../core/index.js';
import { CLIENT_ID_RULE } from '../../core/message/index.js';
import { attachment } from './attachment-schema.js';
import { clientId, headerText, mailbox, mailboxes, PRIORITY_TEXT, priority } from './message-fields.js';
import { identifier } from './schemas.js';

export const messageItem = z
  .object({
    id: clientId.meta({
      description: `Your id of the message: the idempotency key within the tenant (resubmitting an id still waiting replaces it) and the X-Genro-Mail-ID header. ${CLIENT_ID_RULE}.`,
      examples: ['inv-2025-001'],
    }),
    tenant_id: identifier.optional().meta({
      description:
        'The tenant: implied by a tenant key; required with the admin token (else rejected with `TENANT_REQUIRED`).',
      examples: ['acme'],
    }),
    account_id: identifier.optional().meta({
      description:
        "The account that sends it; absent: the tenant's default account (`is_default`, or its only account).",
      examples: ['main'],
    }),
    from: mailbox.meta({
      description: 'The From header: an address, `Name <addr>` allowed.',
      examples: ['ACME Billing <billing@acme.example>'],
    }),
    to: mailboxes(
      'To recipients: one address or a list, `Name <addr>` allowed. At least one recipient in `to`, `cc` or `bcc`.',
      ['Ann Smith <ann@example.net>', 'bob@example.org'],
    ).optional(),
    cc: mailboxes('Cc recipients: one address or a list.', 'accounts@example.net').optional(),
    bcc: mailboxes('Bcc recipients (envelope only, not in any header): one address or a list.', [
      'archive@acme.example',
    ]).optional(),
    reply_to: mailbox
      .nullable()
      .optional()
      .meta({
        description: 'The Reply-To header: an address, `Name <addr>` allowed.',
        examples: ['support@acme.example'],
      }),
    return_path: z
      .string()
      .max(254)
      .refine(isAddrSpec, { message: 'invalid address' })
      .nullable()
      .optional()
      .meta({
        description:
          'The envelope sender (SMTP MAIL FROM), where bounces go: a bare address. Absent: the address of `from`.',
        examples: ['bounces@acme.example'],
      }),
    subject: headerText(998)
      .default('')
      .meta({
        description: 'The Subject; one line, at most 998 characters. Default empty.',
        examples: ['Your invoice 2025-001'],
      }),
    body: z
      .string()
      .nullable()
      .optional()
      .meta({
        description:
          'The text body; HTML when `content_type` is `html` and no `html` is given. With `html` too, it is the plain-text alternative.',
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
      .meta({
        description: 'What `body` holds when `html` is absent: `plain` text or `html`. Default `plain`.',
        examples: ['plain'],
      }),
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
        examples: [
          [{ filename: 'hello.txt', storage_path: 'aGVsbG8gd29ybGQK', fetch_mode: 'base64', mime_type: 'text/plain' }],
        ],
      }),
    offload_attachments_over_bytes: z
      .number()
      .int()
      .min(1)
      .max(1024 ** 3)
      .optional()
      .meta({
        description:
          "Attachments larger than this (bytes) go as download links instead of in the message, whatever the tenant's `attachment_offload.over_bytes`. Needs the tenant's `attachment_offload` (its `base_url`) and a body store; a PEC account relays them whole all the same.",
        examples: [5_000_000],
      }),
    attachment_link_lifetime_seconds: z
      .number()
      .int()
      .min(60)
      .max(10 * 365 * 24 * 3600)
      .optional()
      .meta({
        description:
          "How long this message's download links work once it is sent, at most the daemon's `files.retention_seconds`. Absent: the tenant's.",
        examples: [86_400],
      }),
    relay_whole: z
      .boolean()
      .optional()
      .meta({
        description: "True: every attachment goes in the message, whatever the tenant's `attachment_offload`.",
        examples: [true],
      }),
    priority: priority
      .optional()
      .meta({ description: `${PRIORITY_TEXT}. Absent: \`default_priority\`, else 2.`, examples: ['high'] }),
    deferred_ts: z
      .number()
      .nonnegative()
      .max(32503680000)
      .nullable()
      .optional()
      .meta({
        description:
          'Not sent before this instant, epoch seconds (fractions allowed); null or in the past: as soon as possible.',
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
