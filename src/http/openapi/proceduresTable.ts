// The procedure table (`/api/trpc/<name>`) as the document's description lists it: each
// procedure's call, access, and its input and output as short TypeScript-like types.
import { Schema } from "effect"
import { procedures } from "../procedures.js"
import type { Procedure } from "../trpc/procedure.js"
import type { Json } from "./json.js"

/** A JSON Schema as a short TypeScript-like type, for people: `{ planId: "starter" | "pro", agentId?: string }`. */
export const shortType = (schema: Json | undefined, defs: Json = {}, depth = 0): string => {
  if (!schema || Object.keys(schema).length === 0) return "any"
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop()!
    return depth >= 2 || !defs[name] ? name : shortType(defs[name], defs, depth)
  }
  const union = schema.anyOf ?? schema.oneOf
  if (Array.isArray(union)) return union.map((s: Json) => shortType(s, defs, depth)).join(" | ")
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ")
  if (schema.type === "array") return `Array<${shortType(schema.items, defs, depth + 1)}>`
  if (schema.type === "object" && schema.properties) {
    if (depth >= 2) return "object"
    const required = new Set<string>(schema.required ?? [])
    const fields = Object.entries(schema.properties as Json).map(
      ([k, v]) => `${k}${required.has(k) ? "" : "?"}: ${shortType(v as Json, defs, depth + 1)}`
    )
    return `{ ${fields.join(", ")} }`
  }
  return typeof schema.type === "string" ? schema.type : "any"
}

const typeOf = (schema: Schema.Top | undefined): string => {
  if (schema === undefined) return "none"
  const doc = Schema.toJsonSchemaDocument(schema as Schema.Constraint) as unknown as {
    schema: Json
    definitions?: Json
  }
  return shortType(doc.schema, doc.definitions ?? {})
}

/** The procedure table (`/api/trpc/<name>`) as a markdown table: name, call, permission, input, output. */
export const proceduresMarkdown = (): string => {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ")
  const rows = Object.entries(procedures as Record<string, Procedure<unknown>>).map(([name, p]) => {
    const call =
      p.type === "mutation" ? `POST /api/trpc/${name}` : `GET /api/trpc/${name}${p.input ? "?input=<JSON>" : ""}`
    const who =
      p.access._tag === "public"
        ? "public"
        : `API key${p.access.permission ? ` with \`${p.access.permission}\`` : ""} or dashboard session`
    const input = cell(typeOf(p.input))
    const output = cell(typeOf(p.output))
    return `| \`${name}\` | ${cell(p.description)} | \`${call}\` | ${who} | \`${input}\` | \`${output}\` |`
  })
  const head = ["| Procedure | What | Call | Who may call | Input | Output |", "|---|---|---|---|---|---|"]
  return [...head, ...rows].join("\n")
}
