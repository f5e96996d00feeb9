// MPP health (GET /api/v1/mpp/health): a storage round trip, the ledger entries of the most recent
// paid challenges reconciled (a purchase each, or an escrow hold for a real seller's call), the
// platform fee account read — each with its latency.
import { Clock, Effect } from "effect"
import { PLATFORM_FEES, walletAccount } from "../../schema/ledger/ledger.js"
import { MppHealth, paymentMethods } from "../../schema/mpp/protocol.js"
import { Ledger } from "../ledger/Ledger.js"
import { traced } from "../platform/Tracing.js"
import { MppStore } from "./MppStore.js"

/** How many of the most recent paid challenges the check reconciles. */
const SAMPLE = 20

const timed = Effect.fnUntraced(function* <A, E, R>(effect: Effect.Effect<A, E, R>) {
  const t0 = performance.now()
  const a = yield* effect
  return [a, Math.round((performance.now() - t0) * 100) / 100] as const
})

/**
 * Real health: a storage round trip, the ledger entries of the most recent paid challenges
 * reconciled (one purchase or escrow hold each, balanced, the amount charged), the platform fee account read.
 */
export const makeHealth = Effect.gen(function* () {
  const store = yield* MppStore
  const ledger = yield* Ledger

  /** The sampled challenges whose ledger entries do not reconcile. */
  const reconcile = Effect.gen(function* () {
    const paid = yield* store.recentPaid(SAMPLE)
    const bad: Array<string> = []
    for (const c of paid) {
      // Settled by its transaction (the settlement writer); calls paid before it were referenced
      // by the challenge.
      const byTransaction = c.transactionId ? yield* ledger.entriesByReference(c.transactionId) : []
      const entries = byTransaction.length > 0 ? byTransaction : yield* ledger.entriesByReference(c.id)
      const balanced = entries.every((e) => e.postings.reduce((s, p) => s + p.amount, 0) === 0)
      // A call of a real seller was paid into its order's escrow: one hold, ended at most once
      // (settled to the seller or given back); a simulated seller's call is one purchase entry.
      const holds = entries.filter((e) => e.kind === "escrow_hold")
      const ends = entries.filter((e) => e.kind === "escrow_settle" || e.kind === "escrow_release")
      const charges = holds.length > 0 ? holds : entries.filter((e) => e.kind === "purchase")
      const charged = charges[0]?.postings.find((p) => p.account === walletAccount(c.agentId))?.amount
      if (charges.length !== 1 || ends.length > 1 || !balanced || charged !== -c.amountCents) bad.push(c.id)
    }
    return { checked: paid.length, bad }
  })

  return Effect.gen(function* () {
    const [, storageMs] = yield* timed(store.ping)
    const [sample, ledgerMs] = yield* timed(reconcile)
    const [fees, creditsMs] = yield* timed(ledger.balance(PLATFORM_FEES))
    const ok = sample.bad.length === 0 && fees >= 0
    return MppHealth.make({
      status: ok ? "ok" : "degraded",
      protocolStatus: "pending_early_access",
      checkedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
      checks: {
        storage: { ok: true, latencyMs: storageMs, detail: "storage round trip" },
        ledger: {
          ok: sample.bad.length === 0,
          latencyMs: ledgerMs,
          detail:
            sample.bad.length === 0
              ? `${sample.checked} most recent paid requests reconcile with the ledger ` +
                "(one balanced purchase or escrow hold each)"
              : `ledger mismatch for ${sample.bad.join(", ")}`
        },
        credits: {
          ok: fees >= 0,
          latencyMs: creditsMs,
          detail: "the credit method can post to the ledger (platform fee account readable)"
        }
      },
      methods: paymentMethods.map((m) => ({ id: m.id, status: m.status }))
    })
  }).pipe(traced("Mpp.health"))
})
