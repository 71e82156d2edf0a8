/**
 * Posts a report to a client over HTTP(S) with Node's fetch (undici: pooled
 * keep-alive connections). Every way a post can fail becomes a ClientReply, so
 * the loop never sees an exception from the network.
 */
import { interpretReply, type ClientReply, type ReportTarget, type ReportTransport } from '../core/report/index.js';
import type { ClientAuth } from '../core/tenant/index.js';

/** More than any acknowledgement needs; a client cannot make us buffer more. */
const MAX_REPLY_BYTES = 64 * 1024;

function authorization(auth: ClientAuth | null): Record<string, string> {
  if (auth === null || auth.method === 'none') return {};
  if (auth.method === 'bearer') return { authorization: `Bearer ${auth.token}` };
  return { authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`, 'utf8').toString('base64')}` };
}

async function readCapped(response: Response): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > MAX_REPLY_BYTES) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const failed = (code: 'timeout' | 'connection', message: string): ClientReply => ({
  ok: false,
  failure: { code, message },
});

export function createHttpReportTransport(options: { userAgent: string }): ReportTransport {
  return {
    async post(
      target: ReportTarget,
      body: string,
      headers: Record<string, string>,
      signal: AbortSignal,
    ): Promise<ClientReply> {
      try {
        const response = await fetch(target.url, {
          method: 'POST',
          body,
          // A redirect is answered as a failure: reports and credentials go only where the operator said.
          redirect: 'manual',
          signal,
          headers: {
            'content-type': 'application/json',
            'user-agent': options.userAgent,
            ...authorization(target.auth),
            ...headers,
          },
        });
        return { ...interpretReply(response.status, await readCapped(response)), httpStatus: response.status };
      } catch (error) {
        if (signal.aborted) {
          const reason: unknown = signal.reason;
          return failed(
            'timeout',
            reason instanceof Error && reason.name === 'TimeoutError'
              ? 'the client did not answer in time'
              : 'the round was stopped',
          );
        }
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        return failed('connection', cause?.code ?? cause?.message ?? (error as Error).message);
      }
    },
  };
}
