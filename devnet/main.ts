// `npm run devnet`: starts the devnet (devnet/start.ts), prints its description as exactly one JSON line
// on stdout, logs on stderr, and runs until SIGINT or SIGTERM, then stops everything and exits 0.
// Configuration (all optional): DEVNET_CHAIN_ID (31337), DEVNET_RPC_PORT and DEVNET_FACILITATOR_PORT
// (free ports), DEVNET_PAYERS (3), DEVNET_TRACE=1 (log every JSON-RPC call). docs/devnet.md.
import { startDevnet } from "./start.js"

const log = (line: string) => process.stderr.write(`[devnet] ${line}\n`)

const intFromEnv = (name: string, fallback: number, min: number, max: number) => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`)
  }
  return value
}

const main = async () => {
  // A signal during start-up waits for the start to finish (or fail), then stops what started.
  let stopping = false
  const started = startDevnet({
    chainId: intFromEnv("DEVNET_CHAIN_ID", 31337, 1, 2 ** 32),
    rpcPort: intFromEnv("DEVNET_RPC_PORT", 0, 0, 65535),
    facilitatorPort: intFromEnv("DEVNET_FACILITATOR_PORT", 0, 0, 65535),
    payers: intFromEnv("DEVNET_PAYERS", 3, 1, 100),
    trace: process.env.DEVNET_TRACE === "1",
    log
  })
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    log(`${signal}: stopping`)
    started
      .then((devnet) => devnet.stop())
      .then(
        () => process.exit(0),
        (e: unknown) => {
          log(`stop failed: ${e instanceof Error ? e.message : String(e)}`)
          process.exit(1)
        }
      )
  }
  process.on("SIGINT", () => stop("SIGINT"))
  process.on("SIGTERM", () => stop("SIGTERM"))
  const devnet = await started
  if (!stopping) process.stdout.write(`${JSON.stringify(devnet.info)}\n`)
}

main().catch((e: unknown) => {
  log(e instanceof Error ? e.message : String(e))
  process.exit(1)
})
