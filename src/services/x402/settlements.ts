// The x402 payment's money steps (docs/x402.md), shared by the paid call and the reconciliation:
// the purchase tried and rolled back before any settle (the owner's policy refuses first), the
// settled payment funding its purchase (the inflow and the purchase in one unit of work), and one
// open payment decided from the chain — an unknown settle, a held order that ended, a refund.
import { Clock, Data, Effect, Option } from "effect"
import type { PolicyViolation } from "../../schema/commerce/wallets.js"
import type { ApprovalRequired, SellerFailed } from "../../schema/mpp/problems.js"
import type { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type { PaymentRecord } from "../../schema/x402/x402.js"
import type { X402Config } from "../platform/AppConfig.js"
import { Transactor } from "../platform/Db.js"
import { ExternalFunding } from "../purchases/ExternalFunding.js"
import { type Bought, Purchases } from "../purchases/Purchases.js"
import { PurchaseStore } from "../purchases/PurchaseStore.js"
import { inflowOf, isTagged, offerOfRecord, refusalOf, requestOf } from "./answers.js"
import { Chain, Facilitator, Refunds, type SignedRefund } from "./ports.js"
import { requirementsOf } from "./wire.js"
import { X402Store } from "./X402Store.js"

/** Most times one refund is replaced with a higher fee (each an eighth or more above the last: ×3.2 at most). */
export const REFUND_MAX_BUMPS = 10

/** Internal: the purchase tried and rolled back (nothing written), with what it came to. */
class DryRun extends Data.TaggedError("DryRun")<{ readonly bought: Bought }> {}

/** How long a payment may stay `settling` before the reconciliation asks the chain (its request may still run). */
const SETTLING_GRACE_MS = 60_000

export const makeSettlements = Effect.gen(function* () {
  const store = yield* X402Store
  const facilitator = yield* Facilitator
  const chain = yield* Chain
  const refunds = yield* Refunds
  const funding = yield* ExternalFunding
  const purchases = yield* Purchases
  const transactions = yield* PurchaseStore
  const { atomically } = yield* Transactor
  const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  /** Tries the purchase and rolls it back: what it would come to, or its refusal (nothing settled). */
  const dryRun = (config: X402Config, p: PaymentRecord) =>
    atomically(
      Effect.flatMap(funding.purchase(inflowOf(config, p, "dry run"), requestOf(p)), (bought) =>
        Effect.fail(new DryRun({ bought }))
      )
    ).pipe(
      Effect.catch(
        (
          e
        ): Effect.Effect<
          void,
          ApprovalRequired | SellerFailed | PolicyViolation | NotFound | InvalidInput | StorageUnavailable
        > => {
          if (isTagged(e, "DryRun")) {
            const refusal = refusalOf((e as DryRun).bought, p)
            return refusal === undefined ? Effect.void : Effect.fail(refusal)
          }
          if (isTagged(e, "InsufficientCredits") || isTagged(e, "NegotiationUnusable")) return Effect.die(e)
          return Effect.fail(e as PolicyViolation | NotFound | InvalidInput | StorageUnavailable)
        }
      )
    )

  /**
   * After the asset moved: the inflow and the purchase in one unit of work, the payment `held` (an
   * order in escrow) or `settled`; a purchase refused now (the owner changed a limit between the
   * dry run and the settle) leaves the payment `refunding`: the money goes back on the chain.
   */
  const fund = Effect.fnUntraced(function* (config: X402Config, id: string, transaction: string) {
    const outcome = yield* atomically(
      Effect.gen(function* () {
        const p = yield* store.getForUpdate(id)
        if (p === undefined || (p.status !== "settling" && p.status !== "settlement_pending")) {
          return { _tag: "Already" as const, payment: p }
        }
        const memo = `x402 ${config.network} ${transaction}`
        // A refusal here is typed (written before anything the purchase writes): the inflow stays.
        const bought = yield* funding.purchase(inflowOf(config, p, memo), requestOf(p)).pipe(
          Effect.map((b) => ({ ok: true as const, b })),
          Effect.catch((e) =>
            e._tag === "StorageUnavailable" ? Effect.fail(e) : Effect.succeed({ ok: false as const, e })
          )
        )
        const at = yield* nowIso
        if (!bought.ok || (bought.b._tag !== "Completed" && bought.b._tag !== "Placed")) {
          // Refused after settling (a limit changed since the dry run): the inflow, written, goes back out.
          yield* funding
            .returnToSource({ ...inflowOf(config, p, `x402 refund of ${p.id}: refused`), buyerAgentId: p.buyerAgentId })
            .pipe(Effect.orDie)
          const next: PaymentRecord = { ...p, status: "refunding", settleTransaction: transaction, updatedAt: at }
          yield* store.update(next)
          return {
            _tag: "Refused" as const,
            payment: next,
            why: bought.ok ? bought.b._tag : String((bought.e as { message?: unknown }).message ?? bought.e)
          }
        }
        const b = bought.b
        const txId = b._tag === "Completed" ? b.tx.id : b.order.id
        const next: PaymentRecord = {
          ...p,
          status: b._tag === "Completed" ? "settled" : "held",
          settleTransaction: transaction,
          transactionId: txId,
          updatedAt: at
        }
        yield* store.update(next)
        return { _tag: "Funded" as const, payment: next, bought: b }
      })
    )
    return outcome
  })

  /** One open payment decided, if it can be now; whether it changed. */
  const reconcileOne: (config: X402Config, id: string) => Effect.Effect<boolean, StorageUnavailable> =
    Effect.fnUntraced(function* (config: X402Config, id: string): Effect.fn.Return<boolean, StorageUnavailable> {
      const p = yield* store.get(id)
      if (p === undefined) return false
      const at = yield* nowIso
      switch (p.status) {
        case "settling":
        case "settlement_pending": {
          // A payment still `settling` may have its request running: left to it for a while.
          if (
            p.status === "settling" &&
            Date.parse(p.updatedAt) > (yield* Clock.currentTimeMillis) - SETTLING_GRACE_MS
          ) {
            return false
          }
          const state = yield* chain
            .authorizationState({ asset: p.asset, from: p.payer, nonce: p.nonce })
            .pipe(Effect.option)
          if (Option.isNone(state)) return false
          if (state.value._tag === "Used") {
            const funded = yield* fund(config, p.id, state.value.transaction ?? `nonce:${p.nonce}`)
            if (funded._tag === "Funded" && funded.bought._tag === "Placed") yield* purchases.settled(funded.bought)
            if (funded._tag === "Refused") yield* reconcileOne(config, p.id)
            return true
          }
          // Not used: settle again while the authorization is valid (the nonce makes it once), else nothing moved.
          const now = yield* chain.now.pipe(Effect.option)
          if (Option.isNone(now)) return false
          if (now.value >= p.validBefore) {
            yield* store.update({ ...p, status: "failed", updatedAt: at })
            return true
          }
          const again = yield* facilitator
            .settle(p.payload, requirementsOf(config, offerOfRecord(p)))
            .pipe(Effect.option)
          if (Option.isNone(again)) return false
          if (!again.value.success) {
            // Refused now: perhaps because the first settle landed meanwhile (its nonce is used). Ask again.
            const after = yield* chain
              .authorizationState({ asset: p.asset, from: p.payer, nonce: p.nonce })
              .pipe(Effect.option)
            if (Option.isNone(after)) return false
            if (after.value._tag === "Used") {
              const funded = yield* fund(config, p.id, after.value.transaction ?? `nonce:${p.nonce}`)
              if (funded._tag === "Funded" && funded.bought._tag === "Placed") yield* purchases.settled(funded.bought)
              return true
            }
            yield* store.update({ ...p, status: "failed", updatedAt: at })
            return true
          }
          const funded = yield* fund(config, p.id, again.value.transaction)
          if (funded._tag === "Funded" && funded.bought._tag === "Placed") yield* purchases.settled(funded.bought)
          return true
        }
        case "held": {
          if (p.transactionId === null) return false
          const row = yield* transactions.getTransaction(p.transactionId)
          if (row === undefined || row.tx.status === "pending") return false
          if (row.tx.status === "completed") {
            yield* store.update({ ...p, status: "settled", updatedAt: at })
            return true
          }
          // Failed or expired: the escrow came back to the wallet; out to the rail, then refunded on the chain.
          const out = yield* atomically(
            Effect.gen(function* () {
              const locked = yield* store.getForUpdate(p.id)
              if (locked === undefined || locked.status !== "held") return "moved" as const
              const returned = yield* funding
                .returnToSource({
                  ...inflowOf(config, locked, `x402 refund of ${locked.id} (order ${locked.transactionId} failed)`),
                  buyerAgentId: locked.buyerAgentId
                })
                .pipe(
                  Effect.as(true),
                  Effect.catchTags({ InsufficientFunds: () => Effect.succeed(false), InvalidInput: Effect.die })
                )
              yield* store.update({ ...locked, status: returned ? "refunding" : "kept_as_credits", updatedAt: at })
              return returned ? ("refunding" as const) : ("kept" as const)
            })
          )
          if (out === "refunding") yield* reconcileOne(config, p.id)
          return true
        }
        case "refunding":
          return yield* refundOnChain(config, p, at)
        default:
          return false
      }
    })

  /**
   * A `refunding` payment's transfer back to the payer, exactly once on the chain: the refund is
   * signed and recorded on the payment (under its row lock: one attempt however many passes run)
   * before it is first sent; every later pass sends that same transaction again, which the chain
   * mines at most once. Only when the chain says it never can be mined (its nonce spent by another
   * transaction) or it reverted (nothing moved) is the attempt cleared, for a new one to be signed.
   * A lost receipt, a timeout or a crash between send and record is therefore never a second refund.
   *
   * A refund left unmined for `refundBumpAfterMs` (its fee below what the chain takes now) is
   * replaced: the same transfer at the same nonce with a higher fee, recorded — with the hashes it
   * replaces — before it is sent. The chain mines at most one transaction per nonce, so whichever of
   * them is mined is the refund, and none is ever "dropped" while one of them was mined.
   */
  const refundOnChain = Effect.fnUntraced(function* (
    config: X402Config,
    p: PaymentRecord,
    at: string
  ): Effect.fn.Return<boolean, StorageUnavailable> {
    let attempt: SignedRefund | null = p.refundAttempt
    if (attempt === null) {
      const signed = yield* refunds
        .sign({ asset: p.asset, to: p.payer, amount: BigInt(p.amountUnits) })
        .pipe(Effect.option)
      if (Option.isNone(signed)) return false
      attempt = yield* record(p.id, null, { ...signed.value, signedAt: at })
      if (attempt === null) return true
    }
    let state = yield* refunds.send(attempt).pipe(Effect.option)
    if (Option.isNone(state)) return false
    if (state.value._tag === "Open") {
      const stuck = attempt
      const age = stuck.signedAt === undefined ? Infinity : Date.parse(at) - Date.parse(stuck.signedAt)
      if (age < config.refundBumpAfterMs || (stuck.replaces?.length ?? 0) >= REFUND_MAX_BUMPS) return false
      const bumped = yield* refunds
        .sign({ asset: p.asset, to: p.payer, amount: BigInt(p.amountUnits), replacing: stuck })
        .pipe(Effect.option)
      if (Option.isNone(bumped)) return false
      const replacement = yield* record(p.id, stuck.transaction, {
        ...bumped.value,
        replaces: [...(stuck.replaces ?? []), stuck.transaction],
        signedAt: at
      })
      if (replacement === null || replacement.transaction !== bumped.value.transaction) return true
      yield* Effect.logInfo(
        `x402 payment ${p.id}: refund ${stuck.transaction} unmined after ${age} ms, replaced by ${replacement.transaction} (a higher fee, nonce ${replacement.nonce})`
      )
      attempt = replacement
      state = yield* refunds.send(attempt).pipe(Effect.option)
      if (Option.isNone(state) || state.value._tag === "Open") return true
    }
    const outcome = state.value
    const sent = attempt
    return yield* atomically(
      Effect.gen(function* () {
        const locked = yield* store.getForUpdate(p.id)
        if (
          locked === undefined ||
          locked.status !== "refunding" ||
          locked.refundAttempt?.transaction !== sent.transaction
        )
          return false
        yield* store.update(
          outcome._tag === "Mined" && outcome.success
            ? {
                ...locked,
                status: "refunded",
                refundTransaction: outcome.transaction,
                refundAttempt: null,
                updatedAt: at
              }
            : { ...locked, refundAttempt: null, updatedAt: at }
        )
        return true
      })
    )
  })

  /**
   * Records `next` as the payment's refund attempt under its row lock, if the attempt recorded is
   * still `expected` (null: none) and the payment still `refunding`. Answers the attempt recorded
   * then (`next`, or another pass's), or null when the payment is no longer refunding.
   */
  const recordIn = Effect.fnUntraced(function* (id: string, expected: string | null, next: SignedRefund) {
    const locked = yield* store.getForUpdate(id)
    if (locked === undefined || locked.status !== "refunding") return null
    if ((locked.refundAttempt?.transaction ?? null) !== expected) return locked.refundAttempt
    yield* store.update({ ...locked, refundAttempt: next, updatedAt: next.signedAt ?? locked.updatedAt })
    return next
  })
  const record = (id: string, expected: string | null, next: SignedRefund) => atomically(recordIn(id, expected, next))

  return { dryRun, fund, reconcileOne }
})
