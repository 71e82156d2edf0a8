/** `mailproxy mcp`: the MCP server over stdio, for a desktop client that starts it (ingress/mcp). */
import { report } from '../cli-error.js';
import type { Command } from '../command.js';
import { resolveConnection } from '../connection.js';
import { serveMcpStdio } from '../../composition/mcp-stdio.js';
import { mailproxyVersion } from '../../runtime/index.js';

export const mcpCommand: Command = {
  name: 'mcp',
  summary: "An MCP server on stdin/stdout for an agent's client, over a daemon's API.",
  notes: `The client starts it and speaks MCP on its stdin and stdout; the tools call the daemon at
--url with --token (a tenant key: that tenant only; the admin token: every tenant), as the CLI does.
Nothing else is written to stdout. --read-only offers only the tools that read.
`,
  verbs: {
    '': {
      usage: '[--read-only]',
      summary: 'serve MCP over stdio until stdin closes',
      options: { 'read-only': { type: 'boolean' } },
      positionals: [0, 0],
      api: true,
      run: async (input) => {
        const connection = resolveConnection(input.values, input.cli.env);
        if (!connection.ok) return report(input.cli.stderr, connection.error);
        await serveMcpStdio({
          url: connection.value.url,
          token: connection.value.token,
          readOnly: input.values['read-only'] === true,
          version: mailproxyVersion(),
        });
        return 0;
      },
    },
  },
};
