// X402: the paid call paid with x402 v2 (docs/x402.md). A PAYMENT-SIGNATURE is decoded and checked
// against what this call asks (wire.ts), claimed under its two names (the payer's key for it, the
// authorization's nonce: X402Store), verified by the facilitator, the purchase tried and rolled back
// (the owner's policy refuses BEFORE any money moves), settled by the facilitator, and then, in one
// unit of work, the inflow and the purchase it funds (purchases/ExternalFunding): 85/15 at once for
// a simulated seller, the order's escrow for an agent seller. A settle whose outcome is unknown
// leaves the payment `settlement_pending`: answered 202, never a fresh 402; `reconcile` decides it
// from the chain later, refunds failed orders on the chain and retries refunds.
import { randomBytes, timingSafeEqual } from "node:crypto"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import type { Purchase } from "../../schema/commerce/approvals.js"
import type { PolicyViolation } from "../../schema/commerce/wallets.js"
import { InvokeResult, PendingInvokeResult } from "../../schema/mpp/challenge.js"
import {
  ApprovalRequired,
  type ChargeBelowMinimum,
  type NotPayPerRequest,
  SellerFailed
} from "../../schema/mpp/problems.js"
import { type InvalidInput, NotFound, type StorageUnavailable } from "../../schema/platform/errors.js"
import {
  type PaymentPayload,
  type PaymentRecord,
  PaymentConflict,
  type PaymentView,
  type SettleResponse,
  SettlementPendingResult,
  type X402PaymentRequired
} from "../../schema/x402/x402.js"
import { KeysStore } from "../keys/KeysStore.js"
import { WalletStore } from "../wallet/WalletStore.js"
import { initialWallet, UNLIMITED_POLICY } from "../../schema/wallet/policy.js"
import { Challenges } from "../mpp/challenges.js"
import { pendingResult } from "../mpp/pending.js"
import { AppConfig, type X402Config } from "../platform/AppConfig.js"
import { Ids, Transactor } from "../platform/Db.js"
import { ExternalFunding } from "../purchases/ExternalFunding.js"
import { type Bought, Purchases } from "../purchases/Purchases.js"
import { PurchaseStore } from "../purchases/PurchaseStore.js"
import { Facilitator } from "./ports.js"
import {
  exactPayloadOf,
  fingerprintOf,
  identifierOf,
  mismatch,
  paymentRequiredOf,
  payerAgentId,
  readSignature,
  requirementsOf,
  X402_PAYERS_ACCOUNT
} from "./wire.js"
import { X402Store } from "./X402Store.js"
import { makeSettlements } from "./settlements.js"
import { failedSettle, paymentPath, paymentViewOf, pendingSettlement, receiptOf, refused, settleOf } from "./answers.js"

/** The keyed agent a payment is made for, when the call carries an API key. */
export interface KeyedBuyer {
  readonly agentId: string
  readonly accountId: string
}

export interface X402Call {
  readonly serviceId: string
  readonly tierId: string | undefined
  readonly input: unknown
  readonly body: Uint8Array
  /** The request's absolute URL (the PaymentRequired's resource). */
  readonly url: string
  readonly signature: string | undefined
  readonly idempotencyKey: string | undefined
  readonly keyed: KeyedBuyer | undefined
}

export type X402Result = InvokeResult | PendingInvokeResult | SettlementPendingResult

/** A paid call's answer and what its PAYMENT-RESPONSE says (none: nothing was settled or refused by the rail). */
export interface X402Answer {
  readonly result: X402Result
  readonly settle: SettleResponse
}

export type X402Error =
  | X402PaymentRequired
  | PaymentConflict
  | PolicyViolation
  | ApprovalRequired
  | SellerFailed
  | NotPayPerRequest
  | ChargeBelowMinimum
  | NotFound
  | InvalidInput
  | StorageUnavailable

export interface X402Service {
  /** Whether x402 is offered (configured). */
  readonly offered: boolean
  /** The PaymentRequired a 402 of this call carries (PAYMENT-REQUIRED), when x402 is offered. */
  readonly paymentRequired: (
    input: Pick<X402Call, "serviceId" | "tierId" | "url">,
    error?: string
  ) => Effect.Effect<Option.Option<typeof X402PaymentRequired.fields.paymentRequired.Type>, never>
  /**
   * The call paid with a PAYMENT-SIGNATURE (or, without one, 402 X402PaymentRequired). `onSettle`
   * hears what PAYMENT-RESPONSE must say as soon as it is known (also for a failure after settling).
   */
  readonly invoke: (
    call: X402Call,
    onSettle: (settle: SettleResponse) => Effect.Effect<void>
  ) => Effect.Effect<X402Answer, X402Error>
  /** Decides what is open (unknown settles, held orders that ended, refunds under way); how many changed. */
  readonly reconcile: Effect.Effect<number, StorageUnavailable>
  /** The payment as its payer reads it: its token proves it is the payer, or the key of the agent it paid for. */
  readonly view: (
    id: string,
    who: { readonly token: string | undefined; readonly agentId: string | undefined }
  ) => Effect.Effect<PaymentView, NotFound | StorageUnavailable>
  /**
   * The payment an A2A task submitted (docs/a2a.md "Paying with x402"), by its id once known, else
   * by its authorization (payer, nonce): reconciled, then its view and what its PAYMENT-RESPONSE says.
   * None when there is none (never claimed, or refused before the settle and forgotten), or when the
   * one found paid another call (an authorization reused for another request). The task's owner is
   * checked by the caller: this reads no credential.
   */
  readonly ofTask: (ref: {
    readonly paymentId: string | null
    readonly payer: string
    readonly nonce: string
    /** The task's call: a payment found is its only if it paid this service with this request body. */
    readonly serviceId: string
    readonly body: string
  }) => Effect.Effect<
    Option.Option<{ readonly view: PaymentView; readonly settle: SettleResponse }>,
    StorageUnavailable
  >
}

const make = Effect.gen(function* () {
  const { x402: configured } = yield* AppConfig
  const store = yield* X402Store
  const facilitator = yield* Facilitator
  const challenges = yield* Challenges
  const keys = yield* KeysStore
  const wallets = yield* WalletStore
  const purchases = yield* Purchases
  const transactions = yield* PurchaseStore
  const { atomically } = yield* Transactor
  const ids = yield* Ids
  const { dryRun, fund, reconcileOne } = yield* makeSettlements

  const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

  const configOrDie = (): X402Config => {
    if (Option.isNone(configured)) throw new Error("x402 is not configured")
    return configured.value
  }

  const offerFor = (buyerAgentId: string, serviceId: string, tierId: string | undefined) =>
    challenges.payableOffer(buyerAgentId, serviceId, tierId)

  // The offer without a buyer (what a 402 advertises to anyone).
  const offerForAnyone = (serviceId: string, tierId: string | undefined) =>
    challenges.payableOffer(X402_PAYERS_ACCOUNT, serviceId, tierId)

  const paymentRequired: X402Service["paymentRequired"] = (input, error) =>
    Option.isNone(configured)
      ? Effect.succeed(Option.none())
      : Effect.map(Effect.option(offerForAnyone(input.serviceId, input.tierId)), (offer) =>
          Option.map(offer, (o) => paymentRequiredOf(configured.value, o, input.url, error))
        )

  /** The payer's own agent (created on its first payment), under the account nobody signs in to. */
  const ensurePayerAgent = Effect.fnUntraced(function* (payer: string) {
    const agentId = payerAgentId(payer)
    if ((yield* keys.getAgent(agentId)) !== undefined) return agentId
    const at = yield* nowIso
    yield* atomically(
      Effect.gen(function* () {
        if ((yield* keys.getAccount(X402_PAYERS_ACCOUNT)) === undefined) {
          yield* keys
            .insertAccount({
              id: X402_PAYERS_ACCOUNT,
              email: "x402-payers@platform.invalid",
              name: "x402 payers (no account)",
              passwordHash: "disabled",
              planId: null,
              createdAt: at
            })
            .pipe(Effect.catchTag("Conflict", () => Effect.void))
        }
        if ((yield* keys.getAgent(agentId)) === undefined) {
          // The payer approves each payment by signing it: no approvals, no limits but its own (its client's).
          const wallet = yield* wallets.lock(initialWallet(agentId, Date.parse(at)))
          yield* wallets.put({ ...wallet, policy: UNLIMITED_POLICY, updatedAt: at })
          yield* keys.insertAgent({
            id: agentId,
            accountId: X402_PAYERS_ACCOUNT,
            name: `x402 payer ${payer}`,
            organization: null,
            createdAt: at
          })
        }
      })
    )
    return agentId
  })

  /** The answer of a funded payment, once its unit of work committed (a push seller awaited). */
  const answerOf = Effect.fnUntraced(function* (config: X402Config, p: PaymentRecord, bought: Bought) {
    if (bought._tag === "Completed") {
      const { tx, delivery } = bought
      return InvokeResult.make({
        status: "completed",
        serviceId: p.serviceId,
        tierId: p.tierId,
        transactionId: tx.id,
        chargedCents: p.amountCents as InvokeResult["chargedCents"],
        output: delivery.output,
        receipt: receiptOf(p, tx.ledgerEntryId ?? tx.id, tx.id, "settled", tx.createdAt)
      }) as X402Result
    }
    if (bought._tag !== "Placed") return yield* Effect.die(new Error(`an x402 purchase came to ${bought._tag}`))
    const { order } = bought
    const receipt = receiptOf(p, bought.holdEntryId ?? order.id, order.id, "held", order.createdAt)
    const now: Purchase = yield* purchases.settled(bought)
    if (now.status === "completed" && now.transaction !== null) {
      const row = yield* transactions.getTransaction(order.id)
      return InvokeResult.make({
        status: "completed",
        serviceId: p.serviceId,
        tierId: p.tierId,
        transactionId: order.id,
        chargedCents: p.amountCents as InvokeResult["chargedCents"],
        output: row?.delivery?.output ?? null,
        receipt: { ...receipt, settlement: "settled" }
      }) as X402Result
    }
    if (now.status === "failed") {
      // The seller failed within the call's wait: refunded on the chain now.
      yield* reconcileOne(config, p.id)
      return yield* new SellerFailed({
        message:
          `the seller could not serve the call; the payment of ${p.amountCents} cents is refunded to ` +
          `${p.payer} on the chain (see PAYMENT-RESPONSE and ${paymentPath(p.id)})`,
        serviceId: p.serviceId,
        transactionId: order.id
      })
    }
    return pendingResult(order, receipt) as X402Result
  })

  /** The first outcome of a payment, answered again (the same payment retried or replayed). */
  const replay = Effect.fnUntraced(function* (config: X402Config, p: PaymentRecord) {
    if (p.status === "settling" || p.status === "settlement_pending") {
      return { result: pendingSettlement(p) as X402Result, settle: settleOf(config, p) }
    }
    if (p.answer !== null && p.answer.status < 300) {
      const body = p.answer.body as { status?: string }
      const result =
        body.status === "completed"
          ? Schema.decodeUnknownSync(InvokeResult)(p.answer.body)
          : Schema.decodeUnknownSync(PendingInvokeResult)(p.answer.body)
      return { result: result as X402Result, settle: settleOf(config, p) }
    }
    // Funded without a stored answer (reconciled after a lost answer), or refunded: where it stands.
    return yield* new PaymentConflict({
      message:
        `payment ${p.id} was already made (status ${p.status}); read it at ${paymentPath(p.id)} — ` +
        "a new call needs a new authorization",
      paymentKey: p.paymentKey
    })
  })

  const invoke = Effect.fnUntraced(function* (
    call: X402Call,
    onSettle: (settle: SettleResponse) => Effect.Effect<void>
  ): Effect.fn.Return<X402Answer, X402Error> {
    const config = configOrDie()
    const ask = yield* offerForAnyone(call.serviceId, call.tierId)
    if (call.signature === undefined || call.signature.trim() === "") {
      return yield* refused(
        config,
        ask,
        call.url,
        "payment_required",
        `this call costs ${ask.tier.priceCents} cents: pay with x402 (PAYMENT-REQUIRED) and retry with PAYMENT-SIGNATURE`
      )
    }
    const read = readSignature(call.signature)
    if (!("accepted" in read)) return yield* read
    const payload: PaymentPayload = read
    const exact = exactPayloadOf(payload)
    if (payload.x402Version !== 2 || exact === undefined) {
      yield* onSettle(failedSettle(config, "invalid_payload"))
      return yield* refused(
        config,
        ask,
        call.url,
        "invalid_payload",
        "only x402 v2 `exact` (EIP-3009) payments are accepted"
      )
    }
    const payer = exact.authorization.from.toLowerCase()
    const buyerAgentId = call.keyed?.agentId ?? (yield* ensurePayerAgent(payer))
    const offer = yield* offerFor(buyerAgentId, call.serviceId, call.tierId)
    const requirements = requirementsOf(config, offer)
    const wrong = mismatch(payload.accepted, requirements)
    if (wrong !== undefined || exact.authorization.value !== requirements.amount) {
      yield* onSettle(failedSettle(config, "invalid_payment_requirements", payer))
      return yield* refused(
        config,
        offer,
        call.url,
        "invalid_payment_requirements",
        `the payment does not pay this call: ${wrong ?? `authorization value ${exact.authorization.value}, not ${requirements.amount}`}`
      )
    }
    const at = yield* nowIso
    const record: PaymentRecord = {
      id: yield* ids.make("x402"),
      paymentKey:
        identifierOf(payload) ??
        (call.idempotencyKey !== undefined
          ? `key:${call.idempotencyKey}`
          : `nonce:${exact.authorization.nonce.toLowerCase()}`),
      payer,
      network: config.network,
      asset: config.asset.toLowerCase(),
      nonce: exact.authorization.nonce.toLowerCase(),
      fingerprint: fingerprintOf(payload, { serviceId: offer.service.id, tierId: offer.tier.id, body: call.body }),
      amountUnits: requirements.amount,
      amountCents: offer.tier.priceCents,
      validBefore: Number(exact.authorization.validBefore),
      serviceId: offer.service.id,
      tierId: offer.tier.id,
      input: call.input ?? null,
      buyerAgentId,
      buyerAccountId: call.keyed?.accountId ?? X402_PAYERS_ACCOUNT,
      keyed: call.keyed !== undefined,
      status: "settling",
      payload,
      settleTransaction: null,
      refundTransaction: null,
      refundAttempt: null,
      transactionId: null,
      answer: null,
      token: randomBytes(24).toString("base64url"),
      createdAt: at,
      updatedAt: at
    }
    const claimed = yield* store.claim(record)
    if (claimed._tag === "Exists") {
      const first = claimed.existing
      if (first.fingerprint !== record.fingerprint) {
        return yield* new PaymentConflict({
          message:
            first.nonce === record.nonce
              ? "this authorization (its nonce) already paid another request: it never settles twice"
              : `the payment id ${first.paymentKey} already named another payment (another payload or request)`,
          paymentKey: first.paymentKey
        })
      }
      const again = yield* replay(config, first)
      yield* onSettle(again.settle)
      return again
    }
    const forget = (reason: string) =>
      Effect.andThen(store.remove(record.id), onSettle(failedSettle(config, reason, payer)))

    // Verified first: nothing is tried for a signature the facilitator refuses.
    const verified = yield* facilitator
      .verify(payload, requirements)
      .pipe(
        Effect.catchTag("FacilitatorUnavailable", (e) =>
          Effect.succeed({ isValid: false, invalidReason: "facilitator_unavailable", invalidMessage: e.reason })
        )
      )
    if (!verified.isValid) {
      yield* forget(verified.invalidReason ?? "invalid_payment")
      return yield* refused(
        config,
        offer,
        call.url,
        verified.invalidReason ?? "invalid_payment",
        `the facilitator refused the payment: ${verified.invalidMessage ?? verified.invalidReason ?? "invalid"}`
      )
    }
    // The owner's policies and limits, the seller's availability: refused here, before any settle.
    yield* dryRun(config, record).pipe(Effect.tapError((e) => forget(e._tag)))

    const settled = yield* facilitator.settle(payload, requirements).pipe(Effect.result)
    if (settled._tag === "Failure") {
      // Unknown outcome: kept, reconciled from the chain; the payer is told not to pay again.
      const pending: PaymentRecord = { ...record, status: "settlement_pending", updatedAt: yield* nowIso }
      yield* store.update(pending)
      yield* Effect.logWarning(`x402 payment ${record.id}: settle outcome unknown (${settled.failure.reason})`)
      const answer = { result: pendingSettlement(pending) as X402Result, settle: settleOf(config, pending) }
      yield* onSettle(answer.settle)
      return answer
    }
    if (!settled.success.success) {
      const reason = settled.success.errorReason ?? "settle_failed"
      yield* forget(reason)
      return yield* refused(
        config,
        offer,
        call.url,
        reason,
        `the facilitator could not settle the payment: ${settled.success.errorMessage ?? reason}`
      )
    }
    const funded = yield* fund(config, record.id, settled.success.transaction)
    if (funded._tag !== "Funded") {
      const p = funded.payment ?? record
      yield* onSettle(settleOf(config, p))
      if (funded._tag === "Refused") yield* reconcileOne(config, p.id)
      return yield* new PaymentConflict({
        message: `the payment settled but the purchase was refused after it (${funded._tag === "Refused" ? funded.why : "already decided"}); it is refunded on the chain`,
        paymentKey: p.paymentKey
      })
    }
    yield* onSettle(settleOf(config, funded.payment))
    const result = yield* answerOf(config, funded.payment, funded.bought)
    const done = yield* store.get(record.id)
    if (done !== undefined) {
      const answer = {
        status: result instanceof PendingInvokeResult ? 202 : 200,
        body: JSON.parse(JSON.stringify(result)) as unknown,
        settle: settleOf(config, done)
      }
      yield* store.update({ ...done, answer, updatedAt: yield* nowIso })
    }
    return { result, settle: settleOf(config, funded.payment) }
  })

  const reconcile = Option.isNone(configured)
    ? Effect.succeed(0)
    : Effect.gen(function* () {
        const open = yield* store.inStatus(["settling", "settlement_pending", "held", "refunding"], 100)
        let changed = 0
        for (const p of open) if (yield* reconcileOne(configured.value, p.id)) changed++
        return changed
      })

  const view = Effect.fnUntraced(function* (
    id: string,
    who: { readonly token: string | undefined; readonly agentId: string | undefined }
  ) {
    const p = yield* store.get(id)
    const missing = new NotFound({ message: `x402 payment ${id} not found`, resource: "x402_payment", id })
    if (p === undefined) return yield* missing
    const byToken =
      who.token !== undefined &&
      who.token.length === p.token.length &&
      timingSafeEqual(Buffer.from(who.token), Buffer.from(p.token))
    const byKey = who.agentId !== undefined && p.keyed && who.agentId === p.buyerAgentId
    if (!byToken && !byKey) return yield* missing
    if (Option.isSome(configured)) yield* reconcileOne(configured.value, p.id)
    return yield* viewOf((yield* store.get(id)) ?? p)
  })

  const viewOf = Effect.fnUntraced(function* (now: PaymentRecord) {
    return paymentViewOf(
      now,
      now.transactionId === null ? undefined : yield* transactions.getTransaction(now.transactionId)
    )
  })

  const ofTask: X402Service["ofTask"] = Effect.fnUntraced(function* (ref) {
    if (Option.isNone(configured)) return Option.none()
    const config = configured.value
    const found =
      (ref.paymentId === null ? undefined : yield* store.get(ref.paymentId)) ??
      (yield* store.byAuthorization(config.network, config.asset, ref.payer, ref.nonce))
    if (found === undefined) return Option.none()
    const paysThisCall =
      found.serviceId === ref.serviceId &&
      fingerprintOf(found.payload, { serviceId: found.serviceId, tierId: found.tierId, body: ref.body }) ===
        found.fingerprint
    if (!paysThisCall) return Option.none()
    yield* reconcileOne(config, found.id)
    const now = (yield* store.get(found.id)) ?? found
    return Option.some({ view: yield* viewOf(now), settle: settleOf(config, now) })
  })

  return X402.of({ offered: Option.isSome(configured), paymentRequired, invoke, reconcile, view, ofTask })
})

export class X402 extends Context.Service<X402, X402Service>()("agent-commerce/X402") {
  /** Provides the domain services it uses; the ports (store, facilitator, chain, refunds, config) stay open. */
  static readonly layer = Layer.effect(X402, make).pipe(
    Layer.provide([ExternalFunding.layer, Purchases.layer, Challenges.layer])
  )
}
