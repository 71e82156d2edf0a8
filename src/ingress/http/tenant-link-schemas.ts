/**
 * The parts of a tenant's settings that make links recipients follow: the daemon's public URL
 * under which its one-click unsubscribe and attachment download links are made.
 */
import { z } from 'zod';

export const httpUrl = z
  .string()
  .max(2048)
  .refine(
    (text) => {
      try {
        const url = new URL(text);
        return (
          (url.protocol === 'http:' || url.protocol === 'https:') &&
          url.username === '' &&
          url.password === '' &&
          url.search === '' &&
          url.hash === ''
        );
      } catch {
        return false;
      }
    },
    { message: 'must be an http(s) URL without credentials, query or fragment' },
  )
  .describe('an http(s) URL without credentials, query or fragment');

export const listUnsubscribe = z.object({
  base_url: httpUrl.meta({
    description:
      "The daemon's public https URL as recipients' mailbox providers reach it (its `/unsubscribe/{token}` is public).",
    examples: ['https://mail.example.com'],
  }),
  mailto: z
    .string()
    .max(254)
    .nullable()
    .optional()
    .meta({
      description:
        'An address for the `mailto:` form beside the link (the tenant reads what arrives there); absent or null: none.',
      examples: ['unsubscribe@acme.example'],
    }),
  scope: z
    .enum(['all', 'batches'])
    .optional()
    .meta({
      description:
        '`all` (the default): every message to a single recipient; `batches`: only mail with a `batch_code` (newsletters, campaigns).',
      examples: ['batches'],
    }),
});
export const attachmentOffload = z.object({
  base_url: httpUrl.meta({
    description:
      "The daemon's public URL as recipients reach it (its `/files/{token}` is public); https unless the recipients are on a private network.",
    examples: ['https://mail.example.com'],
  }),
  over_bytes: z
    .number()
    .int()
    .min(1)
    .max(1024 ** 3)
    .nullable()
    .optional()
    .meta({
      description:
        'Attachments larger than this (bytes) go as download links; absent or null: only those of messages that set `offload_attachments_over_bytes`.',
      examples: [5_000_000],
    }),
  link_lifetime_seconds: z
    .number()
    .int()
    .min(60)
    .max(10 * 365 * 24 * 3600)
    .nullable()
    .optional()
    .meta({
      description:
        "How long a link works once the message is sent, at most the daemon's `files.retention_seconds` (its default).",
      examples: [604_800],
    }),
});
