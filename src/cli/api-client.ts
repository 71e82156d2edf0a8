/**
 * The daemon's HTTP API over the global fetch. Every failure comes back as a
 * CliError with a message the operator can act on: nothing listening, a token
 * refused, an API error as `code: message`, something else at that URL.
 */
import { cliError, failed, ok, type CliError, type Result } from './cli-error.js';
import type { Connection } from './connection.js';

export type Query = Record<string, string | number | boolean | undefined>;

export interface ApiClient {
  url: string;
  /**
   * A JSON request; the parsed JSON body of a 2xx answer, taken to be the answer `A`
   * the route's view schema describes (answers.ts): not parsed again here.
   */
  request<A>(method: string, path: string, options?: { query?: Query; body?: unknown }): Promise<Result<A>>;
  /** A request whose 2xx body is read by the caller (a backup), without a time limit. */
  stream(path: string): Promise<Result<Response>>;
}

/** Ordinary requests answer within this; a backup streams as long as it takes. */
const REQUEST_TIMEOUT_MS = 30_000;
/** Socket errors that mean "nothing (usable) listens there". */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

export function createApiClient(connection: Connection): ApiClient {
  const { url, token } = connection;
  const send = async (
    method: string,
    path: string,
    init: { query?: Query; body?: unknown; timeoutMs?: number },
  ): Promise<Result<Response>> => {
    const target = new URL(url + path);
    for (const [name, value] of Object.entries(init.query ?? {}))
      if (value !== undefined) target.searchParams.set(name, String(value));
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    try {
      return ok(
        await fetch(target, {
          method,
          headers,
          ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
          ...(init.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(init.timeoutMs) }),
        }),
      );
    } catch (error) {
      return failed(transportError(error, url));
    }
  };

  return {
    url,
    async request<A>(
      method: string,
      path: string,
      options: { query?: Query; body?: unknown } = {},
    ): Promise<Result<A>> {
      const sent = await send(method, path, { ...options, timeoutMs: REQUEST_TIMEOUT_MS });
      if (!sent.ok) return sent;
      const response = sent.value;
      const text = await response.text();
      const body = parseJson(text);
      if (response.ok && body !== undefined) return ok(body as A);
      return failed(httpError(response, body, connection));
    },
    async stream(path) {
      const sent = await send('GET', path, {});
      if (!sent.ok || sent.value.ok) return sent;
      return failed(httpError(sent.value, parseJson(await sent.value.text()), connection));
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function transportError(error: unknown, url: string): CliError {
  if ((error as { name?: string }).name === 'TimeoutError')
    return cliError('UNREACHABLE', `mailproxy at ${url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
  // fetch wraps the socket's error: TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }).
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (error as { code?: string }).code;
  if (code !== undefined && UNREACHABLE.has(code))
    return cliError('UNREACHABLE', `cannot reach mailproxy at ${url}: is it running? (${code})`);
  return cliError('UNREACHABLE', `cannot reach mailproxy at ${url}: ${cause?.message ?? (error as Error).message}`);
}

/** An answer that is not a 2xx: the API's error envelope, or a word on what else answered. */
function httpError(response: Response, body: unknown, connection: Connection): CliError {
  const envelope = errorEnvelope(body);
  if (envelope === undefined) {
    return cliError(
      'BAD_RESPONSE',
      `${connection.url} answered HTTP ${response.status} with something that is not mailproxy's API: is the URL (${connection.urlSource}) right?`,
    );
  }
  const said = `${envelope.code}: ${envelope.message}`;
  if (response.status === 401) {
    return cliError(
      'UNAUTHORIZED',
      `mailproxy at ${connection.url} refused the token from ${connection.tokenSource} (${said}): pass the admin token with --token or MAILPROXY_TOKEN`,
    );
  }
  if (response.status === 403)
    return cliError('FORBIDDEN', `${said} (the token from ${connection.tokenSource} is not the admin token)`);
  return cliError('API_ERROR', said, detailLines(envelope.details));
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** The API's `{"error":{"code","message","details"}}`, when the body is one. */
function errorEnvelope(body: unknown): { code: string; message: string; details: unknown } | undefined {
  const envelope = isRecord(body) ? body.error : undefined;
  if (!isRecord(envelope) || typeof envelope.code !== 'string' || typeof envelope.message !== 'string')
    return undefined;
  return { code: envelope.code, message: envelope.message, details: envelope.details };
}

/** A field problem of a VALIDATION_FAILED answer: `{path?, message}`. */
const isProblem = (item: unknown): item is { path?: string; message: string } =>
  isRecord(item) && typeof item.message === 'string';

/** Field problems (`[{path, message}]`) one a line; other details as compact JSON. */
function detailLines(details: unknown): string[] | undefined {
  if (details === null || details === undefined) return undefined;
  if (Array.isArray(details) && details.every(isProblem)) {
    return details.map((item) => (item.path ? `${item.path}: ${item.message}` : item.message));
  }
  return [JSON.stringify(details)];
}
