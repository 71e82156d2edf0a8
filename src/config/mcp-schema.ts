/** The configuration's [mcp] section: the MCP server for agents (ingress/mcp). */
import { z } from 'zod';

export const mcpSection = z
  .object({
    // The MCP server at POST /mcp (agents as clients, with the API's keys and isolation); off by default.
    enabled: z.boolean().default(false),
    // Only the tools that read: nothing an agent does through it sends, changes or deletes.
    read_only: z.boolean().default(false),
    // Tool calls and resource reads one credential may make a minute (a burst of that many, then
    // evenly); past it a tool answers RATE_LIMITED with the seconds to wait. 0: no limit.
    calls_per_minute: z.number().int().min(0).max(100_000).default(120),
    // How often the resources a session subscribed to are read again, to notify their changes.
    watch_interval_seconds: z.number().min(0.1).max(3600).default(5),
    // Sessions (clients that initialized) one node keeps; past it the least recently used is closed.
    max_sessions: z.number().int().min(1).max(10_000).default(100),
  })
  .strict()
  .prefault({});
