/** The face of src/ingress/mcp: the MCP server on the daemon (POST /mcp) and over stdio (`mailproxy mcp`). */
export { withMcp } from './endpoint.js';
export { serveMcpStdio } from './stdio.js';
