/**
 * The vector scan's dot products in WebAssembly SIMD: two slots an instruction, the same
 * arithmetic in the same order as the JavaScript loop it replaces (so the similarities are
 * bitwise equal), about four times faster (docs/retrieval-log.md, "Search latency"). The module
 * is `dots.wat` beside this file, assembled; test/store/dot-kernel.test.ts assembles that text
 * and checks it against these bytes. Pure computation, no I/O.
 */

/** `dots.wat`, assembled (wabt 1.0.39, SIMD on). */
const MODULE_BASE64 =
  'AGFzbQEAAAABFQJgBH9/f3wAYAp/f39/f398fHx8AAIPAQNlbnYGbWVtb3J5AgABAwMCAAEHEQIFZG90czEAAAVkb3RzNAABCvMBAlADAX8BewF/IAP9FCEFAkADQCAEIAFPDQEgACAEQQN0aiEGIAYgBv0ABAAgAiAEQQJ0av1dAwD9XyAF/fIB/fAB/QsEACAEQQJqIQQMAAsLC58BAwF/BHsCfyAG/RQhCyAH/RQhDCAI/RQhDSAJ/RQhDgJAA0AgCiABTw0BIApBAnQhDyAAIApBA3RqIRAgECAQ/QAEACACIA9q/V0DAP1fIAv98gEgAyAPav1dAwD9XyAM/fIB/fABIAQgD2r9XQMA/V8gDf3yAf3wASAFIA9q/V0DAP1fIA798gH98AH98AH9CwQAIApBAmohCgwACwsL'

/** The module's bytes (exported for the test that checks them against `dots.wat`). */
export const DOT_KERNEL_BYTES: Uint8Array = Uint8Array.from(atob(MODULE_BASE64), (c) => c.charCodeAt(0))

/**
 * The kernel's functions over one memory; offsets are in bytes. Each adds to the f64s at
 * `dots` for slots `[0, n)`, two a step: an odd `n` also writes `dots[n]` and reads one f32
 * past the last slot of each column.
 */
export interface DotKernel {
  /** `dots[i] += a[i] × va` */
  dots1(dots: number, n: number, a: number, va: number): void
  /** `dots[i] += a[i] × va + b[i] × vb + c[i] × vc + d[i] × vd`, left to right. */
  dots4(dots: number, n: number, a: number, b: number, c: number, d: number, va: number, vb: number, vc: number, vd: number): void
}

/** What this module uses of a WebAssembly memory (the project's TypeScript libraries declare no WebAssembly). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}

/** The part of the WebAssembly global this module uses. */
interface WebAssemblyApi {
  Memory: new (descriptor: { initial: number }) => WasmMemory
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object, imports: object) => { exports: unknown }
  validate(bytes: Uint8Array): boolean
}

const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly

/** A new WebAssembly memory of one page (64 KiB), for the columns and the kernel. */
export function createWasmMemory(): WasmMemory {
  return new wasm.Memory({ initial: 1 })
}

let compiled: object | null | undefined

/** Whether this runtime runs the kernel (WebAssembly SIMD); checked once. */
export function dotKernelAvailable(): boolean {
  if (compiled === undefined) compiled = wasm.validate(DOT_KERNEL_BYTES) ? new wasm.Module(DOT_KERNEL_BYTES) : null
  return compiled !== null
}

/**
 * The kernel over `memory`, or undefined where this runtime has no WebAssembly SIMD (the
 * caller then computes the same sums in JavaScript).
 * @example
 * const memory = createWasmMemory()
 * const kernel = createDotKernel(memory)
 * kernel?.dots4(0, 2048, a, b, c, d, va, vb, vc, vd)
 */
export function createDotKernel(memory: WasmMemory): DotKernel | undefined {
  if (!dotKernelAvailable()) return undefined
  return new wasm.Instance(compiled!, { env: { memory } }).exports as DotKernel
}
