// Planted bugs the money model must catch (`npm run test:mutation` runs this first): each mutant is a
// text edit of the money code, applied to a copy of src/ and test/ in a temporary folder (the working
// tree is never touched); the model suite then runs there on memory with its fixed seed and must
// FAIL. The unmutated copy runs first and must pass, so a broken copy cannot pass for a kill.
// `tsx test/model/mutants.ts [--only name,name] [--keep]`; exits 1 when a mutant survives or an
// edit no longer applies (the code it names moved: update the edit here).
import { spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { parseArgs } from "node:util"

interface Mutant {
  readonly name: string
  /** The promise the planted bug breaks. */
  readonly breaks: string
  readonly edits: ReadonlyArray<{ readonly file: string; readonly find: string; readonly replace: string }>
}

export const mutants: ReadonlyArray<Mutant> = [
  {
    name: "fee-halves-down",
    breaks: "the 85/15 split rounds the fee half up: off by one cent on a 250-cent price",
    edits: [
      {
        file: "src/schema/ledger/ledger.ts",
        find: "Math.floor((priceCents * PLATFORM_FEE_PERCENT + 50) / 100)",
        replace: "Math.floor((priceCents * PLATFORM_FEE_PERCENT + 49) / 100)"
      }
    ]
  },
  {
    name: "daily-limit-exclusive",
    breaks: "a purchase that lands exactly on the daily limit is allowed (`>` flipped to `>=`)",
    edits: [
      {
        file: "src/services/wallet/Wallet.ts",
        find: "if (today + priceCents > p.dailyLimitCents) {",
        replace: "if (today + priceCents >= p.dailyLimitCents) {"
      }
    ]
  },
  {
    name: "held-not-counted",
    breaks: "escrow held by running sagas counts against the daily and monthly limits",
    edits: [
      {
        file: "src/services/wallet/Wallet.ts",
        find: "const held = yield* store.heldCents(agentId)\n",
        replace: "const held = 0 * (yield* store.heldCents(agentId))\n"
      }
    ]
  },
  {
    name: "approval-charges-list-price",
    breaks: "an approval charges what it quoted, or nothing (void) when the price changed",
    edits: [
      {
        file: "src/services/purchases/Purchases.ts",
        find: "if (a.negotiationId === null && tier.priceCents !== a.quotedPriceCents) return",
        replace: "if (false && tier.priceCents !== a.quotedPriceCents) return"
      },
      {
        file: "src/services/purchases/Purchases.ts",
        find: "x.approval?.quotedPriceCents ?? x.priceCents",
        replace: "(x.approval?.negotiationId ? x.approval.quotedPriceCents : undefined) ?? x.priceCents"
      }
    ]
  },
  {
    name: "replay-charges-again",
    breaks: "a retried purchase (same idempotency key) answers the first and charges nothing",
    edits: [
      {
        file: "src/services/purchases/Purchases.ts",
        find: '      if (earlier) return { _tag: "Replayed", purchase: earlier }\n',
        replace:
          '      if (earlier && earlier.status === "pending_approval") return { _tag: "Replayed", purchase: earlier }\n'
      }
    ]
  },
  {
    name: "order-answer-at-deadline",
    breaks: "an answer at or after the order's deadline finds it expired (refunded), not delivered",
    edits: [
      {
        file: "src/services/purchases/Orders.ts",
        find: "if (Date.parse(order.deadlineAt) <= now) {",
        replace: "if (Date.parse(order.deadlineAt) < now) {"
      }
    ]
  },
  {
    name: "order-second-answer-refused",
    breaks: "the same answer to an order again is the order as it is (200), not OrderClosed",
    edits: [
      {
        file: "src/services/purchases/Orders.ts",
        find: "if (order.status === same) return { order, closed: false, changed: false }",
        replace: "if (order.status === same && false) return { order, closed: false, changed: false }"
      }
    ]
  },
  {
    name: "order-refund-keeps-negotiation",
    breaks: "a failed or expired order gives back the negotiation its buy redeemed",
    edits: [
      {
        file: "src/services/purchases/Orders.ts",
        find: "if (own && to.negotiationId !== null) yield* negotiated.release(to.negotiationId, to.transactionId)",
        replace: "if (own && to.negotiationId !== null) yield* Effect.void"
      }
    ]
  },
  {
    name: "order-escrow-not-held",
    breaks: "the escrow of pending orders counts against the daily and monthly limits",
    edits: [
      {
        file: "src/layers/wallet/WalletStore.memory.ts",
        find: "+ heldByOrders(o, agentId)),",
        replace: "+ 0 * heldByOrders(o, agentId)),"
      }
    ]
  }
]

const root = resolve(import.meta.dirname, "../..")

/** A copy of the tree the model suite needs, with `edits` applied; node_modules is linked, not copied. */
const copy = (edits: Mutant["edits"]) => {
  const dir = mkdtempSync(join(tmpdir(), "model-mutant-"))
  for (const entry of ["src", "test", "package.json", "tsconfig.json", "vitest.config.ts"])
    cpSync(join(root, entry), join(dir, entry), { recursive: true })
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir")
  for (const e of edits) {
    const path = join(dir, e.file)
    const text = readFileSync(path, "utf8")
    const at = text.indexOf(e.find)
    if (at < 0 || text.indexOf(e.find, at + 1) >= 0)
      throw new Error(
        `${e.file}: the edit's text ${JSON.stringify(e.find)} occurs ${at < 0 ? "nowhere" : "more than once"}; update test/model/mutants.ts`
      )
    writeFileSync(path, text.slice(0, at) + e.replace + text.slice(at + e.find.length))
  }
  return dir
}

/** Runs the model suite on memory in `dir`; the titles of its failed tests (empty: it passed). */
const runModel = (dir: string) => {
  const report = join(dir, "model-report.json")
  // The suite's own fixed seed and run count (what `npm test` runs), on memory.
  const env: NodeJS.ProcessEnv = { ...process.env, TEST_STORAGES: "memory", MODEL_SHRINK: "0" }
  delete env.MODEL_SEED
  delete env.MODEL_RUNS
  const r = spawnSync(
    "npx",
    ["vitest", "run", "test/model/money.model.test.ts", "--reporter=json", `--outputFile=${report}`],
    { cwd: dir, env, encoding: "utf8" }
  )
  let failed: Array<string> = []
  try {
    const json = JSON.parse(readFileSync(report, "utf8")) as {
      testResults: Array<{ assertionResults: Array<{ title: string; status: string; failureMessages: Array<string> }> }>
    }
    failed = json.testResults.flatMap((f) =>
      f.assertionResults
        .filter((a) => a.status === "failed")
        .map((a) => `${a.title.replace(/ \(seed \d+\)$/, "")}: ${firstLine(a.failureMessages)}`)
    )
  } catch {
    failed = [`no report (exit ${r.status}): ${(r.stderr ?? "").slice(-500)}`]
  }
  return { status: r.status, failed }
}

const firstLine = (messages: ReadonlyArray<string>) => {
  const text = messages.join("\n")
  const cause = /(step \d+[^\n]{0,160}|P\d: [^\n]{0,160}\n\s+[^\n]{0,200})/.exec(text)
  return (cause?.[0] ?? text.split("\n")[0]).replace(/\s+/g, " ").slice(0, 300)
}

const main = () => {
  const { values } = parseArgs({ options: { only: { type: "string" }, keep: { type: "boolean", default: false } } })
  const only = values.only?.split(",")
  const chosen = mutants.filter((m) => only === undefined || only.includes(m.name))
  const started = Date.now()
  const control = copy([])
  const base = runModel(control)
  if (!values.keep) rmSync(control, { recursive: true, force: true })
  if (base.status !== 0 || base.failed.length > 0) {
    console.error(`model mutants: the unmutated copy fails, so no mutant can be judged:\n${base.failed.join("\n")}`)
    process.exit(1)
  }
  console.log(`model mutants: the unmutated copy passes (${((Date.now() - started) / 1000).toFixed(1)} s)`)
  let survived = 0
  for (const m of chosen) {
    const t0 = Date.now()
    const dir = copy(m.edits)
    const r = runModel(dir)
    if (!values.keep) rmSync(dir, { recursive: true, force: true })
    const killed = r.status !== 0 && r.failed.length > 0
    if (!killed) survived++
    console.log(
      `${killed ? "killed  " : "SURVIVED"} ${m.name} (${((Date.now() - t0) / 1000).toFixed(1)} s) — ${m.breaks}${killed ? `\n         ${r.failed.join("\n         ")}` : ""}`
    )
  }
  console.log(
    `model mutants: ${chosen.length - survived} of ${chosen.length} killed in ${((Date.now() - started) / 1000).toFixed(0)} s`
  )
  process.exit(survived === 0 ? 0 : 1)
}

main()
