/**
 * The packs' persisted choices (runtime standard: enable, disable; security
 * model: approve untrusted workspace packs): one JSON file in a state folder,
 * written atomically (a temporary file renamed over it), read once per call.
 * Approvals are recorded per pack digest (the KNOWLEDGE.md hash), so a
 * changed pack needs approving again.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { z } from 'zod'
import { KnowHubError } from '../../core/errors.js'

/**
 * The state file's content.
 * @example
 * PackStateFile.parse({ version: 1, disabled: ['old-pack'], approvals: {} })
 */
export const PackStateFile = z.object({
  version: z.literal(1),
  /** Names of disabled packs: not in the catalog, not matched by task, refused by name. */
  disabled: z.array(z.string()).default([]),
  /** Approved packs by name: the digest approved, where, and when. */
  approvals: z
    .record(
      z.string(),
      z.object({
        digest: z.string(),
        location: z.string(),
        at: z.string(),
      }),
    )
    .default({}),
})
export type PackStateFile = z.infer<typeof PackStateFile>

const EMPTY: PackStateFile = { version: 1, disabled: [], approvals: {} }

/**
 * Reads and writes the packs' state file. Create with {@link PackStateStore.open} (no I/O until used).
 * @example
 * const state = PackStateStore.open('/home/me/.knowhub/state/packs.json')
 * await state.update((s) => ({ ...s, disabled: [...s.disabled, 'old-pack'] }))
 */
export class PackStateStore {
  private queue: Promise<unknown> = Promise.resolve()

  private constructor(readonly file: string) {}

  /** A store over `file` (created on the first write). */
  static open(file: string): PackStateStore {
    return new PackStateStore(file)
  }

  /** The current state (empty when the file does not exist); a bad file is a `config_error`, never overwritten silently. */
  async read(): Promise<PackStateFile> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return structuredClone(EMPTY)
      throw error
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      throw new KnowHubError('config_error', `The packs state file ${this.file} is not JSON; fix or remove it.`, { file: this.file })
    }
    const parsed = PackStateFile.safeParse(json)
    if (!parsed.success) {
      throw new KnowHubError('config_error', `The packs state file ${this.file} is not valid (${parsed.error.issues[0]?.message ?? 'bad shape'}).`, {
        file: this.file,
      })
    }
    return parsed.data
  }

  /** Applies a change and writes the file atomically; changes are applied one at a time. */
  update(change: (state: PackStateFile) => PackStateFile): Promise<PackStateFile> {
    const next = this.queue.then(async () => {
      const updated = PackStateFile.parse(change(await this.read()))
      await mkdir(dirname(this.file), { recursive: true })
      const temp = `${this.file}.${randomUUID()}.tmp`
      try {
        await writeFile(temp, `${JSON.stringify(updated, null, 2)}\n`, { encoding: 'utf8', mode: 0o600 })
        await rename(temp, this.file)
      } catch (error) {
        await rm(temp, { force: true })
        throw error
      }
      return updated
    })
    this.queue = next.catch(() => undefined)
    return next
  }
}
