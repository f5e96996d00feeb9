// Starts `npm run devnet` the way a developer does (its entry, devnet/main.ts, as its own process) and
// reads the one JSON line it prints. The chain, the token and the facilitator are all real processes
// and sockets on 127.0.0.1; nothing here reaches into them except through their public interfaces.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import path from "node:path"
import { createInterface } from "node:readline"
import { createPublicClient, http, parseAbi, type Hex } from "viem"
import type { DevnetInfo } from "../../devnet/start.js"

const root = path.resolve(import.meta.dirname, "..", "..")

export interface RunningDevnet {
  readonly info: DevnetInfo
  /** Everything the devnet logged on stderr so far. */
  readonly log: () => string
  /** SIGTERM, then waits for the exit. */
  readonly stop: () => Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly child: ChildProcessWithoutNullStreams
}

export const startDevnetProcess = (env: Record<string, string> = {}): Promise<RunningDevnet> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "devnet/main.ts")], {
      cwd: root,
      env: { ...process.env, ...env }
    })
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      child.once("exit", (code, signal) => done({ code, signal }))
    )
    const stop = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      return exited
    }
    const lines: Array<string> = []
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line)
      if (lines.length > 1) return
      try {
        resolve({ info: JSON.parse(line) as DevnetInfo, log: () => stderr, stop, child })
      } catch (e) {
        void stop()
        reject(new Error(`the devnet's first line is not JSON: ${line}\n${stderr}`, { cause: e }))
      }
    })
    void exited.then(({ code }) =>
      reject(new Error(`the devnet exited (${code}) before it printed its line:\n${stderr}`))
    )
  })

export const tokenAbi = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function transfer(address to, uint256 value) returns (bool)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)"
])

export const reader = (info: DevnetInfo) => {
  const client = createPublicClient({ transport: http(info.rpcUrl), pollingInterval: 50 })
  return {
    client,
    balanceOf: (who: Hex) =>
      client.readContract({ address: info.asset, abi: tokenAbi, functionName: "balanceOf", args: [who] })
  }
}
