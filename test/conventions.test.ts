// Conventions that a type checker cannot see, checked over src/ (docs/effect4.md, "Conventions").
import { describe, expect, it } from "@effect/vitest"
import type { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import path from "node:path"
import type { trpcHandler } from "../src/http/trpc/adapter.js"
import type { Procedure } from "../src/http/trpc/procedure.js"

const SRC = path.resolve(import.meta.dirname, "../src")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/**
 * An arrow whose body is `Effect.gen(function* () {…})` (also inside `atomically(…)` or
 * `orUnavailable(…)`) makes a new generator function on every call. V8 gives each one its own
 * hidden class in the old generation, which promotes the call's garbage and makes full collections
 * of the whole heap frequent (docs/performance.md, "Memory soak"). Such a function is written
 * `Effect.fnUntraced(function* (…) {…})`, made once.
 */
const GENERATOR_PER_CALL = /=>\s*(?:(?:atomically|orUnavailable)\(\s*)?Effect\.gen\(\s*function\*/g

/** Where `pattern` matches in `text`, as 1-based line numbers (comment lines left out). */
const matchLines = (text: string, pattern: RegExp): ReadonlyArray<number> => {
  const lines: Array<number> = []
  for (const match of text.matchAll(pattern)) {
    const line = text.slice(0, match.index).split("\n").length
    const lineText = text.split("\n")[line - 1].trim()
    if (!lineText.startsWith("//") && !lineText.startsWith("*")) lines.push(line)
  }
  return lines
}

describe("source conventions", () => {
  it("the pattern finds what it is meant to find", () => {
    expect(matchLines("const f = (x: number) =>\n  Effect.gen(function* () {\n", GENERATOR_PER_CALL)).toEqual([1])
    expect(matchLines("const f = (id) => atomically(Effect.gen(function* () {", GENERATOR_PER_CALL)).toEqual([1])
    expect(matchLines("lock: (w) =>\n  orUnavailable(\n    Effect.gen(function* () {", GENERATOR_PER_CALL)).toEqual([1])
    expect(matchLines("const f = Effect.fnUntraced(function* (x: number) {", GENERATOR_PER_CALL)).toEqual([])
    expect(matchLines("make: Effect.gen(function* () {", GENERATOR_PER_CALL)).toEqual([])
    expect(matchLines("// not `(…) => Effect.gen(function* () {…})`", GENERATOR_PER_CALL)).toEqual([])
  })

  it("no function in src makes a generator function per call (`(…) => Effect.gen(function* …)`)", () => {
    const found = sourceFiles(SRC).flatMap((file) =>
      matchLines(readFileSync(file, "utf8"), GENERATOR_PER_CALL).map((line) => `${path.relative(SRC, file)}:${line}`)
    )
    expect(found).toEqual([])
  })

  // Checked by the type checker (npm run typecheck, CI): a generic function written with
  // Effect.fnUntraced keeps its type parameters, so the tRPC handler's requirements are its table's
  // services — not `any`, which would spread to the app layer and hide a missing service.
  it("a generic function made with fnUntraced keeps its type parameters (the tRPC handler's requirements)", () => {
    type Requirements<T> = T extends Effect.Effect<infer _A, infer _E, infer R> ? R : never
    type Handler = Requirements<ReturnType<typeof trpcHandler<{ readonly a: Procedure<"ServiceA"> }>>>
    const isAny: 0 extends 1 & Handler ? "any" : "not any" = "not any"
    const hasTheTablesService: "ServiceA" extends Handler ? true : false = true
    expect([isAny, hasTheTablesService]).toEqual(["not any", true])
  })
})
