/**
 * Zip files written byte by byte for the tests of what an upload may not do (issue 39): sizes
 * that lie, names that climb or are not UTF-8, symbolic links by their external attributes,
 * overlapping entries, and a deflate bomb of N MiB of spaces made in milliseconds.
 */
import { crc32, deflateRawSync } from 'node:zlib'

/** One entry as the zip will hold it. */
export interface RawEntry {
  /** The name's bytes (a string is written as UTF-8). */
  name: string | Uint8Array
  /** The data as stored: already deflated for method 8 (see {@link deflated}). */
  data: Uint8Array
  method?: 0 | 8
  /** The uncompressed size the zip declares (default: the real one, when known). */
  declaredSize?: number
  /** The real text or bytes, for the CRC and the default declared size. */
  plain?: Uint8Array
  /** Version made by: 0x031e is Unix (the default), 0x0014 MS-DOS. */
  madeBy?: number
  /** External attributes (default: a regular file, mode 0644, on Unix). */
  attributes?: number
  flags?: number
  /** Write the local header at this offset of another entry (an overlap). */
  sameDataAs?: number
}

/** A regular file's external attributes on Unix. */
export const FILE_ATTRIBUTES = (0o100644 << 16) >>> 0
/** A symbolic link's external attributes on Unix. */
export const LINK_ATTRIBUTES = (0o120777 << 16) >>> 0

/** Raw deflate of a text or bytes. */
export function deflated(plain: string | Uint8Array): Uint8Array {
  return deflateRawSync(typeof plain === 'string' ? Buffer.from(plain) : plain)
}

/** Writes bits into bytes, least significant bit first (deflate's order). */
class Bits {
  readonly bytes: number[] = []
  /** Bits written so far. */
  length = 0
  /** `count` bits of `value`, low bit first (header fields, extra bits). */
  put(value: number, count: number): this {
    for (let i = 0; i < count; i++, this.length++) {
      if (this.length % 8 === 0) this.bytes.push(0)
      this.bytes[this.bytes.length - 1]! |= ((value >>> i) & 1) << (this.length % 8)
    }
    return this
  }
  /** A Huffman code, most significant bit first. */
  code(bits: string): this {
    for (const b of bits) this.put(b === '1' ? 1 : 0, 1)
    return this
  }
}

/**
 * A deflate stream of about `mib` MiB of spaces in one dynamic-Huffman block, at deflate's best
 * ratio (1:1032, as `zip` writes a file of spaces): one literal space, then copies of 258 bytes
 * at distance 1 that cost 2 bits each. Built bit by bit in milliseconds (deflating 2,000 MiB
 * would take seconds). The codes: literal/length 285 → 0, 32 → 10, 256 → 11; distances 0 → 0,
 * 1 → 1; code lengths 18 → 0, 1 → 10, 2 → 11 (RFC 1951, 3.2.7).
 */
export function spaces(mib: number): Uint8Array {
  const copies = Math.ceil((mib * 1024 * 1024 - 1) / 258)
  const bits = new Bits().put(1, 1).put(2, 2) // BFINAL, dynamic Huffman
  bits
    .put(286 - 257, 5)
    .put(2 - 1, 5)
    .put(18 - 4, 4) // HLIT, HDIST, HCLEN
  // Code length code lengths in RFC order 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1: 18 → 1, 2 → 2, 1 → 2.
  for (const length of [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2]) bits.put(length, 3)
  const zeros = (n: number) => bits.code('0').put(n - 11, 7) // code 18: n zeros (11-138)
  zeros(32)
  bits.code('11') // the space (32): length 2
  zeros(138)
  zeros(85)
  bits.code('11') // end of block (256): length 2
  zeros(28)
  bits.code('10') // a copy of 258 (285): length 1
  bits.code('10').code('10') // distance codes 0 and 1: length 1 each
  bits.code('10') // the literal space
  // Each copy is "0" (285) then "0" (distance 1): zero bits. Then the end of block, "11".
  const end = bits.length + 2 * copies
  const out = new Uint8Array(Math.ceil((end + 2) / 8))
  out.set(bits.bytes)
  for (const at of [end, end + 1]) out[at >>> 3]! |= 1 << (at & 7)
  return out
}

/**
 * A zip of `entries`, written byte by byte (local headers, data, central directory, end record).
 * @example
 * rawZip([{ name: '../x.json', data: deflated('[]'), plain: Buffer.from('[]') }])
 */
export function rawZip(entries: RawEntry[]): Uint8Array {
  const chunks: Buffer[] = []
  const central: Buffer[] = []
  const offsets: number[] = []
  let at = 0
  for (const entry of entries) {
    const name = typeof entry.name === 'string' ? Buffer.from(entry.name) : Buffer.from(entry.name)
    const method = entry.method ?? 8
    const crc = entry.plain ? crc32(entry.plain) : 0
    const size = entry.declaredSize ?? entry.plain?.length ?? entry.data.length
    const header = (local: boolean) => {
      const h = Buffer.alloc(local ? 30 : 46)
      let p = 0
      const u16 = (v: number) => (p = h.writeUInt16LE(v, p))
      const u32 = (v: number) => (p = h.writeUInt32LE(v >>> 0, p))
      u32(local ? 0x04034b50 : 0x02014b50)
      if (!local) u16(entry.madeBy ?? 0x031e)
      u16(20)
      u16(entry.flags ?? 0x0800)
      u16(method)
      u16(0)
      u16(0x21)
      u32(crc)
      u32(entry.data.length)
      u32(size)
      u16(name.length)
      u16(0)
      if (!local) {
        u16(0)
        u16(0)
        u16(0)
        u32(entry.attributes ?? FILE_ATTRIBUTES)
        u32(entry.sameDataAs === undefined ? at : offsets[entry.sameDataAs]!)
      }
      return Buffer.concat([h, name])
    }
    central.push(header(false))
    offsets.push(at)
    if (entry.sameDataAs !== undefined) continue
    const local = Buffer.concat([header(true), Buffer.from(entry.data)])
    chunks.push(local)
    at += local.length
  }
  const directory = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(directory.length, 12)
  end.writeUInt32LE(at, 16)
  return Buffer.concat([...chunks, directory, end])
}

/**
 * A zip of one text file, deflated, as `rawZip` writes it.
 * @example
 * zipOf('global/tools.json', '[]')
 */
export function zipOf(name: string | Uint8Array, plain: string | Uint8Array, extra: Partial<RawEntry> = {}): Uint8Array {
  const bytes = typeof plain === 'string' ? Buffer.from(plain) : plain
  return rawZip([{ name, data: deflated(bytes), plain: bytes, ...extra }])
}
