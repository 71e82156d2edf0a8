/**
 * /mcp on the API's listener: MCP's Streamable HTTP transport, answered as JSON. An initialize
 * opens a session (sessions.ts: subscriptions, and their notifications on a GET stream); a request
 * without a session is served by a server of its own. The caller authenticates on every request as
 * for the API (bearer tenant key or admin token, the same throttle of failures); the tools then
 * call the API's own app in the process with that credential, so each answer is the route's,
 * logged and audited as the route's.
 * Composed at the server's fetch like the console: the API's app and its OpenAPI document stay
 * its own.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { isAppError } from '../../core/index.js';
import type { Logger } from '../../core/index.js';
import type { Authenticator } from '../../core/tenant/index.js';
import { statusOf, tokenOfHeaders, type HttpError } from '../http/index.js';
import { apiOver, type FetchLike } from './api-call.js';
import { confirmTokens } from './bulk-tool.js';
import { callLimit } from './call-limit.js';
import { createMcpServer } from './mcp-server.js';
import { startWatchLoop } from './resource-watch.js';
import { countedStream, McpSessions } from './sessions.js';

const MCP_PATH = '/mcp';

export type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

export interface McpEndpointDeps {
  readOnly: boolean;
  authenticator: Authenticator;
  /** http.max_body_bytes: a JSON-RPC request is read under the API's limit. */
  maxBodyBytes: number;
  /** Tool calls and resource reads a caller may make a minute; 0: no limit. */
  callsPerMinute: number;
  /** How often the resources sessions subscribed to are read again. */
  watchIntervalMs: number;
  /** Sessions this node keeps at once. */
  maxSessions: number;
  now: () => number;
  log: Logger;
  version: string;
}

/** Whether a request's URL is /mcp, without building a URL object for every API request that passes by. */
function isMcp(url: string): boolean {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  if (pathStart < 0 || !url.startsWith(MCP_PATH, pathStart)) return false;
  const after = url[pathStart + MCP_PATH.length];
  return after === undefined || after === '?';
}

/** The origin the in-process requests are addressed to: only their path reaches the API's app. */
const IN_PROCESS = 'http://mailproxy.internal';

const errorAnswer = (code: HttpError['code'], message: string, status?: number): Response =>
  Response.json({ error: { code, message, details: null } }, { status: status ?? statusOf(code) });

/** The body under `limit`, counted as it arrives; null past it. */
async function boundedText(request: Request, limit: number): Promise<string | null> {
  if (request.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The SDK's answer to a session this node does not hold (the client then initializes again). */
const sessionNotFound = (): Response =>
  Response.json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }, { status: 404 });

/** Subscriptions one session may hold: each is read again every watch interval. */
const MAX_SUBSCRIPTIONS = 32;
/** A session with no request and no stream open for this long is closed. */
const SESSION_IDLE_MS = 30 * 60_000;

/** The body as JSON-RPC, or the error to answer instead. */
async function jsonBody(request: Request, limit: number): Promise<{ parsed: unknown } | Response> {
  const text = await boundedText(request, limit);
  if (text === null) return errorAnswer('PAYLOAD_TOO_LARGE', 'request body too large');
  try {
    return { parsed: JSON.parse(text) };
  } catch {
    return errorAnswer('INVALID_JSON', 'the body is not JSON');
  }
}

interface Admitted {
  token: string | null;
  /** A digest of the credential: who a session and a confirm token belong to. */
  caller: string;
  parsedBody: unknown;
}

/** The caller authenticated as for the API (`Authorization: Bearer …` or `X-API-Token`, on every request) and a POST's JSON read; or the error to answer. */
async function admit(request: Request, env: unknown, deps: McpEndpointDeps): Promise<Admitted | Response> {
  const token = tokenOfHeaders((name) => request.headers.get(name));
  const client = (env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.remoteAddress ?? 'unknown';
  try {
    deps.authenticator.authenticate(token, client);
  } catch (error) {
    if (isAppError(error)) return errorAnswer(error.code as HttpError['code'], error.message);
    throw error;
  }
  const caller = createHash('sha256')
    .update(token ?? '')
    .digest('base64url');
  if (request.method !== 'POST') return { token, caller, parsedBody: undefined };
  const body = await jsonBody(request, deps.maxBodyBytes);
  return body instanceof Response ? body : { token, caller, parsedBody: body.parsed };
}

export function withMcp(front: { fetch: FetchHandler }, api: { fetch: FetchHandler }, deps: McpEndpointDeps) {
  // The bulk tool's confirm tokens: one key for the daemon's life, so a dry run and its confirmation may come apart.
  const tokens = confirmTokens(randomBytes(32));
  const limit = callLimit(deps.callsPerMinute);
  const inProcess: FetchLike = (request) => api.fetch(request, {});
  const sessions = new McpSessions({ idleMs: SESSION_IDLE_MS, max: deps.maxSessions, now: deps.now });

  const serverFor = (token: string | null, caller: string, subscriptions: boolean) =>
    createMcpServer({
      api: apiOver(inProcess, IN_PROCESS, `Bearer ${token ?? ''}`),
      readOnly: deps.readOnly,
      caller,
      tokens,
      limit,
      subscriptions: subscriptions ? { max: MAX_SUBSCRIPTIONS } : null,
      now: deps.now,
      version: deps.version,
    });

  /** An initialize: a session of its own, kept once the transport has given it an id. */
  const openSession = async (request: Request, parsedBody: unknown, token: string | null, caller: string) => {
    const served = serverFor(token, caller, true);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomBytes(24).toString('base64url'),
      enableJsonResponse: true,
      onsessioninitialized: (id) => sessions.add({ id, caller, served, transport, lastSeenAt: deps.now(), streams: 0 }),
      onsessionclosed: (id) => sessions.forget(id),
    });
    await served.server.connect(transport);
    const response = await transport.handleRequest(request, { parsedBody });
    if (transport.sessionId === undefined) await served.server.close();
    return response;
  };

  /** Any other request without a session: a server for it alone, as before sessions. */
  const stateless = async (request: Request, parsedBody: unknown, token: string | null, caller: string) => {
    const served = serverFor(token, caller, false);
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    try {
      await served.server.connect(transport);
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await served.server.close();
    }
  };

  const serve = async (request: Request, env: unknown): Promise<Response> => {
    const sessionId = request.headers.get('mcp-session-id');
    if (request.method !== 'POST' && sessionId === null)
      return errorAnswer('METHOD_NOT_ALLOWED', 'GET and DELETE /mcp need the Mcp-Session-Id of a session', 405);
    const admitted = await admit(request, env, deps);
    if (admitted instanceof Response) return admitted;
    const { token, caller, parsedBody } = admitted;
    if (sessionId !== null) {
      const session = sessions.find(sessionId, caller);
      if (session === null) return sessionNotFound();
      return countedStream(session, await session.transport.handleRequest(request, { parsedBody }));
    }
    return isInitializeRequest(parsedBody)
      ? openSession(request, parsedBody, token, caller)
      : stateless(request, parsedBody, token, caller);
  };

  // Reads the sessions' subscriptions again, and closes the idle ones.
  const watching = startWatchLoop(() => sessions.tick(), deps.watchIntervalMs, deps.log, { now: deps.now });

  return {
    fetch: (request: Request, env?: unknown): Response | Promise<Response> =>
      isMcp(request.url) ? serve(request, env) : front.fetch(request, env),
    /** Reads every session's subscriptions again and closes the idle ones (what the timer runs). */
    tick: () => sessions.tick(),
    /** Ends every session and its stream: the daemon is stopping. */
    close: async (): Promise<void> => {
      await watching.stop();
      await sessions.closeAll();
    },
  };
}
