// Conventions that a type checker cannot see, checked over src/ (docs/effect4.md, "Conventions").
import { describe, expect, it } from "@effect/vitest"
import type { Effect } from "effect"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { circlesOf, domainGraphs, generatedSection, markdownTables, problems } from "../scripts/domain-cycles.mjs"
import type { trpcHandler } from "../src/http/trpc/adapter.js"
import type { Procedure } from "../src/http/trpc/procedure.js"

const ROOT = path.resolve(import.meta.dirname, "..")
const SRC = path.join(ROOT, "src")

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

/** A project holding only `files` (path → text), for the domain-graph checks; removed after `use`. */
const withProject = <A>(files: Record<string, string>, use: (root: string) => A): A => {
  const root = mkdtempSync(path.join(tmpdir(), "domain-graph-"))
  try {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
      writeFileSync(path.join(root, file), text)
    }
    return use(root)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

describe("the domain graph (scripts/domain-cycles.mjs, docs/architecture.md)", () => {
  const circular = {
    "src/http/a/x.ts": 'import { y } from "../b/y.js"\nexport const x = 1\n',
    // A multi-line type import makes an edge; a comment naming an import does not.
    "src/http/b/y.ts": 'import type {\n  x\n} from "../a/x.js"\n// import { z } from "../c/z.js"\nexport const y = 2\n',
    "src/http/c/z.ts": "export const z = 3\n",
    // A file directly in the layer folder is not a domain: it joins a and c without making a circle.
    "src/http/api.ts": 'import { x } from "./a/x.js"\nimport { z } from "./c/z.js"\n'
  }

  it("finds a circle between domain folders and names the imports that make it", () => {
    const found = withProject(circular, (root) => {
      const graphs = domainGraphs(root)
      return { circles: graphs.map(circlesOf), problems: problems(graphs) }
    })
    expect(found.circles).toEqual([[], [], [], [["a", "b"]]])
    expect(found.problems).toEqual([
      [
        "src/http: a, b import each other",
        "  a → b",
        "    src/http/a/x.ts:1 → ../b/y.js",
        "  b → a",
        "    src/http/b/y.ts:3 → ../a/x.js"
      ].join("\n")
    ])
  })

  it("accepts an allowed circle only as it is: gone, its entry is a problem", () => {
    const allowed = [{ layer: "http", domains: ["b", "a"] }]
    const withCircle = withProject(circular, (root) => problems(domainGraphs(root), allowed))
    const without = withProject(
      { "src/http/a/x.ts": 'import { y } from "../b/y.js"\n', "src/http/b/y.ts": "" },
      (root) => problems(domainGraphs(root), allowed)
    )
    expect(withCircle).toEqual([])
    expect(without).toEqual(["allow-list: src/http no longer has the circle a, b: delete its entry"])
  })

  it("no circle between the domain folders of src/schema, src/services, src/layers, src/http", () => {
    expect(problems(domainGraphs(ROOT))).toEqual([])
  })

  it("docs/architecture.md draws the graph the imports make (npm run docs:domains rewrites it)", () => {
    const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8")
    expect(generatedSection(doc)).toEqual(markdownTables(domainGraphs(ROOT)))
  })
})
