/**
 * Offloaded attachments' download links (core/message/attachment-offload.ts): public, since the
 * recipient holds no key; the token is the proof. Any wrong token is one answer, 404, after the
 * same work; a link expired or whose message was erased answers 410. A single byte range is
 * served (206), so that a large download can resume; anything else gets the whole file. The file
 * is always an attachment to save, never a page of ours: it may be HTML a stranger wrote.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { AppError } from '../../../core/index.js';
import type { FileDownloads, OpenedFile } from '../../../core/message/index.js';
import type { HttpEnv } from '../env.js';
import { transportError } from '../http-error.js';
import { on, type RouteDoc } from '../route-doc.js';

const token = z.string().meta({
  description: 'The token of the link, as the message carried it.',
  examples: ['q2Nv0u1Zm9vYmFyYmF6cXV4MDEyMzQ1Njc4OWFiY2RlZg'],
});

export const FILE_ROUTES = {
  download: {
    method: 'get',
    path: '/files/{token}',
    tag: 'Files',
    summary: 'Downloads an attachment that was relayed as a link',
    description:
      "What the link in the notice part of a message with offloaded attachments (a tenant's `attachment_offload`) serves: the file's bytes as the client submitted them, with its type and name (`Content-Disposition: attachment`). " +
      'A `Range: bytes=start-end` header (one range) answers 206 with that part; a HEAD answers the headers alone. Each GET of the whole file, or of a range from its first byte, counts as a download and is reported to the client application as a `downloaded` item. ' +
      "A token that names no file (guessed, altered, another daemon's) answers 404; a link that expired, or whose message was erased, answers 410. " +
      'In a fleet sharing its body store any node serves any link: while the node that sent the message does not answer, 503.',
    access: 'public',
    params: { token },
    responses: {
      200: { description: 'the file', contentType: 'application/octet-stream' },
      206: { description: 'the range asked for', contentType: 'application/octet-stream' },
    },
    errors: ['NOT_FOUND', 'GONE', 'RANGE_NOT_SATISFIABLE', 'STORE_UNAVAILABLE', 'FLEET_UNAVAILABLE'],
  },
} as const satisfies Record<string, RouteDoc>;

/** A type as a header may carry it; anything else is served as bytes. */
const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;\s*[\w!#$&^.+-]+=(?:[\w!#$&^.+-]+|"[^"\r\n]*"))*$/;

/** RFC 6266: an ASCII fallback, and the name itself in RFC 8187's encoding. */
function disposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** The one range asked for, as [start, end] inclusive; null: serve the whole file; 'unsatisfiable': past its end. */
export function rangeOf(header: string | undefined, size: number): [number, number] | null | 'unsatisfiable' {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (match === null) return null;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return null;
  if (first === '') {
    // A suffix: the last N bytes.
    const length = Number(last);
    if (length === 0) return 'unsatisfiable';
    return [Math.max(0, size - length), size - 1];
  }
  const start = Number(first);
  if (start >= size) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  return end < start ? null : [start, end];
}

const unknownFile = (): AppError =>
  new AppError('NOT_FOUND', 'no such file', { details: { reason: 'file_link_unknown' } });

function headersOf(c: Context<HttpEnv>, file: OpenedFile): void {
  c.header('Content-Type', MEDIA_TYPE.test(file.contentType) ? file.contentType : 'application/octet-stream');
  c.header('Content-Disposition', disposition(file.filename));
  c.header('Accept-Ranges', 'bytes');
  c.header('ETag', `"${file.sha256}"`);
  // An erased file must not outlive its erasure in a cache.
  c.header('Cache-Control', 'private, no-store');
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Content-Security-Policy', "default-src 'none'; sandbox");
  c.header('Referrer-Policy', 'no-referrer');
}

export function fileRoutes(downloads: FileDownloads): Hono<HttpEnv> {
  const app = new Hono<HttpEnv>();
  on(app, FILE_ROUTES.download, async (c) => {
    const isHead = c.req.method === 'HEAD';
    const rangeHeader = c.req.header('range');
    const answer = await downloads.download(c.req.param('token') ?? '', !isHead && startsAtZero(rangeHeader));
    if (answer.kind === 'unknown') throw unknownFile();
    if (answer.kind === 'gone') throw transportError('GONE', 'this file is no longer available');
    const { file } = answer;
    headersOf(c, file);
    const size = file.content.length;
    const range = rangeOf(rangeHeader, size);
    if (range === 'unsatisfiable') {
      c.header('Content-Range', `bytes */${size}`);
      throw transportError('RANGE_NOT_SATISFIABLE', 'range not satisfiable', { details: { size_bytes: size } });
    }
    const [start, end] = range ?? [0, size - 1];
    if (range !== null) c.header('Content-Range', `bytes ${start}-${end}/${size}`);
    const status = range === null ? 200 : 206;
    // A view of the opened bytes, not a copy (they are the request's own: nothing else holds them).
    const bytes = file.content.subarray(start, end + 1) as Uint8Array<ArrayBuffer>;
    // Said here, so that a HEAD (answered by this handler, its body left out) tells the length too.
    c.header('Content-Length', String(bytes.length));
    return c.body(bytes, status);
  });
  return app;
}

/** A download to count: no range, or one from the first byte (a resumed download is the same download). */
function startsAtZero(header: string | undefined): boolean {
  return header === undefined || /^bytes=0-/.test(header.trim());
}
