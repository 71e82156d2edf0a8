/**
 * The MCP server an agent talks to: the tools (tools.ts, bulk-tool.ts), a message, the queue and
 * the accounts as resources, and operator prompts. Each is answered by an API request made with
 * the caller's own credential (api-call.ts), so it sees and changes what the caller may through
 * the API, nothing more. One server per client session (on the daemon, or a stateless request
 * of its own); a session's server also watches the resources its client subscribed to.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ApiAnswer, CallApi } from './api-call.js';
import { BULK_TOOL, bulkStep, type ConfirmTokens } from './bulk-tool.js';
import type { CallLimit } from './call-limit.js';
import { PROMPTS } from './prompts.js';
import { ResourceWatch, SubscriptionRefused } from './resource-watch.js';
import { registerResources, requestOfUri } from './resources.js';
import { SUMMARY_TOOL, summarise } from './summary-tool.js';
import { TOOLS, type ToolSpec } from './tools.js';

export interface McpServerDeps {
  api: CallApi;
  /** Only the tools that read. */
  readOnly: boolean;
  /** Who is calling (a digest of the credential): a bulk action's confirm token is theirs alone. */
  caller: string;
  tokens: ConfirmTokens;
  /** The caller's tool calls and resource reads a minute (call-limit.ts). */
  limit: CallLimit;
  /** Subscriptions to resources, where the server lives as long as the client's session; null: none. */
  subscriptions: { max: number } | null;
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

/** A refusal of the caller's rate limit, as the API would word it. */
const limited = (retryAfterSeconds: number, perMinute: number): ApiAnswer => ({
  status: 429,
  body: {
    error: {
      code: 'RATE_LIMITED',
      message: `more than ${perMinute} calls a minute: retry in ${retryAfterSeconds} s`,
      details: { retry_after_seconds: retryAfterSeconds },
    },
  },
});

type ToolHandler = (args: Record<string, unknown>) => Promise<CallToolResult>;

function registerTools(server: McpServer, deps: McpServerDeps): void {
  const tool = (
    spec: Pick<ToolSpec, 'name' | 'title' | 'description' | 'input' | 'changes' | 'destructive'>,
    run: ToolHandler,
  ) =>
    server.registerTool(
      spec.name,
      { title: spec.title, description: spec.description, inputSchema: spec.input, annotations: annotationsOf(spec) },
      async (args: Record<string, unknown>) => {
        const wait = deps.limit.take(deps.caller, deps.now());
        return wait > 0 ? resultOf(limited(wait, deps.limit.perMinute)) : run(args);
      },
    );
  for (const spec of TOOLS) {
    if (deps.readOnly && spec.changes) continue;
    tool(spec, async (args) => resultOf(await deps.api(spec.request(args))));
  }
  tool(SUMMARY_TOOL, async (args) => resultOf(await summarise(deps.api, args)));
  if (deps.readOnly) return;
  tool(BULK_TOOL, async (args) => {
    const step = bulkStep(deps.tokens, deps.caller, args, deps.now());
    if ('refused' in step) return { isError: true, content: [{ type: 'text', text: step.refused }] };
    const answer = await deps.api(step.run);
    return step.confirm === null || answer.status >= 400
      ? resultOf(answer)
      : resultOf(answer, { confirm_token: step.confirm });
  });
}

/** `resources/subscribe` and `unsubscribe`, answered by the session's watch. */
function registerSubscriptions(server: McpServer, deps: McpServerDeps): ResourceWatch {
  const watch = new ResourceWatch({
    read: async (uri) => {
      const request = requestOfUri(uri);
      return request === null ? null : deps.api(request);
    },
    notify: (uri) => server.server.sendResourceUpdated({ uri }),
    maxSubscriptions: deps.subscriptions?.max ?? 0,
  });
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    try {
      await watch.subscribe(request.params.uri);
    } catch (error) {
      if (error instanceof SubscriptionRefused) throw new McpError(ErrorCode.InvalidParams, error.message);
      throw error;
    }
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    watch.unsubscribe(request.params.uri);
    return {};
  });
  return watch;
}

export interface McpSessionServer {
  server: McpServer;
  /** What the client subscribed to; null where the server keeps no session (a stateless request). */
  watch: ResourceWatch | null;
}

export function createMcpServer(deps: McpServerDeps): McpSessionServer {
  const server = new McpServer(
    { name: 'mailproxy', version: deps.version },
    {
      instructions:
        'mailproxy relays mail for applications. Read before you act: message_status says why a message waits; ' +
        'tools marked destructive send again or remove; bulk_action counts first and acts only with the token it answers.',
    },
  );
  registerTools(server, deps);
  registerResources(server, deps.api, () => {
    const wait = deps.limit.take(deps.caller, deps.now());
    if (wait > 0) throw new McpError(ErrorCode.InvalidRequest, `RATE_LIMITED: retry in ${wait} s`);
  });
  const watch = deps.subscriptions === null ? null : registerSubscriptions(server, deps);
  for (const prompt of PROMPTS)
    server.registerPrompt(
      prompt.name,
      { title: prompt.title, description: prompt.description, argsSchema: prompt.args },
      (args: Record<string, unknown>) => ({
        messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }],
      }),
    );
  return { server, watch };
}
