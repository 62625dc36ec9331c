/** Runs the real CLI from source (spawned by the stdio tests with `node --import tsx`). */
import { main } from '../../src/cli/main.js'

await main(process.argv)
