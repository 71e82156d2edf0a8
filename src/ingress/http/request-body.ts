/**
 * The one reader of request bodies, under a limit armed per request by
 * bodyLimit(): `http.max_body_bytes` for the API, `webhooks.max_body_bytes` for
 * provider webhooks, the console's form limit for its forms. A declared
 * Content-Length over the limit is refused before a byte is read; a chunked
 * body is counted as it comes, and refused at the first byte over. No route
 * reads a body any other way (test/security/body-reads.test.ts fails on one).
 *
 * On node's server the bytes are read straight from the IncomingMessage.
 * node-server's own arrayBuffer() reads them so too, but under no limit, and
 * hono's bodyLimit() counts a chunked body through a WHATWG ReadableStream over
 * the socket, a cost paid by every request when each carries one message.
 * Elsewhere (app.request in tests, other runtimes) the web Request is read,
 * under the same limit.
 */
import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { AppError } from '../../core/index.js';
import { transportError, type HttpError } from './http-error.js';

/** The per-request variable a hono app needs to read bodies: its limit. */
export interface BodyLimitEnv {
  Variables: { maxBodyBytes: number };
}

const tooLarge = (maxBytes: number): HttpError =>
  transportError('PAYLOAD_TOO_LARGE', 'request body too large', { details: { max_bytes: maxBytes } });

/** Refuses an over-limit declared length at once, and arms the limit for requestBody(). */
export function bodyLimit<E extends BodyLimitEnv>(maxBytes: number): MiddlewareHandler<E> {
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && c.req.header('transfer-encoding') === undefined && Number(declared) > maxBytes)
      throw tooLarge(maxBytes);
    (c as unknown as Context<BodyLimitEnv>).set('maxBodyBytes', maxBytes);
    await next();
  };
}

/** The whole body, in an ArrayBuffer of its own (it may be transferred to a worker). */
export async function requestBody<E extends BodyLimitEnv>(c: Context<E>): Promise<ArrayBuffer> {
  const maxBytes: unknown = (c as unknown as Context<BodyLimitEnv>).get('maxBodyBytes');
  // A bug, not a client's fault: without an armed limit the read would have none.
  if (typeof maxBytes !== 'number') throw new Error('requestBody() called on a route that bodyLimit() does not cover');
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming !== undefined) return readIncoming(incoming, maxBytes);
  return readWeb(c.req.raw, maxBytes);
}

/** A web Request's body, counted chunk by chunk as it arrives. */
async function readWeb(request: Request, maxBytes: number): Promise<ArrayBuffer> {
  if (request.body === null) return new ArrayBuffer(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return joined(chunks, size);
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
      // What was kept goes now; the rest is read and dropped so that the 413 can still be answered
      // on this connection, and the next request read after it.
      chunks.length = 0;
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
      resolve(joined(chunks, size));
    });
  });
}

function joined(chunks: readonly Uint8Array[], size: number): ArrayBuffer {
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body.buffer;
}
