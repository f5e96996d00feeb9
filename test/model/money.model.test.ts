// Reference-model test of the money path, on every storage: fast-check generates sequences of
// purchases (idempotency keys, deliveries the platform's seller simulates), top-ups, policy and
// limit changes, approvals and declines, price changes while approvals wait, negotiations with and
// without terms and purchases at their prices, pay-per-request calls, sagas (several at once for
// one buyer; slow deliveries that hold escrow across steps, driven by the run's own clock and
// runDue), refunds through disputes, clock jumps, concurrent purchases, injected storage failures
// and restarts (world.ts); harness.ts runs each against the real services and the pure model
// (model.ts) side by side and checks the owner's promises on the raw data (invariants.ts). A
// fixed seed by default (MODEL_SEED overrides, MODEL_PATH replays one failing run; MODEL_RUNS — 60 on memory, 12 on the SQL storages
// by default — and MODEL_OPS size a run; `npm run test:model` is the long run with a random seed);
// a failure prints the seed and the operations. Then one written-out scenario per owner's promise
// (promises.ts).
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { storageCases } from "../fixtures/db.js"
import { property, run, type Stats } from "./harness.js"
import { promises } from "./promises.js"
import { storageFor } from "./system.js"
import { scenarioArb } from "./world.js"

/** The seed `npm test` and CI run: fixed, so a green run means the same thing every time. */
const DEFAULT_SEED = 20261126
/** Runs per storage: memory is cheap (60 runs in a few seconds), the SQL storages take ~2 s a run. */
const runsFor = (storage: string) => Number(process.env.MODEL_RUNS ?? (storage === "memory" ? 60 : 12))
const OPS = Number(process.env.MODEL_OPS ?? 30)
const SEED = process.env.MODEL_SEED !== undefined ? Number(process.env.MODEL_SEED) : DEFAULT_SEED

/**
 * What the generated runs must reach on every storage at the default seed, each at least once: every
 * kind of step, and the outcomes the owner's and the seller's promises are about. A change to the
 * generator (or to what the services answer) that stops reaching one fails here instead of leaving
 * that promise silently untested.
 */
const STEP_KINDS = [
  "buy",
  "topup",
  "policy",
  "limit",
  "autonomy",
  "approve",
  "decline",
  "refund",
  "reprice",
  "negotiate",
  "buyNegotiated",
  "answer",
  "late",
  "expire",
  "paidCall",
  "advance",
  "concurrent",
  "sagas",
  "fault",
  "restart"
] as const
const STEP_MINIMUMS: ReadonlyArray<{ readonly says: string; readonly pattern: RegExp; readonly sql?: boolean }> = [
  ...STEP_KINDS.map((k) => ({ says: `a ${k} step`, pattern: new RegExp(`^op:${k}$`) })),
  { says: "a buy completed at once", pattern: /^(buy|concurrent)→completed$/ },
  { says: "a buy waiting on its agent seller (order held in escrow)", pattern: /^(buy|concurrent)→ordered$/ },
  { says: "a buy waiting for the owner's approval", pattern: /^(buy|concurrent)→pending$/ },
  {
    says: "a buy refused by a spending limit",
    pattern: /^(buy|concurrent)→refused:PolicyViolation:(daily|monthly|perTransaction)Limit$/
  },
  { says: "a buy refused for want of credits", pattern: /^(buy|concurrent)→refused:InsufficientCredits$/ },
  { says: "an order delivered before its deadline", pattern: /^(answer|answers at once)→delivered$/ },
  { says: "a second answer to an ended order refused", pattern: /^(answer|answers at once)→refused:OrderClosed:/ },
  { says: "an answer 1 ms before the deadline delivered", pattern: /^late -1( with the sweep)?→delivered/ },
  {
    says: "an answer exactly at the deadline refused, the order expired",
    pattern: /^late 0→refused:OrderClosed:expired$/
  },
  {
    says: "an answer after the deadline refused",
    pattern: /^late [1-9]\d*( with the sweep)?→refused:OrderClosed:expired/
  },
  { says: "an approval approved into a purchase", pattern: /^approve→completed$/ },
  { says: "a paid call completed", pattern: /^paidCall→completed$/ },
  { says: "a negotiated price bought", pattern: /^buyNegotiated→(completed|ordered)$/ },
  { says: "a saga completed", pattern: /^sagas→saga completed$/ },
  { says: "a saga compensated", pattern: /^sagas→saga compensated$/ },
  { says: "a refund through a dispute", pattern: /^refund→ok$/ },
  { says: "a storage fault tripped mid-purchase", pattern: /^fault tripped:/ },
  { says: "the ledger checked by plain SQL", pattern: /^checked by SQL$/, sql: true }
]

// ---- the tests, per storage --------------------------------------------------------------------------

for (const c of storageCases) {
  describe.skipIf(c.skip !== undefined)(`money model [${c.name}]`, () => {
    const RUNS = runsFor(c.name)
    it(
      `${RUNS} generated runs of up to ${OPS} operations agree with the model and keep the owner's promises (seed ${SEED})`,
      async () => {
        console.log(
          `[money model ${c.name}] seed ${SEED}, ${RUNS} runs × ≤ ${OPS} ops; replay: MODEL_SEED=${SEED} MODEL_RUNS=${RUNS} MODEL_OPS=${OPS}`
        )
        // Shrinking replays runs; on the SQL storages that takes minutes and a race may not come back, so
        // there a failure is reported as found (MODEL_SHRINK=1 shrinks anyway, MODEL_SHRINK=0 never).
        const shrink = process.env.MODEL_SHRINK === undefined ? c.name === "memory" : process.env.MODEL_SHRINK !== "0"
        const stats = await Effect.runPromise(
          property(c, scenarioArb(OPS), {
            seed: SEED,
            numRuns: RUNS,
            // MODEL_PATH (the "path" a failure prints) replays that one run at once, with no runs before it
            ...(process.env.MODEL_PATH !== undefined ? { path: process.env.MODEL_PATH } : {}),
            endOnFailure: !shrink,
            verbose: 1,
            includeErrorInReport: true
          })
        )
        console.log(
          `[money model ${c.name}] ${[...stats]
            .sort()
            .map(([k, n]) => `${k} ${n}`)
            .join(", ")}`
        )
        // The property threw at the first disagreement. Not vacuous: every kind of step ran, and each
        // outcome a promise is about came up at least once (a run that never reaches one proves nothing of it).
        const missing = STEP_MINIMUMS.filter(({ pattern, sql }) => {
          if (sql === true && c.name === "memory") return false
          return [...stats].filter(([k]) => pattern.test(k)).reduce((sum, [, n]) => sum + n, 0) < 1
        }).map(({ says }) => says)
        // Pinned at the default seed and run count (what npm test and CI run); another seed or size (the
        // long run, a replay) reaches what it reaches, and says what it missed.
        const pinned =
          SEED === DEFAULT_SEED &&
          [process.env.MODEL_RUNS, process.env.MODEL_OPS, process.env.MODEL_PATH].every((v) => v === undefined)
        expect(pinned ? missing : [], "steps the generated runs never reached").toEqual([])
        if (!pinned && missing.length > 0)
          console.log(`[money model ${c.name}] not reached at this seed: ${missing.join("; ")}`)
      },
      60_000 + RUNS * 20_000
    ) // generous: a run is well under a second on memory, a few on Postgres

    it("the owner's promises, one written-out scenario each", async () => {
      const broken = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const storage = yield* storageFor(c)
            const stats: Stats = new Map()
            const out: Array<string> = []
            for (const p of promises) {
              const exit = yield* Effect.exit(run(stats, storage, p.sc))
              if (Exit.isFailure(exit)) out.push(`${p.name}\n  ${String(Cause.squash(exit.cause))}`)
            }
            return out
          })
        ) as Effect.Effect<Array<string>, unknown>
      )
      expect(broken, `${broken.length} promise(s) broken:\n${broken.join("\n")}`).toEqual([])
    }, 120_000)
  })
}
