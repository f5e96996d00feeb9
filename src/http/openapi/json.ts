// The document is plain JSON, built once per server: the helpers every part of its assembly shares.

// The document is untyped JSON walked by key; a type per node would restate the OpenAPI schema.
// oxlint-disable-next-line typescript/no-explicit-any
export type Json = Record<string, any>

/** The methods of a path item, in the order the OpenAPI specification lists them. */
export const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const
/** The methods that carry a body and change state (Idempotency-Key applies). */
export const MUTATING: ReadonlySet<string> = new Set(["post", "put", "patch", "delete"])

/** A `$ref` to a component. */
export const ref = (kind: "schemas" | "parameters" | "headers", name: string) => ({
  $ref: `#/components/${kind}/${name}`
})

/**
 * The generator's unions, simplified without changing what they accept: `optional(NullOr(x))`
 * repeats `{ type: "null" }`, and a union holding `{}` (unknown) accepts anything anyway.
 */
export const tidyUnions = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(tidyUnions)
  if (typeof node !== "object" || node === null) return
  const record = node as Json
  for (const value of Object.values(record)) tidyUnions(value)
  if (!Array.isArray(record.anyOf)) return
  const seen = new Set<string>()
  const members = record.anyOf.filter((m: unknown) => {
    const key = JSON.stringify(m)
    return seen.has(key) ? false : (seen.add(key), true)
  })
  if (members.some((m: Json) => typeof m === "object" && m !== null && Object.keys(m).length === 0)) delete record.anyOf
  else if (members.length === 1 && Object.keys(record).length === 1) {
    delete record.anyOf
    Object.assign(record, members[0])
  } else record.anyOf = members
}
