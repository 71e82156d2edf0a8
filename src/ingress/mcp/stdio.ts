/**
 * `mailproxy mcp`: the same tools over stdio, for a desktop client that starts it, talking to a
 * daemon by URL and key as the CLI does. What a tool may do is what the daemon lets that key do.
 */
import { randomBytes, createHash } from 'node:crypto';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { apiOver } from './api-call.js';
import { confirmTokens } from './bulk-tool.js';
import { createLogger } from '../../runtime/index.js';
import { callLimit } from './call-limit.js';
import { createMcpServer } from './mcp-server.js';
import { startWatchLoop } from './resource-watch.js';

const MAX_SUBSCRIPTIONS = 32;
/** The agent's calls a minute, as `[mcp] calls_per_minute`'s default on the daemon. */
const CALLS_PER_MINUTE = 120;

export interface StdioOptions {
  /** The daemon's API, e.g. http://127.0.0.1:8025. */
  url: string;
  token: string;
  readOnly: boolean;
  /** How often subscribed resources are read again: each read is a request to the daemon. */
  watchIntervalMs: number;
  version: string;
}

/** Serves until stdin closes; resolves then. */
export async function serveMcpStdio(options: StdioOptions): Promise<void> {
  const { server, watch } = createMcpServer({
    api: apiOver((request) => fetch(request), options.url, `Bearer ${options.token}`),
    readOnly: options.readOnly,
    caller: createHash('sha256').update(options.token).digest('base64url'),
    tokens: confirmTokens(randomBytes(32)),
    limit: callLimit(CALLS_PER_MINUTE),
    subscriptions: { max: MAX_SUBSCRIPTIONS },
    now: Date.now,
    version: options.version,
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.connect(transport);
  // stdout is the protocol's: a failed watch is told on stderr.
  const stderr = createLogger({ level: 'warn', destination: process.stderr });
  const watching = startWatchLoop(async () => watch?.tick(), options.watchIntervalMs, stderr);
  await closed;
  await watching.stop();
  await server.close();
}
