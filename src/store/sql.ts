/**
 * Parameterised SQL as a tagged template. Values always become `$n`
 * parameters; only fragments built by code (never input) are spliced in.
 * @example
 * const q = sql`SELECT * FROM knowledge WHERE id = ${id} AND scopes && ${visible}::text[]`
 * // q.text === 'SELECT * FROM knowledge WHERE id = $1 AND scopes && $2::text[]'
 */
export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  /** The query text with `$n` placeholders and its parameter list. */
  build(): { text: string; values: unknown[] } {
    const values: unknown[] = []
    const text = this.#render(values)
    return { text, values }
  }

  #render(values: unknown[]): string {
    let text = this.strings[0] ?? ''
    for (let i = 0; i < this.values.length; i++) {
      const value = this.values[i]
      if (value instanceof Sql) text += value.#render(values)
      else {
        values.push(value)
        text += `$${values.length}`
      }
      text += this.strings[i + 1] ?? ''
    }
    return text
  }
}

export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  return new Sql(strings, values)
}

/** Joins fragments with a separator (`, ` by default). */
sql.join = function join(parts: readonly Sql[], separator = ', '): Sql {
  if (parts.length === 0) return new Sql([''], [])
  const strings = ['', ...parts.slice(1).map(() => separator), '']
  return new Sql(strings, parts)
}

/**
 * Splices trusted text written in code (an identifier, a keyword, a number the code computed).
 * Never pass input here.
 */
sql.raw = function raw(text: string): Sql {
  return new Sql([text], [])
}

/** An empty fragment. */
sql.empty = new Sql([''], [])
