// The TypeScript wrappers as an oracle for the Python tests: reads a JSON list of
// {fn, arg} from stdin, answers the list of results (dist/core, built by `npm run build`).
import process from 'node:process'
import { neutralise, escapeXml } from '../../../dist/core/wrap.js'
import { wrapEntries, wrapResource } from '../../../dist/core/wrap-entries.js'

const fns = { neutralise, escapeXml, wrapEntries, wrapResource }
let input = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk) => (input += chunk))
process.stdin.on('end', () => {
  const out = JSON.parse(input).map(({ fn, arg }) => fns[fn](arg))
  process.stdout.write(JSON.stringify(out))
})
