/**
 * POST /mcp on the API's listener: MCP's Streamable HTTP transport, stateless (each request a
 * server of its own, answered as JSON). The caller authenticates as for the API (bearer tenant key
 * or admin token, the same throttle of failures); the tools then call the API's own app in the
 * process with that credential, so each answer is the route's, logged and audited as the route's.
 * Composed at the server's fetch like the console: the API's app and its OpenAPI document stay
 * its own.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isAppError } from '../../core/index.js';
import type { Authenticator } from '../../core/tenant/index.js';
import { statusOf, tokenOfHeaders, type HttpError } from '../http/index.js';
import { apiOver, type FetchLike } from './api-call.js';
import { confirmTokens } from './bulk-tool.js';
import { createMcpServer } from './mcp-server.js';

const MCP_PATH = '/mcp';

export type FetchHandler = (request: Request, env?: unknown) => Response | Promise<Response>;

export interface McpEndpointDeps {
  readOnly: boolean;
  authenticator: Authenticator;
  /** http.max_body_bytes: a JSON-RPC request is read under the API's limit. */
  maxBodyBytes: number;
  now: () => number;
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

export function withMcp(front: { fetch: FetchHandler }, api: { fetch: FetchHandler }, deps: McpEndpointDeps) {
  // The bulk tool's confirm tokens: one key for the daemon's life, so a dry run and its confirmation may come apart.
  const tokens = confirmTokens(randomBytes(32));
  const inProcess: FetchLike = (request) => api.fetch(request, {});

  const serve = async (request: Request, env: unknown): Promise<Response> => {
    if (request.method !== 'POST')
      return errorAnswer('METHOD_NOT_ALLOWED', 'POST JSON-RPC to /mcp (this server keeps no sessions or streams)', 405);
    // The credential as the API takes it: `Authorization: Bearer …`, or `X-API-Token`.
    const token = tokenOfHeaders((name) => request.headers.get(name));
    const client = (env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket.remoteAddress ?? 'unknown';
    try {
      deps.authenticator.authenticate(token, client);
    } catch (error) {
      if (isAppError(error)) return errorAnswer(error.code as HttpError['code'], error.message);
      throw error;
    }
    const text = await boundedText(request, deps.maxBodyBytes);
    if (text === null) return errorAnswer('PAYLOAD_TOO_LARGE', 'request body too large');
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(text);
    } catch {
      return errorAnswer('INVALID_JSON', 'the body is not JSON');
    }
    const server = createMcpServer({
      api: apiOver(inProcess, IN_PROCESS, `Bearer ${token ?? ''}`),
      readOnly: deps.readOnly,
      caller: createHash('sha256')
        .update(token ?? '')
        .digest('base64url'),
      tokens,
      now: deps.now,
      version: deps.version,
    });
    // No session id generator: stateless, each request whole in itself.
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await server.close();
    }
  };

  return {
    fetch: (request: Request, env?: unknown): Response | Promise<Response> =>
      isMcp(request.url) ? serve(request, env) : front.fetch(request, env),
  };
}
