#!/usr/bin/env node
// The command line as one bundle (scripts/bundle-cli.ts, part of `npm run build`); dist/cli when
// a build left no bundle (tsc alone).
const { main } = await import('../dist/bundle/knowhub.js').catch((error) =>
  error?.code === 'ERR_MODULE_NOT_FOUND' && /dist[\\/]bundle[\\/]knowhub\.js/.test(String(error.message))
    ? import('../dist/cli/main.js')
    : Promise.reject(error),
)

main(process.argv).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
