/**
 * An attachment of a submitted message: where its bytes are and how they are read when the message
 * is sent. Only the reference is checked here (valid base64, an http(s) URL); the bytes are fetched later.
 */
import { z } from 'zod';

const BASE64 = /^(data:[^,]*;base64,)?[A-Za-z0-9+/\s]*={0,2}\s*$/;

export const attachment = z
  .object({
    filename: z
      .string()
      .min(1)
      .max(255)
      .regex(/^[^\r\n\0/\\]+$/, 'a file name without path separators or line breaks')
      .meta({
        description: 'The name the recipient sees; no path separators or line breaks.',
        examples: ['invoice-2025-001.pdf'],
      }),
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
        description:
          'How `storage_path` is read: `base64` inline content, `http_url` a URL to GET, `endpoint` a reference the client application resolves.',
        examples: ['base64'],
      }),
    mime_type: z
      .string()
      .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type like application/pdf')
      .nullable()
      .optional()
      .meta({
        description: 'The Content-Type of the attachment; null or absent: guessed from the file name.',
        examples: ['application/pdf'],
      }),
    content_md5: z
      .string()
      .regex(/^[0-9a-fA-F]{32}$/, '32 hex digits')
      .nullable()
      .optional()
      .meta({
        description:
          'MD5 of the bytes, 32 hex digits: fetched bytes that do not match are not sent (the attempt is retried like a deferral).',
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
