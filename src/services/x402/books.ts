// The x402 books checked against the chain (`npm run check`, docs/x402.md "The books"): every
// payment the ledger took in was paid on the chain (its settle transaction moved the amount from
// the payer to payTo), every refund the service recorded was paid on the chain (its transaction
// moved the amount to the payer), a payment called failed left its authorization unused, and each
// rail's ledger account holds minus what came in less what went back out.
import { Effect, Option } from "effect"
import type { StorageUnavailable } from "../../schema/platform/errors.js"
import { type PaymentRecord, type PaymentStatus, x402Account } from "../../schema/x402/x402.js"
import { LedgerStore } from "../ledger/Ledger.js"
import type { X402Config } from "../platform/AppConfig.js"
import { Chain, type ChainTransfer, type ChainUnavailable } from "./ports.js"
import { X402Store } from "./X402Store.js"

/** Statuses whose money the ledger took in (the settle was funded). */
const FUNDED: ReadonlySet<PaymentStatus> = new Set(["held", "settled", "refunding", "refunded", "kept_as_credits"])
/** Statuses whose money the ledger sent back out to the rail (refunded on the chain, or under way). */
const RETURNED: ReadonlySet<PaymentStatus> = new Set(["refunding", "refunded"])
/** Statuses still moving (the reconciliation decides them): counted, not judged. */
const OPEN: ReadonlySet<PaymentStatus> = new Set(["settling", "settlement_pending", "refunding"])

export interface X402BooksDrift {
  readonly paymentId: string
  readonly status: PaymentStatus
  readonly problem: string
}

export interface X402RailBooks {
  /** The rail's ledger account (`external:x402:<network>:<asset>`). */
  readonly account: string
  /** Its balance in the ledger, cents. */
  readonly balanceCents: number
  /** Minus (what the payments brought in − what went back out), cents. */
  readonly expectedCents: number
}

export interface X402Books {
  readonly ok: boolean
  /** Whether each payment was compared with the chain, or why not. */
  readonly chain: "compared" | "skipped: the simulated chain lives in the server's process"
  readonly payments: number
  /** Payments still being decided (settling, settle outcome unknown, refund under way). */
  readonly open: number
  readonly rails: ReadonlyArray<X402RailBooks>
  readonly drift: ReadonlyArray<X402BooksDrift>
}

const PAGE = 200
const CHAIN_READS = 8

const moved = (transfers: ReadonlyArray<ChainTransfer>, from: string | null, to: string, value: bigint) =>
  transfers.some(
    (t) => t.to === to.toLowerCase() && t.value === value && (from === null || t.from === from.toLowerCase())
  )

/**
 * The books of every x402 payment, and each compared with the chain when `compareChain` (a chain
 * that cannot be read fails the check with its reason rather than passing it).
 */
export const x402Books = Effect.fnUntraced(function* (
  config: X402Config,
  compareChain: boolean
): Effect.fn.Return<X402Books, StorageUnavailable | ChainUnavailable, X402Store | LedgerStore | Chain> {
  const store = yield* X402Store
  const ledger = yield* LedgerStore
  const chain = yield* Chain

  /** What the chain says of one payment: a problem, or none. */
  const judge = Effect.fnUntraced(function* (p: PaymentRecord) {
    const amount = BigInt(p.amountUnits)
    if (FUNDED.has(p.status)) {
      const settle = p.settleTransaction
      if (settle === null) return Option.some("the ledger took it in, but no settle transaction is recorded")
      if (settle.startsWith("nonce:")) {
        // Reconciled from the authorization's state when the node kept no log of the transaction.
        const state = yield* chain.authorizationState({ asset: p.asset, from: p.payer, nonce: p.nonce })
        if (state._tag === "Unused") return Option.some("the ledger took it in, but its authorization is unused")
      } else {
        const transfers = yield* chain.transfersIn({ transaction: settle, asset: p.asset })
        if (transfers === null) return Option.some(`settle transaction ${settle} is not on the chain`)
        if (!moved(transfers, p.payer, config.payTo, amount))
          return Option.some(`settle transaction ${settle} did not move ${p.amountUnits} from the payer to payTo`)
      }
    }
    if (p.status === "refunded") {
      const refund = p.refundTransaction
      if (refund === null) return Option.some("refunded, but no refund transaction is recorded")
      const transfers = yield* chain.transfersIn({ transaction: refund, asset: p.asset })
      if (transfers === null) return Option.some(`refund transaction ${refund} is not on the chain`)
      if (!moved(transfers, null, p.payer, amount))
        return Option.some(`refund transaction ${refund} did not move ${p.amountUnits} to the payer`)
    }
    if (p.status === "failed") {
      const state = yield* chain.authorizationState({ asset: p.asset, from: p.payer, nonce: p.nonce })
      if (state._tag === "Used")
        return Option.some(`called failed, but its authorization was used on the chain (${state.transaction ?? "?"})`)
    }
    return Option.none<string>()
  })

  const expected = new Map<string, number>()
  const drift: Array<X402BooksDrift> = []
  let payments = 0
  let open = 0
  let after: string | null = null
  for (;;) {
    const page: ReadonlyArray<PaymentRecord> = yield* store.page(after, PAGE)
    if (page.length === 0) break
    after = page[page.length - 1]!.id
    for (const p of page) {
      payments++
      if (OPEN.has(p.status)) open++
      const account = x402Account(p.network, p.asset)
      const inCents = (FUNDED.has(p.status) ? p.amountCents : 0) - (RETURNED.has(p.status) ? p.amountCents : 0)
      expected.set(account, (expected.get(account) ?? 0) - inCents)
    }
    if (compareChain) {
      const judged = yield* Effect.forEach(page, (p) => Effect.map(judge(p), (problem) => [p, problem] as const), {
        concurrency: CHAIN_READS
      })
      for (const [p, problem] of judged)
        if (Option.isSome(problem)) drift.push({ paymentId: p.id, status: p.status, problem: problem.value })
    }
  }
  const configured = x402Account(config.network, config.asset)
  if (!expected.has(configured)) expected.set(configured, 0)
  const rails = yield* Effect.forEach(
    [...expected].sort(([a], [b]) => a.localeCompare(b)),
    ([account, cents]) =>
      Effect.map(ledger.balance(account), (balanceCents) => ({ account, balanceCents, expectedCents: cents }))
  )
  return {
    ok: drift.length === 0 && rails.every((r) => r.balanceCents === r.expectedCents),
    chain: compareChain ? "compared" : "skipped: the simulated chain lives in the server's process",
    payments,
    open,
    rails,
    drift
  }
})
