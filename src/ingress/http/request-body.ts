/**
 * Request bodies under `http.max_body_bytes`. A declared Content-Length over the
 * limit is refused before a byte is read; a chunked body is counted as it comes.
 *
 * On node's server the bytes are read straight from the IncomingMessage: hono's
 * own reading first builds a WHATWG Request, an AbortController and a
 * ReadableStream over the socket, which cost about a tenth of the main thread
 * when every request carries one message. Elsewhere (app.request in tests, other
 * runtimes) the web Request is read, under the same limit.
 */
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError } from '../../core/app-error.js';
import type { HttpEnv } from './env.js';
import { transportError, type HttpError } from './http-error.js';

const tooLarge = (maxBytes: number): HttpError => transportError('PAYLOAD_TOO_LARGE', 'request body too large', { details: { max_bytes: maxBytes } });

/** Refuses an over-limit declared length at once, and arms the limit for requestBody(). */
export function bodyLimit(maxBytes: number): MiddlewareHandler<HttpEnv> {
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined && Number(declared) > maxBytes) throw tooLarge(maxBytes);
    c.set('maxBodyBytes', maxBytes);
    await next();
  };
}

/** The whole body, in an ArrayBuffer of its own (it may be transferred to a worker). */
export async function requestBody(c: Context<HttpEnv>): Promise<ArrayBuffer> {
  const maxBytes = c.get('maxBodyBytes');
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming !== undefined) return readIncoming(incoming, maxBytes);
  const body = await c.req.arrayBuffer();
  if (body.byteLength > maxBytes) throw tooLarge(maxBytes);
  return body;
}

function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<ArrayBuffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      // The rest is read and dropped so that the 413 can still be answered on this connection.
      incoming.off('data', onData);
      incoming.resume();
      reject(tooLarge(maxBytes));
    };
    incoming.on('data', onData);
    incoming.once('error', reject);
    // A client that goes away mid-body: nothing to answer, but the request must not hang. After
    // 'end' this comes too, and does nothing then (the promise is settled).
    incoming.once('close', () =>
      reject(
        new AppError('VALIDATION_FAILED', 'the request body ended early', {
          details: [{ path: '', message: 'connection closed before the body was complete' }],
        }),
      ),
    );
    incoming.once('end', () => {
      if (size > maxBytes) return;
      const body = new Uint8Array(size);
      let offset = 0;
      for (const chunk of chunks) {
        body.set(chunk, offset);
        offset += chunk.length;
      }
      resolve(body.buffer);
    });
  });
}
