// Operator check (`npm run check`): recomputes what the service keeps as running figures and
// compares — the ledger (postings balance to zero, every stored balance equals the sum of its
// postings, no wallet or escrow below zero), the agents' spend per UTC day (the totals the
// wallet limits read) and their counters (stats, reputation inputs, top services, categories;
// migration 0018) against the transactions, reviews and disputes; with x402 configured, its payments
// against the ledger and the chain (src/services/x402/books.ts: each settle and refund transaction
// read on the chain; skipped for the simulated chain, which lives in the server's process). Prints
// one JSON document; exit code 1 on drift.
// Runs on the configured storage: STORAGE=postgres (any time) or the embedded DATA_DIR (with the
// server stopped: one process owns the folder).
import { Cause, Effect, Exit, Layer, Logger, Option } from "effect"
import { loadConfig } from "../layers/config.js"
import { StorageLive } from "../layers/app.js"
import { AppConfig } from "../services/platform/AppConfig.js"
import { LedgerStore } from "../services/ledger/Ledger.js"
import { AnalyticsStore } from "../services/reputation/AnalyticsStore.js"
import { WalletStore } from "../services/wallet/WalletStore.js"
import { x402Books } from "../services/x402/books.js"
import { X402PortsLive } from "../layers/x402/X402Ports.js"

const program = Effect.gen(function* () {
  const config = yield* AppConfig
  const ledger = yield* Effect.flatMap(LedgerStore, (s) => s.check)
  const spendDrift = yield* Effect.flatMap(WalletStore, (s) => s.spendDrift)
  const counterDrift = yield* Effect.flatMap(AnalyticsStore, (s) => s.counterDrift)
  const x402 = Option.isNone(config.x402)
    ? null
    : yield* x402Books(config.x402.value, config.x402.value.facilitator._tag !== "simulated")
  return {
    ok: ledger.ok && spendDrift.length === 0 && counterDrift.length === 0 && (x402?.ok ?? true),
    ledger,
    spendDrift,
    counterDrift,
    ...(x402 === null ? {} : { x402 })
  }
})

/** Logs (migrations applied, …) as logfmt lines on stderr: stdout carries only the report. */
const StderrLogger = Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)])

const main = async () => {
  const config = await Effect.runPromise(loadConfig).catch((e: Error) => {
    process.stderr.write(`${e.message}\n`)
    process.exit(78)
  })
  if (config.storage === "memory") {
    process.stderr.write(
      "STORAGE is memory: its data lives inside the server process; there is nothing here to check.\n"
    )
    process.exit(2)
  }
  const configLayer = Layer.succeed(AppConfig, { ...config, workers: false })
  const storage = Layer.merge(StorageLive, X402PortsLive).pipe(Layer.provideMerge(configLayer))
  const exit = await Effect.runPromiseExit(
    Effect.scoped(program.pipe(Effect.provide(Layer.provideMerge(storage, StderrLogger))))
  )
  if (Exit.isFailure(exit)) {
    const failure = Cause.findErrorOption(exit.cause)
    const message =
      failure._tag === "Some"
        ? String((failure.value as { message?: unknown }).message ?? failure.value)
        : Cause.pretty(exit.cause)
    process.stderr.write(`${message}\n`)
    process.exit(69)
  }
  process.stdout.write(`${JSON.stringify(exit.value, null, 2)}\n`)
  process.exit(exit.value.ok ? 0 : 1)
}

void main()
