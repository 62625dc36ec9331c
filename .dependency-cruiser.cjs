/**
 * KnowHub's layers (../shared/DESIGN.md), checked on every `npm run lint`:
 *
 *   core  ←  store | embed | llm  ←  services (knowledge, resources, packs, agent, auth, eval, admin, users)
 *         ←  tools | client (ports and adapters over the services' shapes)  ←  app (the composition root)
 *         ←  entry points (server, mcp, cli)
 *
 * ai-sdk (the `knowhub/ai-sdk` entry) sits over tools and client, and nothing imports it: it alone
 * imports the AI SDK, an optional peer dependency.
 *
 * Dependencies point downward only, and the module graph has no cycle. The entry points reach
 * the database through the services and app/, never src/store directly (the dashboard too: its
 * overview, sessions, tokens and reveals are services that app/open.ts builds). app/ only wires:
 * it writes no SQL and checks no permission (those are the store's and the services'). The
 * dashboard's browser code (web/) is checked too: no cycle, and nothing of src/ (it talks to the
 * server over HTTP only).
 */
const SERVICES = 'knowledge|resources|packs|agent|auth|eval|admin|users'
const ENTRY = 'server|mcp|cli'

/** A rule forbidding imports from `from` (a folder pattern under src/) into `to`. */
const layer = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^src/(${from})/` },
  to: { path: `^src/(${to})/` },
})

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'The module graph has no cycle: split the shared part into its own module.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    layer(
      'core-is-the-bottom',
      'core (types, schemas, errors, text analysis) imports nothing else of KnowHub.',
      'core',
      `store|embed|llm|${SERVICES}|tools|client|app|${ENTRY}`,
    ),
    {
      name: 'providers-stand-alone',
      comment: 'store, embed and llm depend on core only (and on their own folder): services combine them.',
      severity: 'error',
      from: { path: '^src/(store|embed|llm)/' },
      to: { path: `^src/(store|embed|llm|${SERVICES}|tools|client|app|${ENTRY})/`, pathNot: '^src/$1/' },
    },
    layer(
      'services-below-ports',
      'Services never reach up to the tools, the client, the composition root or an entry point.',
      SERVICES,
      `tools|client|app|${ENTRY}`,
    ),
    layer(
      'tools-over-a-port',
      'The agent tools run over the ToolBackend port: no store, client, composition root or entry point.',
      'tools',
      `store|client|app|${ENTRY}`,
    ),
    layer('client-speaks-http', 'The HTTP client depends on core shapes and the tools port only.', 'client', `store|embed|llm|${SERVICES}|app|${ENTRY}`),
    layer(
      'ai-sdk-over-tools-and-client',
      'knowhub/ai-sdk adapts the agent tools (over the HTTP client) to the Vercel AI SDK: no store, provider, service, composition root or entry point.',
      'ai-sdk',
      `store|embed|llm|${SERVICES}|app|${ENTRY}`,
    ),
    {
      name: 'ai-sdk-is-a-leaf',
      comment: 'Nothing of KnowHub imports knowhub/ai-sdk: the AI SDK (`ai`, an optional peer dependency) is loaded only by whoever imports that entry.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/ai-sdk/' },
      to: { path: '^src/ai-sdk/' },
    },
    {
      name: 'ai-only-in-ai-sdk',
      comment: 'The AI SDK (`ai`, `@ai-sdk/*`) is an optional peer dependency: only src/ai-sdk imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/ai-sdk/' },
      to: { path: '^node_modules/(ai|@ai-sdk/[^/]+)/' },
    },
    layer('entry-points-not-on-store', 'server/, cli/ and mcp/ reach the database through services or app/, never src/store.', ENTRY, 'store'),
    {
      name: 'app-only-wires',
      comment:
        "The composition root builds and passes parts: no SQL (src/store/sql.ts is the store's) and no permission check (src/auth/policy.ts is for services). A rule found in app/ moves to its service.",
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '^src/(store/sql|auth/policy)\\.ts$' },
    },
    {
      name: 'web-over-http',
      comment: 'The dashboard in the browser (web/dashboard) talks to the server over HTTP: it imports nothing of src/.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: '^src/' },
    },
    layer('app-below-entry-points', 'The composition root is built by entry points, never the other way round.', 'app', ENTRY),
    layer('server-and-mcp-not-on-cli', 'The server and the MCP server never import the CLI.', 'server|mcp', 'cli'),
    layer('mcp-not-on-server', 'The MCP server is mounted by the HTTP server, not the other way round.', 'mcp', 'server'),
    {
      name: 'no-package-root',
      comment: 'src/index.ts is the package entry: nothing inside imports it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/index\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.build.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js'] },
  },
}
