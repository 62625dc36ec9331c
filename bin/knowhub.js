#!/usr/bin/env node
import { main } from '../dist/cli/main.js'

main(process.argv).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
