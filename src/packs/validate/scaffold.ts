/**
 * `knowhub packs init`: a new document-first pack that `packs validate`
 * passes — `KNOWLEDGE.md` (the standard's required and common optional
 * frontmatter, a context map), the primary document and one compiled split,
 * each with placeholder text that says what to write there.
 */
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { KnowHubError } from '../../core/errors.js'
import { isAcceptedType } from '../load/frontmatter.js'
import { STANDARD_PACK_TYPES } from '../schema.js'

/** The standard's naming rule for `name` (and the folder). */
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/u
/** A BCP 47-shaped language tag (`en`, `zh-CN`, `pt-BR`). */
const LANGUAGE_PATTERN = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/u

/** The naming rule, in words (used in the refusal). */
export const PACK_NAME_RULE =
  '1-64 characters: lowercase letters a-z, digits 0-9 and single hyphens between them (e.g. acme-product-brief); it is also the folder name'

/** What to scaffold. */
export interface PackInitOptions {
  /** The pack name (the standard's naming rule; also the folder name). */
  name: string
  /** The folder in which the pack folder `<name>/` is created (default: the current folder; the packs service passes the project's `.agents/knowledge`). */
  dir?: string | undefined
  /** The pack type (default `domain-reference`): a standard type, a namespaced one (`custom:x`) or one in `allowedTypes`. */
  type?: string | undefined
  /** Language tag of the content (default `en`). */
  language?: string | undefined
  /** Extra types to accept (the `packs.allowedTypes` config). */
  allowedTypes?: readonly string[] | undefined
}

/** The pack written by {@link initPack}. */
export interface PackInitResult {
  name: string
  type: string
  language: string
  /** Absolute path of the new pack folder. */
  root: string
  /** The files written, relative to `root`. */
  files: string[]
  /** Whether discovery scans the folder the pack is in (`knowhub packs list` finds it); set by the packs service. */
  discovered?: boolean
}

/**
 * Refuses a name, type or language the standard (as the validator applies it) would not accept, in words.
 * @example
 * checkInitOptions({ name: 'Acme Brief' }) // throws validation_error naming the rule
 */
export function checkInitOptions(options: PackInitOptions): { name: string; type: string; language: string } {
  const { name } = options
  if (name.length === 0 || name.length > 64 || !NAME_PATTERN.test(name)) {
    throw new KnowHubError('validation_error', `Invalid pack name "${name}": a pack name has ${PACK_NAME_RULE}.`, { field: 'name', name })
  }
  const type = options.type ?? 'domain-reference'
  if (isAcceptedType(type, options.allowedTypes) === undefined) {
    throw new KnowHubError(
      'validation_error',
      `Invalid pack type "${type}": use a standard type (${STANDARD_PACK_TYPES.join(', ')}), a namespaced one (custom:<name>) or one listed in packs.allowedTypes.`,
      { field: 'type', type },
    )
  }
  const language = options.language ?? 'en'
  if (!LANGUAGE_PATTERN.test(language)) {
    throw new KnowHubError('validation_error', `Invalid language "${language}": use a language tag such as en, de or zh-CN.`, { field: 'language', language })
  }
  return { name, type, language }
}

/**
 * The files of a new pack, relative to its folder (pure, no I/O).
 * @example
 * packScaffold({ name: 'acme-brief', type: 'brand-product', language: 'en' }).map((f) => f.path)
 * // ['KNOWLEDGE.md', 'documents/acme-brief.md', 'compiled/splits/acme-brief/overview.md']
 */
export function packScaffold({ name, type, language }: { name: string; type: string; language: string }): { path: string; content: string }[] {
  const primary = `documents/${name}.md`
  const split = `compiled/splits/${name}/overview.md`
  const knowledge = `---
name: ${name}
description: "Replace this: one or two sentences saying what this pack knows and when an agent should use it (at most 1024 characters; agents choose packs by this line)."
type: ${type.includes(':') ? JSON.stringify(type) : type}
status: draft
profile: document-first
version: 0.1.0
language: ${language}
trust: unreviewed
grounding: recommended
runtime:
  mode: data
metadata:
  primaryDocument: ${primary}
  producedBy:
    kind: manual
    name: knowhub packs init
---

# ${name}

Replace this paragraph: say in a few lines when to use this pack and what an agent
should do with it (for example, "Use this pack for support replies about …").

## Context map

- \`${primary}\` is the primary document: the full, reviewed text (the source of truth).
- \`compiled/splits/${name}/\` holds short runtime views of that document, one topic per
  file; resolvers pick from them first.

## Before you publish

1. Write the primary document and the split(s); add a split per topic as it grows.
2. Put raw material you cite under \`sources/\` (optional).
3. Set \`status: ready\` (and \`trust\`) once someone has reviewed the content.
4. Check the pack: \`knowhub packs validate ${name}\` in the project folder (the name finds it
   where \`knowhub packs list\` looks), or \`knowhub packs validate .\` in this folder.
`
  const document = `# ${name}

Replace this document with the pack's primary text: the facts, procedures and rules
an agent should rely on. Use one \`##\` heading per topic; the resolver cuts the
document at headings.

## Overview

Replace this: what the subject is, who it is for, the few facts that matter most.

## Details

Replace this: the details an agent needs (numbers, names, steps), each stated once.

## Boundaries

Replace this: what an agent must not claim or do, and what to ask a person about.
`
  const overview = `# Overview

Replace this split with a short runtime view of the "Overview" section of
\`${primary}\`: the few lines an agent needs most often, in plain sentences.
Add one file per topic beside this one (for example \`pricing.md\`).
`
  return [
    { path: 'KNOWLEDGE.md', content: knowledge },
    { path: primary, content: document },
    { path: split, content: overview },
  ]
}

async function isNonEmpty(path: string): Promise<boolean> {
  try {
    const info = await stat(path)
    if (!info.isDirectory()) return true
    return (await readdir(path)).length > 0
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

/**
 * Writes a new document-first pack to `<dir>/<name>/`; refuses an invalid name, type or language
 * (`validation_error`) and a target that exists and is not an empty folder (`conflict`).
 * @example
 * const { root, files } = await initPack({ name: 'acme-brief', dir: '.agents/knowledge', type: 'brand-product' })
 */
export async function initPack(options: PackInitOptions): Promise<PackInitResult> {
  const checked = checkInitOptions(options)
  const root = resolve(options.dir ?? '.', checked.name)
  if (await isNonEmpty(root)) {
    throw new KnowHubError('conflict', `${root} already exists and is not an empty folder; choose another name or --dir.`, { path: root })
  }
  const files = packScaffold(checked)
  for (const file of files) {
    const target = join(root, file.path)
    await mkdir(join(target, '..'), { recursive: true })
    await writeFile(target, file.content, { flag: 'wx' })
  }
  return { ...checked, root, files: files.map((f) => f.path) }
}
