/* global WebAssembly */
// Preloaded into a measured KnowHub process by bench/memory.ts (`node --import
// ./bench/memory-probe.mjs bin/knowhub.js …`); plain JavaScript so that the built CLI runs
// unchanged, without a TypeScript loader in the measured memory. It notes every WebAssembly
// memory the process creates (PGlite's Postgres, the sentence model's TensorFlow.js backend)
// with where it came from, and on SIGUSR2 (and at exit) writes a snapshot as JSON to
// $KNOWHUB_MEMORY_PROBE: process.memoryUsage(), VmRSS/VmHWM/RssAnon/RssFile from
// /proc/self/status, and each WebAssembly memory's current size.
import { readFileSync, writeFileSync } from 'node:fs'

const out = process.env.KNOWHUB_MEMORY_PROBE
const memories = []

function origin() {
  const stack = new Error().stack ?? ''
  if (/pglite/i.test(stack)) return 'pglite'
  if (/tfjs|energetic|tensorflow/i.test(stack)) return 'model (tfjs wasm)'
  if (/onnx/i.test(stack)) return 'model (onnx wasm)'
  return 'other'
}

function note(memory, from) {
  if (memory instanceof WebAssembly.Memory && !memories.some((m) => m.memory === memory)) memories.push({ memory, origin: from })
}

function noteExports(instance, from) {
  for (const value of Object.values(instance?.exports ?? {})) note(value, from)
}

const Memory = WebAssembly.Memory
WebAssembly.Memory = new Proxy(Memory, {
  construct(target, args) {
    const memory = Reflect.construct(target, args)
    note(memory, origin())
    return memory
  },
})
// instantiate answers an instance (given a module) or { module, instance }; instantiateStreaming the latter.
for (const [name, instanceOf] of [
  ['instantiate', (result) => result.instance ?? result],
  ['instantiateStreaming', (result) => result.instance],
]) {
  const original = WebAssembly[name]
  if (!original) continue
  WebAssembly[name] = async function (...args) {
    const from = origin()
    const result = await original.apply(this, args)
    noteExports(instanceOf(result), from)
    return result
  }
}
const Instance = WebAssembly.Instance
WebAssembly.Instance = new Proxy(Instance, {
  construct(target, args) {
    const instance = Reflect.construct(target, args)
    noteExports(instance, origin())
    return instance
  },
})

function status() {
  const fields = {}
  for (const line of readFileSync('/proc/self/status', 'utf8').split('\n')) {
    const match = /^(VmRSS|VmHWM|RssAnon|RssFile|RssShmem):\s+(\d+) kB/.exec(line)
    if (match) fields[match[1]] = Number(match[2]) * 1024
  }
  return fields
}

let seq = 0
function snapshot() {
  if (!out) return
  const wasm = memories.map((m) => ({ origin: m.origin, bytes: m.memory.buffer.byteLength }))
  writeFileSync(out, JSON.stringify({ seq: ++seq, at: Date.now(), usage: process.memoryUsage(), status: status(), wasm }))
}

process.on('SIGUSR2', snapshot)
process.on('exit', snapshot)
