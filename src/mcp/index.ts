/**
 * `knowhub/mcp`: KnowHub as an MCP server on the official SDK — the agent tools,
 * the pack catalog in the activation tool's description, pack guides and files as
 * resources; over stdio (`knowhub mcp`) or streamable HTTP (`/mcp` on the server).
 *
 * @example
 * import { createMcpServer } from 'knowhub/mcp'
 * import { localBackend } from 'knowhub'
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
 * await createMcpServer({ backend: localBackend(hub) }).connect(new StdioServerTransport())
 */
export { PACK_URI_SCHEME, createMcpServer, mcpToolError } from './server.js'
export type { McpServerOptions } from './server.js'
export { handleMcpRequest } from './http.js'
