// The small promises of issue 20: `npm run bench -- --help` prints usage instead of benchmarking,
// the README is self-contained and OS-neutral, and GET /invest leads people to a page.
import { spawnSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../fixtures/server.js"

const root = path.resolve(import.meta.dirname, "../..")

describe("bench flags", () => {
  // A run would print its "bench: … s per run" line and build the server before anything else;
  // `--help` prints the usage and nothing more, and exits by itself. The bound on the child only
  // stops a run that did start (one takes minutes), far beyond the usage's own time.
  it("--help prints the usage and exits 0 without starting anything", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", "--help"], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000
    })
    expect(run.error, "ended by the bound: it started a run").toBeUndefined()
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/^Usage: npm run bench -- \[options\]/)
    expect(run.stdout).toContain("--skip-postgres")
    expect(
      run.stdout.split("\n").filter((l) => l.startsWith("bench:")),
      "no run's first line"
    ).toEqual([])
    expect(run.stderr, "no build output").toBe("")
  }, 150_000)

  it("an unknown flag is refused with the usage (exit 2), not run", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", "--quik"], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000
    })
    expect(run.error, "ended by the bound: it started a run").toBeUndefined()
    expect(run.status).toBe(2)
    expect(run.stderr).toContain("unknown option --quik")
    expect(run.stdout, "no run's first line").toBe("")
  }, 150_000)
})

describe("README", () => {
  const readme = readFileSync(path.join(root, "README.md"), "utf8")

  it("links only to files inside the repository, and each exists", () => {
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)[^)]*\)/g)].map((m) => m[1]!).filter((t) => !/^https?:/.test(t))
    expect(targets.length).toBeGreaterThan(10)
    for (const target of targets) {
      const resolved = path.resolve(root, target)
      expect(resolved.startsWith(root + path.sep) || resolved === root, target).toBe(true)
      expect(existsSync(resolved), target).toBe(true)
    }
    expect(readme).not.toMatch(/\.\.\/shared|`\.\.\//)
  })

  it("tells nobody to run a platform-specific opener (macOS open, xdg-open, start)", () => {
    const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split("\n"))
    for (const line of commands) expect(line, line).not.toMatch(/^\s*(open|xdg-open|start)\s/)
  })
})

describe("GET /invest", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(async () => {
    await server?.close()
  })

  it("redirects people to the white paper's token section, keeping the language choice", async () => {
    const res = await fetch(`${server.baseUrl}/invest?lang=pt`, { redirect: "manual" })
    expect(res.status).toBe(302)
    expect(res.headers.get("location")).toBe("/whitepaper?lang=pt#token")
    const page = await fetch(`${server.baseUrl}/invest`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).toContain('id="token"')
    // The agents' JSON stays where it was.
    expect((await fetch(`${server.baseUrl}/invest/api`)).headers.get("content-type")).toContain("application/json")
  })
})
