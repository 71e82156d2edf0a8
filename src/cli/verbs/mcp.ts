/** `mailproxy mcp`: the MCP server over stdio, for a desktop client that starts it (ingress/mcp). */
import { integerOption } from '../args.js';
import { report } from '../cli-error.js';
import type { Command } from '../command.js';
import { resolveConnection } from '../connection.js';
import { mailproxyVersion } from '../../runtime/index.js';

export const mcpCommand: Command = {
  name: 'mcp',
  summary: "An MCP server on stdin/stdout for an agent's client, over a daemon's API.",
  notes: `The client starts it and speaks MCP on its stdin and stdout; the tools call the daemon at
--url with --token (a tenant key: that tenant only; the admin token: every tenant), as the CLI does.
Nothing else is written to stdout. --read-only offers only the tools that read. Resources the
client subscribes to are read again every --watch-seconds (default 5) to notify their changes.
`,
  verbs: {
    '': {
      usage: '[--read-only] [--watch-seconds N]',
      summary: 'serve MCP over stdio until stdin closes',
      options: { 'read-only': { type: 'boolean' }, 'watch-seconds': { type: 'string' } },
      positionals: [0, 0],
      api: true,
      run: async (input) => {
        const connection = resolveConnection(input.values, input.cli.env);
        if (!connection.ok) return report(input.cli.stderr, connection.error);
        const watch = integerOption(input.values, 'watch-seconds', 1);
        if (!watch.ok) return report(input.cli.stderr, watch.error);
        // Loaded only here: the MCP SDK and the API's schemas would cost every other command's start.
        const { serveMcpStdio } = await import('../../composition/mcp-stdio.js');
        await serveMcpStdio({
          url: connection.value.url,
          token: connection.value.token,
          readOnly: input.values['read-only'] === true,
          watchIntervalMs: (watch.value ?? 5) * 1000,
          version: mailproxyVersion(),
        });
        return 0;
      },
    },
  },
};
