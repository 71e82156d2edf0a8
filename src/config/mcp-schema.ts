/** The configuration's [mcp] section: the MCP server for agents (ingress/mcp). */
import { z } from 'zod';

export const mcpSection = z
  .object({
    // The MCP server at POST /mcp (agents as clients, with the API's keys and isolation); off by default.
    enabled: z.boolean().default(false),
    // Only the tools that read: nothing an agent does through it sends, changes or deletes.
    read_only: z.boolean().default(false),
  })
  .strict()
  .prefault({});
