// Smoke test: the example agent (examples/agent.ts) runs as its own process against a server
// started in-process, exits 0 and prints every step.
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../fixtures/server.js"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ config: { negotiationDelayMs: 100 } })
})
afterAll(async () => {
  await server?.close()
})

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "examples/agent.ts", ...args], {
      cwd: process.cwd(),
      env: process.env
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("examples/agent.ts", () => {
  it("gets a key, funds, discovers, browses, negotiates, buys through the saga, reviews — and exits 0", async () => {
    const result = await run(["--url", server.baseUrl, "--poll-ms", "50", "--timeout-s", "30"])
    if (result.code !== 0) console.error(result.stdout, result.stderr)
    expect(result.code).toBe(0)
    const steps = [...result.stdout.matchAll(/^step (\d)\/7 (\w+): (.*)$/gm)].map((m) => [Number(m[1]), m[2]])
    expect(steps).toEqual([
      [1, "key"],
      [2, "wallet"],
      [3, "discover"],
      [4, "browse"],
      [5, "negotiate"],
      [6, "buy"],
      [7, "review"]
    ])
    expect(result.stdout).toMatch(/^step 2\/7 wallet: topped up \$200\.00: balance \$200\.00/m)
    expect(result.stdout).toMatch(/^step 5\/7 negotiate: agreed \$\d+\.\d\d \(list \$\d+\.\d\d\)/m)
    expect(result.stdout).toMatch(/^step 6\/7 buy: saga saga_\S+ completed: paid \$\d+\.\d\d/m)
    for (const name of ["quote", "escrow", "deliver", "settle", "confirm"])
      expect(result.stdout).toMatch(new RegExp(`^    ${name}: succeeded`, "m"))
    expect(result.stdout).toMatch(/^step 7\/7 review: transaction \S+ \(completed, .*\) reviewed 5\/5$/m)
    expect(result.stdout).toMatch(/^done$/m)
  }, 60_000)

  it("exits 1 with a readable line when the server is not there", async () => {
    const result = await run(["--url", "http://127.0.0.1:9", "--timeout-s", "5"])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^example agent failed: /m)
  }, 30_000)
})
