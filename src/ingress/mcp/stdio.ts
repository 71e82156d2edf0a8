/**
 * `mailproxy mcp`: the same tools over stdio, for a desktop client that starts it, talking to a
 * daemon by URL and key as the CLI does. What a tool may do is what the daemon lets that key do.
 */
import { randomBytes, createHash } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { apiOver } from './api-call.js';
import { confirmTokens } from './bulk-tool.js';
import { createMcpServer } from './mcp-server.js';

export interface StdioOptions {
  /** The daemon's API, e.g. http://127.0.0.1:8025. */
  url: string;
  token: string;
  readOnly: boolean;
  version: string;
}

/** Serves until stdin closes; resolves then. */
export async function serveMcpStdio(options: StdioOptions): Promise<void> {
  const server = createMcpServer({
    api: apiOver((request) => fetch(request), options.url, `Bearer ${options.token}`),
    readOnly: options.readOnly,
    caller: createHash('sha256').update(options.token).digest('base64url'),
    tokens: confirmTokens(randomBytes(32)),
    now: Date.now,
    version: options.version,
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
