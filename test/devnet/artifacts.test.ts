// The compiled contracts the devnet deploys are committed beside their sources (contracts/); they must
// be exactly what the pinned solc-js makes of those sources, so an edit without `npm run devnet:compile`
// fails here instead of deploying stale code. The compiler runs in a child process (`devnet/compile.ts
// --check`): solc-js holds some 250 MB that the test worker, shared with other files, should not keep.
import { spawn } from "node:child_process"
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { artifactPath, contractNames, contractsDir } from "../../devnet/artifacts.js"

const root = path.resolve(import.meta.dirname, "..", "..")

const check = (...args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(root, "devnet/compile.ts"), "--check", ...args],
      {
        cwd: root
      }
    )
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stderr }))
  })

// A copy of contracts/ whose token source says something else than its committed artifact.
const stale = mkdtempSync(path.join(tmpdir(), "devnet-contracts-"))
afterAll(() => rmSync(stale, { recursive: true, force: true }))

describe("contracts/*.json", () => {
  it("equal, byte for byte, what solc-js makes of contracts/*.sol — and a stale copy is told apart", async () => {
    for (const name of contractNames) {
      copyFileSync(path.join(contractsDir, `${name}.sol`), path.join(stale, `${name}.sol`))
      copyFileSync(artifactPath(name), artifactPath(name, stale))
    }
    const token = path.join(stale, "DevnetUSD.sol")
    writeFileSync(token, readFileSync(token, "utf8").replace('symbol = "dUSD"', 'symbol = "dUSX"'))

    const [committed, edited] = await Promise.all([check(), check("--contracts", stale)])
    expect(committed).toEqual({
      code: 0,
      stderr: expect.stringMatching(/^up to date: DevnetUSD\.json, Multicall\.json/m)
    })
    expect(edited.code).toBe(1)
    expect(edited.stderr).toMatch(/^stale: \S*DevnetUSD\.json differ from a compile of their sources/m)
  })
})
