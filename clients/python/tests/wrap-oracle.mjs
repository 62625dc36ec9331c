// The TypeScript wrappers as an oracle for the Python tests: reads a JSON list of
// {fn, arg} from stdin, answers the list of results (dist/core, built by `npm run build`).
import process from 'node:process'
import { neutralise, escapeXml } from '../../../dist/core/wrap.js'
import { wrapEntries, wrapResource } from '../../../dist/core/wrap-entries.js'
import { KNOWLEDGE_TOOLS, toAnthropicTools, toOpenAITools } from '../../../dist/tools/index.js'
import { goalTool } from '../../../dist/tools/goal.js'

const TOOLS = [...KNOWLEDGE_TOOLS, goalTool]
const fns = {
  neutralise,
  escapeXml,
  wrapEntries,
  wrapResource,
  toFixed: ([value, digits]) => value.toFixed(digits),
  openaiTools: () => toOpenAITools(TOOLS),
  anthropicTools: () => toAnthropicTools(TOOLS),
}
let input = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk) => (input += chunk))
process.stdin.on('end', () => {
  const out = JSON.parse(input).map(({ fn, arg }) => fns[fn](arg))
  process.stdout.write(JSON.stringify(out))
})
