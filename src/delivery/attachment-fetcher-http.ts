/**
 * One HTTP exchange for the attachment fetcher: no pooling, no redirects followed,
 * a deadline (abort signal) and a hard cap on the body size. Failures become
 * AppError ATTACHMENT_UNAVAILABLE naming the attachment.
 */
import http from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import https from 'node:https';
import { AppError, errorText } from '../core/index.js';
import { FORBIDDEN_ADDRESS, type GuardedLookup } from './url-guard.js';

export interface HttpExchange {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: Buffer | null;
  /** Aborts the exchange when the fetch's deadline passes. */
  signal: AbortSignal;
  maxBytes: number;
  /** Names the attachment in errors. */
  filename: string;
  /** Pins the connection to a checked address; absent = the system resolver. */
  lookup?: GuardedLookup | undefined;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export function attachmentUnavailable(
  filename: string,
  cause: string,
  transient: boolean,
  extra: Record<string, unknown> = {},
  error?: unknown,
): AppError {
  return new AppError('ATTACHMENT_UNAVAILABLE', `attachment ${filename} unavailable: ${cause}`, {
    transient,
    details: { filename, ...extra },
    cause: error,
  });
}

function transportError(error: unknown, exchange: HttpExchange): AppError {
  if (error instanceof AppError) return error;
  if (exchange.signal.aborted) return attachmentUnavailable(exchange.filename, 'timed out', true, {}, error);
  const code = (error as NodeJS.ErrnoException).code;
  const reason = errorText(error);
  // A refusal by the SSRF guard will not change on retry.
  return attachmentUnavailable(
    exchange.filename,
    reason,
    code !== FORBIDDEN_ADDRESS,
    code === undefined ? {} : { errorCode: code },
  );
}

function tooLarge(exchange: HttpExchange): AppError {
  return attachmentUnavailable(exchange.filename, `larger than ${exchange.maxBytes} bytes`, false, {
    maxBytes: exchange.maxBytes,
  });
}

function readCapped(response: IncomingMessage, exchange: HttpExchange): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (Number(response.headers['content-length'] ?? 0) > exchange.maxBytes) {
      response.destroy();
      return reject(tooLarge(exchange));
    }
    const chunks: Buffer[] = [];
    let total = 0;
    response.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total <= exchange.maxBytes) return void chunks.push(chunk);
      response.destroy();
      reject(tooLarge(exchange));
    });
    response.on('end', () => resolve(Buffer.concat(chunks)));
    response.on('error', (error) => reject(transportError(error, exchange)));
    // A connection closed mid-body ends neither with 'end' nor always with 'error'.
    response.on('close', () => {
      if (!response.complete) reject(transportError(new Error('connection closed before the body ended'), exchange));
    });
  });
}

/** Sends one request and reads the whole (capped) answer, whatever its status. */
export function exchangeHttp(exchange: HttpExchange): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const client = exchange.url.protocol === 'https:' ? https : http;
    const headers =
      exchange.body === null
        ? exchange.headers
        : { ...exchange.headers, 'content-length': String(exchange.body.length) };
    // No agent: a pooled socket could have been connected without the guard.
    const request = client.request(
      exchange.url,
      {
        method: exchange.method,
        headers,
        signal: exchange.signal,
        agent: false,
        ...(exchange.lookup ? { lookup: exchange.lookup } : {}),
      },
      (response) => {
        readCapped(response, exchange).then(
          (body) => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
          reject,
        );
      },
    );
    request.on('error', (error) => reject(transportError(error, exchange)));
    request.end(exchange.body ?? undefined);
  });
}
