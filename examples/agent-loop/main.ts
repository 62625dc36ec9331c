/**
 * Runs the agent-loop example: `npm run example -- "your task"`
 * (or `npx tsx examples/agent-loop/main.ts "your task"`). By default it starts a KnowHub
 * server on a temporary data folder and removes both at the end (see store.ts); the
 * first line it prints says which store it used. Options and environment:
 *   --url URL, KNOWHUB_URL          a running server instead (e.g. http://127.0.0.1:8420 of `npm start`)
 *   --data-dir DIR, KNOWHUB_DATA_DIR  that data folder instead, kept (through its server when one holds it)
 *   KNOWHUB_TOKEN    API token (not needed in local mode)
 *   OPENAI_MODEL     model name; unset → the no-model path (search, save, search, feedback)
 *   OPENAI_BASE_URL  OpenAI-compatible API root (default https://api.openai.com/v1)
 *   OPENAI_API_KEY   its key (Ollama, vLLM and other local servers need none)
 *   AGENT_NAME       an agent in the server's agent home: start from its assembled context and a focused goal
 */
import { isKnowHubClientError } from 'knowhub/client'
import { runAgent } from './agent.js'
import { openExampleStore, parseExampleArgs, type ExampleStore } from './store.js'

const args = parseExampleArgs(process.argv.slice(2))
const task = args.task || 'Log in to a website with Selenium without being blocked as a bot'
const model = process.env.OPENAI_MODEL
  ? {
      baseUrl: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      model: process.env.OPENAI_MODEL,
      ...(process.env.OPENAI_API_KEY ? { apiKey: process.env.OPENAI_API_KEY } : {}),
    }
  : undefined

let store: ExampleStore | undefined
try {
  store = await openExampleStore(args, process.env)
  console.log(store.label)
  const report = await runAgent({
    task,
    knowhubUrl: store.url,
    ...(store.token ? { token: store.token } : {}),
    ...(model ? { model } : {}),
    ...(process.env.AGENT_NAME ? { agent: process.env.AGENT_NAME } : {}),
    log: (line) => console.log(line),
  })
  console.log(`\n${report.steps.length} tool call(s), ${report.steps.filter((s) => !s.ok).length} failed.`)
} catch (error) {
  if (isKnowHubClientError(error, 'network_error')) {
    console.error(`Cannot reach KnowHub (${error.message}). Check --url / KNOWHUB_URL, or leave it unset to use a temporary store.`)
  } else {
    console.error(error instanceof Error ? error.message : String(error))
  }
  process.exitCode = 1
} finally {
  await store?.close()
}
