/**
 * Runs the agent-loop example: `npm run example -- "your task"`
 * (or `npx tsx examples/agent-loop/main.ts "your task"`). Needs a running server
 * (`npm start`). Environment:
 *   KNOWHUB_URL      server (default http://127.0.0.1:8420)
 *   KNOWHUB_TOKEN    API token (not needed in local mode)
 *   OPENAI_MODEL     model name; unset → the no-model path (search, save, search, feedback)
 *   OPENAI_BASE_URL  OpenAI-compatible API root (default https://api.openai.com/v1)
 *   OPENAI_API_KEY   its key (Ollama, vLLM and other local servers need none)
 *   AGENT_NAME       an agent in the server's agent home: start from its assembled context and a focused goal
 */
import { isKnowHubClientError } from 'knowhub/client'
import { runAgent } from './agent.js'

const task = process.argv.slice(2).join(' ').trim() || 'Log in to a website with Selenium without being blocked as a bot'
const model = process.env.OPENAI_MODEL
  ? {
      baseUrl: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      model: process.env.OPENAI_MODEL,
      ...(process.env.OPENAI_API_KEY ? { apiKey: process.env.OPENAI_API_KEY } : {}),
    }
  : undefined

try {
  const report = await runAgent({
    task,
    ...(process.env.KNOWHUB_URL ? { knowhubUrl: process.env.KNOWHUB_URL } : {}),
    ...(process.env.KNOWHUB_TOKEN ? { token: process.env.KNOWHUB_TOKEN } : {}),
    ...(model ? { model } : {}),
    ...(process.env.AGENT_NAME ? { agent: process.env.AGENT_NAME } : {}),
    log: (line) => console.log(line),
  })
  console.log(`\n${report.steps.length} tool call(s), ${report.steps.filter((s) => !s.ok).length} failed.`)
} catch (error) {
  if (isKnowHubClientError(error, 'network_error')) {
    console.error(`Cannot reach KnowHub (${error.message}). Start it with \`npm start\` or set KNOWHUB_URL.`)
  } else {
    console.error(error instanceof Error ? error.message : String(error))
  }
  process.exitCode = 1
}
