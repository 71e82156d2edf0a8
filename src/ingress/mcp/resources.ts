/**
 * The resources an agent can read and subscribe to: a message (by a tenant key, or naming its
 * tenant with the admin token), the queue and the accounts. Each URI is one API request, so a
 * read and the watch behind a subscription (resource-watch.ts) see what the caller may see.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ApiAnswer, ApiRequest, CallApi } from './api-call.js';

const MESSAGE = /^mailproxy:\/\/messages\/([^/?#]+)$/;
const TENANT_MESSAGE = /^mailproxy:\/\/tenants\/([^/?#]+)\/messages\/([^/?#]+)$/;

const messageRequest = (id: string, query: Record<string, string> = {}): ApiRequest => ({
  method: 'GET',
  path: `/messages/${encodeURIComponent(id)}`,
  query,
});

/** The API request that answers a resource URI; null for a URI that names none of ours. */
export function requestOfUri(uri: string): ApiRequest | null {
  if (uri === 'mailproxy://queue') return { method: 'GET', path: '/status' };
  if (uri === 'mailproxy://accounts') return { method: 'GET', path: '/accounts' };
  const own = MESSAGE.exec(uri);
  if (own !== null) return messageRequest(decodeURIComponent(own[1] ?? ''));
  const named = TENANT_MESSAGE.exec(uri);
  if (named !== null)
    return messageRequest(decodeURIComponent(named[2] ?? ''), { tenant_id: decodeURIComponent(named[1] ?? '') });
  return null;
}

/** What a resource reads as: the API's JSON answer. */
export const resourceText = (answer: ApiAnswer): string => JSON.stringify(answer.body, null, 2);

async function read(api: CallApi, uri: URL, beforeRead: () => void) {
  const request = requestOfUri(uri.href);
  if (request === null) throw new Error(`${uri.href}: no such resource`);
  beforeRead();
  const answer = await api(request);
  if (answer.status >= 400) throw new Error(`${uri.href}: ${JSON.stringify(answer.body)}`);
  return { contents: [{ uri: uri.href, mimeType: 'application/json', text: resourceText(answer) }] };
}

/** `beforeRead` may refuse a read by throwing (the caller's rate limit). */
export function registerResources(server: McpServer, api: CallApi, beforeRead: () => void): void {
  const json = { mimeType: 'application/json' };
  server.registerResource(
    'message',
    new ResourceTemplate('mailproxy://messages/{id}', { list: undefined }),
    { title: 'A message', description: 'Its state, timeline and why it waits (a tenant key).', ...json },
    (uri) => read(api, uri, beforeRead),
  );
  server.registerResource(
    'tenant-message',
    new ResourceTemplate('mailproxy://tenants/{tenant_id}/messages/{id}', { list: undefined }),
    { title: "A tenant's message", description: 'The same, naming its tenant (the admin token).', ...json },
    (uri) => read(api, uri, beforeRead),
  );
  server.registerResource(
    'queue',
    'mailproxy://queue',
    { title: 'The queue', description: 'Waiting messages by state and account, throughput, health.', ...json },
    (uri) => read(api, uri, beforeRead),
  );
  server.registerResource(
    'accounts',
    'mailproxy://accounts',
    { title: 'Accounts', description: "The relay accounts' limits, usage and health.", ...json },
    (uri) => read(api, uri, beforeRead),
  );
}
