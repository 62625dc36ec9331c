/**
 * The "every public export has a JSDoc @example" check (STYLE.md), shared by the
 * export tests of each subpath.
 */

/**
 * The names among `names` that no source declares (`export function|class|const NAME`)
 * right after a JSDoc block containing `@example`.
 * @example
 * expect(exportsWithoutExample(Object.keys(client), sources)).toEqual([])
 */
export function exportsWithoutExample(names: readonly string[], sources: readonly string[]): string[] {
  return names.filter((name) => {
    for (const source of sources) {
      const match = new RegExp(`export (?:async )?(?:function|class|const) ${name}\\b`).exec(source)
      if (!match) continue
      const before = source.slice(0, match.index).trimEnd()
      return !(before.endsWith('*/') && before.slice(before.lastIndexOf('/**')).includes('@example'))
    }
    return true
  })
}
