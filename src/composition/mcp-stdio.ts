/**
 * `mailproxy mcp`: the MCP server over stdio is a process of its own, as the daemon is: the CLI
 * starts it through the composition (like `serve`), not by reaching into a room.
 */
export { serveMcpStdio } from '../ingress/mcp/index.js';
