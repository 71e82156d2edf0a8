/**
 * The MCP server an agent talks to: the tools (tools.ts, bulk-tool.ts), a message, the queue and
 * the accounts as resources, and operator prompts. Each is answered by an API request made with
 * the caller's own credential (api-call.ts), so it sees and changes what the caller may through
 * the API, nothing more. One server per caller: on the daemon, per request (stateless).
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiAnswer, ApiRequest, CallApi } from './api-call.js';
import { BULK_TOOL, bulkStep, type ConfirmTokens } from './bulk-tool.js';
import { PROMPTS } from './prompts.js';
import { SUMMARY_TOOL, summarise } from './summary-tool.js';
import { TOOLS, type ToolSpec } from './tools.js';

export interface McpServerDeps {
  api: CallApi;
  /** Only the tools that read. */
  readOnly: boolean;
  /** Who is calling (a digest of the credential): a bulk action's confirm token is theirs alone. */
  caller: string;
  tokens: ConfirmTokens;
  now: () => number;
  version: string;
}

/** An API answer as a tool result: the JSON as structured content and as text; a 4xx/5xx is an error result naming its code. */
function resultOf(answer: ApiAnswer, extra: Record<string, unknown> = {}): CallToolResult {
  const body =
    typeof answer.body === 'object' && answer.body !== null
      ? (answer.body as Record<string, unknown>)
      : { answer: answer.body };
  const structured = { ...body, ...extra };
  if (answer.status >= 400) {
    const error = (body.error ?? {}) as { code?: string; message?: string };
    return {
      isError: true,
      content: [{ type: 'text', text: `${error.code ?? answer.status}: ${error.message ?? 'the request failed'}` }],
      structuredContent: structured,
    };
  }
  return { content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }], structuredContent: structured };
}

const annotationsOf = (spec: Pick<ToolSpec, 'title' | 'changes' | 'destructive'>) => ({
  title: spec.title,
  readOnlyHint: !spec.changes,
  destructiveHint: spec.destructive,
  openWorldHint: false,
});

/** A resource's text: the API's JSON answer, or its error. */
async function jsonResource(api: CallApi, uri: URL, request: ApiRequest) {
  const answer = await api(request);
  if (answer.status >= 400) throw new Error(`${uri.href}: ${JSON.stringify(answer.body)}`);
  return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(answer.body, null, 2) }] };
}

function registerTools(server: McpServer, deps: McpServerDeps): void {
  for (const spec of TOOLS) {
    if (deps.readOnly && spec.changes) continue;
    server.registerTool(
      spec.name,
      { title: spec.title, description: spec.description, inputSchema: spec.input, annotations: annotationsOf(spec) },
      async (args: Record<string, unknown>) => resultOf(await deps.api(spec.request(args))),
    );
  }
  server.registerTool(
    SUMMARY_TOOL.name,
    {
      title: SUMMARY_TOOL.title,
      description: SUMMARY_TOOL.description,
      inputSchema: SUMMARY_TOOL.input,
      annotations: annotationsOf(SUMMARY_TOOL),
    },
    async (args: Record<string, unknown>) => resultOf(await summarise(deps.api, args)),
  );
  if (deps.readOnly) return;
  server.registerTool(
    BULK_TOOL.name,
    {
      title: BULK_TOOL.title,
      description: BULK_TOOL.description,
      inputSchema: BULK_TOOL.input,
      annotations: annotationsOf(BULK_TOOL),
    },
    async (args: Record<string, unknown>) => {
      const step = bulkStep(deps.tokens, deps.caller, args, deps.now());
      if ('refused' in step) return { isError: true, content: [{ type: 'text', text: step.refused }] };
      const answer = await deps.api(step.run);
      return step.confirm === null || answer.status >= 400
        ? resultOf(answer)
        : resultOf(answer, { confirm_token: step.confirm });
    },
  );
}

function registerResources(server: McpServer, deps: McpServerDeps): void {
  const { api } = deps;
  const message = (id: unknown, tenant: Record<string, string>, uri: URL) =>
    jsonResource(api, uri, { method: 'GET', path: `/messages/${encodeURIComponent(String(id))}`, query: tenant });
  server.registerResource(
    'message',
    new ResourceTemplate('mailproxy://messages/{id}', { list: undefined }),
    {
      title: 'A message',
      description: 'Its state, timeline and why it waits (a tenant key).',
      mimeType: 'application/json',
    },
    async (uri, variables) => message(variables.id, {}, uri),
  );
  server.registerResource(
    'tenant-message',
    new ResourceTemplate('mailproxy://tenants/{tenant_id}/messages/{id}', { list: undefined }),
    {
      title: "A tenant's message",
      description: 'The same, naming its tenant (the admin token).',
      mimeType: 'application/json',
    },
    async (uri, variables) => message(variables.id, { tenant_id: String(variables.tenant_id) }, uri),
  );
  server.registerResource(
    'queue',
    'mailproxy://queue',
    {
      title: 'The queue',
      description: 'Waiting messages by state and account, throughput, health.',
      mimeType: 'application/json',
    },
    async (uri) => jsonResource(api, uri, { method: 'GET', path: '/status' }),
  );
  server.registerResource(
    'accounts',
    'mailproxy://accounts',
    { title: 'Accounts', description: "The relay accounts' limits, usage and health.", mimeType: 'application/json' },
    async (uri) => jsonResource(api, uri, { method: 'GET', path: '/accounts' }),
  );
}

export function createMcpServer(deps: McpServerDeps): McpServer {
  const server = new McpServer(
    { name: 'mailproxy', version: deps.version },
    {
      instructions:
        'mailproxy relays mail for applications. Read before you act: message_status says why a message waits; ' +
        'tools marked destructive send again or remove; bulk_action counts first and acts only with the token it answers.',
    },
  );
  registerTools(server, deps);
  registerResources(server, deps);
  for (const prompt of PROMPTS)
    server.registerPrompt(
      prompt.name,
      { title: prompt.title, description: prompt.description, argsSchema: prompt.args },
      (args: Record<string, unknown>) => ({
        messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }],
      }),
    );
  return server;
}
