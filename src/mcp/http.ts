/**
 * MCP over streamable HTTP, stateless: every POST gets a fresh server and transport
 * (the SDK's Web-standard transport, JSON responses), acting for the caller the HTTP
 * layer authenticated. GET (a standalone SSE stream) and DELETE (session end) are
 * answered 405: there are no sessions to stream to or end.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { createMcpServer, type McpServerOptions } from './server.js'

/**
 * Answers one MCP request (a Web `Request`) with a Web `Response`.
 * @example
 * app.all('/mcp', (c) => handleMcpRequest(c.req.raw, { backend: servicesBackend(services, caller(c).principal) }))
 */
export async function handleMcpRequest(request: Request, options: McpServerOptions): Promise<Response> {
  if (request.method !== 'POST') {
    return Response.json(
      { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send JSON-RPC messages with POST.' }, id: null },
      { status: 405, headers: { allow: 'POST' } },
    )
  }
  const server = createMcpServer(options)
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await server.connect(transport)
  try {
    return await transport.handleRequest(request)
  } finally {
    await server.close()
  }
}
