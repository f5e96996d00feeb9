// Mpp: pay-per-request over HTTP 402 with the internal credit method, following the MPP "Payment"
// HTTP authentication scheme: an HMAC-bound, stored, single-use challenge bound to the agent, key,
// service, tier and request body; a credential that echoes it; the purchase it pays (the purchase
// domain's: charged at once from a simulated seller, held in the order's escrow for a real one) and
// a receipt. Beside it: the MppStore port, the wire encodings (encoding.ts), challenge ids
// (signing.ts), what is refused and charged (policy.ts), the Challenges service and discovery.
import { traced } from "../platform/Tracing.js"
import { Clock, Context, Data, Effect, Layer } from "effect"
import type { InsufficientCredits, PolicyViolation } from "../../schema/commerce/wallets.js"
import type { Purchase } from "../../schema/commerce/approvals.js"
import type { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import {
  ApprovalRequired,
  type ChargeBelowMinimum,
  type MppProblem,
  type NotPayPerRequest,
  type PaymentRequired,
  SellerFailed
} from "../../schema/mpp/problems.js"
import {
  type ChallengeRecord,
  InvokeResult,
  type PendingInvokeResult,
  type Receipt
} from "../../schema/mpp/challenge.js"
import { type MppDiscovery, MppHealth, paymentMethods } from "../../schema/mpp/protocol.js"
import { PLATFORM_FEES, walletAccount } from "../../schema/ledger/ledger.js"
import type { Order } from "../../schema/orders/orders.js"
import type { Caller } from "../keys/Caller.js"
import { Transactor } from "../platform/Db.js"
import { Ledger } from "../ledger/Ledger.js"
import { Challenges, type Payer } from "./challenges.js"
import { discoveryDocument } from "./discovery.js"
import { contentDigest, type EchoedChallenge } from "./encoding.js"
import { MppStore } from "./MppStore.js"
import { Refusals } from "../refusals/Refusals.js"
import type { Offer } from "../purchases/Offers.js"
import { Orders } from "../purchases/Orders.js"
import { type Bought, Purchases } from "../purchases/Purchases.js"
import { PurchaseStore } from "../purchases/PurchaseStore.js"
import { pendingResult } from "./pending.js"
import { paidReceipt, paymentRequired, type Refusal } from "./policy.js"

/** Who pays: the calling key's agent, its account and the key. */
type Paying = Pick<Caller, "agentId" | "keyId" | "accountId">

/** What a paid call or a credential-paid purchase brings besides its input. */
interface PayableRequest {
  readonly serviceId: string
  /** The request body bytes, as sent: the challenge's digest covers exactly these. */
  readonly body: string | Uint8Array
  /** The field the caller's challenges name (undefined: Authorization, when the key travels in X-API-Key). */
  readonly credentialHeader: string | undefined
}

export interface MppService {
  readonly discovery: (baseUrl: string) => MppDiscovery
  /**
   * Real health: a storage round trip, the ledger entries of the most recent paid challenges
   * reconciled (one purchase or escrow hold each, balanced, the amount charged), the platform fee account read.
   */
  readonly health: Effect.Effect<MppHealth, StorageUnavailable>
  /**
   * One paid call. Without a credential: 402 with a fresh challenge. With one: its method must be
   * credits/charge (else 400 method-unsupported), its id the HMAC of its echoed parameters, the
   * stored challenge the same agent's and key's, open, not expired, for the same service, tier
   * and body bytes; then in one unit of work the wallet is charged and the challenge is marked
   * paid — so it pays once. A simulated seller answers at once (the seller's share and the platform
   * fee settled); a pull or push seller gets an order with the price in escrow, and the call answers
   * its output if a push seller delivers within ORDER_WAIT_MS, SellerFailed (refunded) if it fails,
   * otherwise PendingInvokeResult (202: follow the transaction). Every refusal carries a fresh challenge.
   */
  readonly invoke: (
    caller: Paying,
    input: PayableRequest & {
      readonly tierId: string | undefined
      readonly input: unknown
      readonly credential: string | undefined
    }
  ) => Effect.Effect<
    InvokeResult | PendingInvokeResult,
    | ApprovalRequired
    | ChargeBelowMinimum
    | InvalidInput
    | NotFound
    | NotPayPerRequest
    | PaymentRequired
    | PolicyViolation
    | SellerFailed
    | StorageUnavailable
  >
  /**
   * A fresh challenge that pays a purchase (POST /buy) of `amountCents` for this service, tier
   * and body, and the 402 of a short wallet that carries it (with how to fund).
   */
  readonly walletShort: (
    caller: Paying,
    input: PayableRequest & { readonly tierId: string },
    short: InsufficientCredits
  ) => Effect.Effect<PaymentRequired, NotFound | StorageUnavailable>
  /**
   * A purchase paid with a credential: the challenge is verified and claimed in the purchase's
   * own unit of work (`purchase` joins it), so a credential pays one purchase, and a purchase that
   * fails leaves the challenge open. The purchase must charge exactly the challenge's amount.
   * Refusals carry a fresh challenge; a short wallet too (with how to fund).
   */
  readonly payPurchase: <E, R>(
    caller: Paying,
    input: PayableRequest & { readonly tierId: string; readonly credential: string },
    purchase: Effect.Effect<Bought, E, R>
  ) => Effect.Effect<
    { bought: Bought; receipt: Receipt | undefined },
    E | NotFound | PaymentRequired | StorageUnavailable,
    R
  >
}

/** Internal: a purchase charged another amount than the challenge it was paid with (undone). */
class PaymentMismatch extends Data.TaggedError("PaymentMismatch")<{
  readonly row: ChallengeRecord
  readonly priceCents: number
}> {}

const isTagged = (u: unknown, tag: string) =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === tag

const payerOf = (caller: Paying): Payer => ({ agentId: caller.agentId!, keyId: caller.keyId ?? "" })

/** A paid call whose order was placed (the challenge paid, the price held): answered once committed. */
interface Ordered {
  readonly _tag: "Ordered"
  readonly order: Order
  readonly receipt: Receipt
}

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
const make = Effect.gen(function* () {
  const store = yield* MppStore
  const { atomically } = yield* Transactor
  const { offers, payableOffer, issue, claimable, readCredential } = yield* Challenges
  const ledger = yield* Ledger
  const refusals = yield* Refusals
  const purchases = yield* Purchases
  const orders = yield* Orders
  const transactions = yield* PurchaseStore

  // ---- health: a storage round trip, the sampled paid challenges reconciled, the fee account read

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

  const health = Effect.gen(function* () {
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

  /**
   * The paid call's unit of work: the challenge claimed, then the purchase it pays (the purchase
   * domain's: the wallet locked, the policy, then a simulated seller's answer settled at once or a
   * real seller's order with the price in escrow), the challenge marked paid, the receipt. Or why the
   * credential cannot pay (the caller answers a fresh challenge).
   */
  const paidCall = Effect.fnUntraced(function* (
    who: Payer & { readonly accountId: string },
    echoed: EchoedChallenge,
    offer: Offer,
    digest: string,
    input: unknown
  ): Effect.fn.Return<
    InvokeResult | Ordered | Refusal,
    ApprovalRequired | SellerFailed | PolicyViolation | NotFound | InvalidInput | StorageUnavailable
  > {
    const checked = yield* claimable(who, echoed, offer, digest)
    if ("refused" in checked) return checked
    const row = checked
    const bought = yield* purchases
      .purchase({
        agentId: row.agentId,
        accountId: who.accountId,
        serviceId: row.serviceId,
        tierId: row.tierId,
        input,
        idempotencyKey: null,
        challenge: { id: row.id, amountCents: row.amountCents }
      })
      .pipe(
        Effect.map((b): Bought | Refusal => b),
        Effect.catchTags({
          InsufficientCredits: (e) =>
            Effect.succeed<Refusal>({
              refused: "wallet-insufficient-funds",
              message: `the wallet lacks ${e.missingCents} cents for this call; fund it and pay the fresh challenge`,
              missingCents: e.missingCents
            }),
          // A paid call redeems no negotiation.
          NegotiationUnusable: Effect.die
        })
      )
    if ("refused" in bought) return bought
    const paid = (at: string, reference: string, transactionId: string, settlement: Receipt["settlement"]) =>
      Effect.as(
        store.update({ ...row, status: "paid", paidAt: at, entryId: reference, transactionId }),
        paidReceipt(row, { at, reference, transactionId, settlement })
      )
    switch (bought._tag) {
      case "SellerCannotServe": {
        const message =
          `the seller could not serve the call (simulated ${bought.mode}); ` +
          "nothing was charged and the challenge is still open"
        return yield* new SellerFailed({ message, serviceId: offer.service.id })
      }
      case "ApprovalNeeded": {
        // MPP: a valid payment that policy refuses is 403, not 402 (the challenge stays open).
        const message =
          bought.reason === "manual"
            ? "the wallet's autonomy level is manual: every purchase needs the owner's approval"
            : `${row.amountCents} cents is above the wallet's approval threshold`
        return yield* new ApprovalRequired({ message, reason: bought.reason })
      }
      case "Completed": {
        const { tx, delivery } = bought
        const receipt = yield* paid(tx.createdAt, tx.ledgerEntryId!, tx.id, "settled")
        return InvokeResult.make({
          status: "completed",
          serviceId: row.serviceId,
          tierId: row.tierId,
          transactionId: tx.id,
          chargedCents: row.amountCents as InvokeResult["chargedCents"],
          output: delivery.output,
          receipt
        })
      }
      case "Placed": {
        // The charge is the escrow hold: the entry the receipt and the health check's sample point at.
        const { order } = bought
        const receipt = yield* paid(order.createdAt, bought.holdEntryId ?? order.id, order.id, "held")
        return { _tag: "Ordered", order, receipt } satisfies Ordered
      }
      default:
        // A paid call keeps no idempotency key, waits for no approval, and a simulated failure was answered above.
        return yield* Effect.die(new Error(`a paid call's purchase came to ${bought._tag}`))
    }
  })

  /**
   * After the call's unit of work committed: the order announced (pull sellers waiting on their
   * list see it), a push seller's answer awaited up to ORDER_WAIT_MS; the output if it delivered,
   * SellerFailed (refunded in full) if it failed, otherwise pending.
   */
  const answer = Effect.fnUntraced(function* ({ order, receipt }: Ordered) {
    yield* orders.announce(order)
    if (order.mode !== "push" || orders.waitMs <= 0) return pendingResult(order, receipt)
    const ended = yield* orders.awaitOutcome(order.id, orders.waitMs)
    if (ended === undefined || ended.status === "pending") return pendingResult(order, receipt)
    const row = yield* transactions.getTransaction(order.id)
    if (row === undefined || row.tx.status === "pending") return pendingResult(order, receipt)
    if (row.tx.status === "completed") {
      return InvokeResult.make({
        status: "completed",
        serviceId: order.serviceId,
        tierId: order.tierId,
        transactionId: order.id,
        chargedCents: order.priceCents as InvokeResult["chargedCents"],
        output: row.delivery?.output ?? ended.output,
        receipt: { ...receipt, reference: row.tx.ledgerEntryId ?? receipt.reference, settlement: "settled" }
      })
    }
    const why = ended.error ?? row.delivery?.error ?? "the seller did not deliver"
    return yield* new SellerFailed({
      message:
        `the seller could not serve the call (${why}); the ${order.priceCents} cents held were refunded in ` +
        "full; the credential is spent: pay a fresh challenge to call again",
      serviceId: order.serviceId,
      transactionId: order.id
    })
  })

  const invoke = Effect.fnUntraced(function* (
    caller: Paying,
    input: PayableRequest & {
      readonly tierId: string | undefined
      readonly input: unknown
      readonly credential: string | undefined
    }
  ) {
    const who = payerOf(caller)
    const offer = yield* payableOffer(who.agentId, input.serviceId, input.tierId)
    const digest = contentDigest(input.body)
    const refuseWith = (problem: MppProblem, message: string, missingCents?: number) =>
      Effect.flatMap(issue(who, offer, digest, input.credentialHeader), (challenge) =>
        Effect.fail(paymentRequired(challenge, problem, message, missingCents))
      )
    const field = input.credentialHeader ?? "Authorization"
    if (input.credential === undefined || input.credential.trim() === "") {
      const message =
        `this call costs ${offer.tier.priceCents} cents: ` +
        `retry with a Payment credential for the challenge in ${field}`
      return yield* refuseWith("payment-required", message)
    }
    const read = readCredential(input.credential)
    if ("refused" in read) return yield* refuseWith(read.refused, read.message)
    const outcome = yield* atomically(
      paidCall({ ...who, accountId: caller.accountId }, read.echoed, offer, digest, input.input)
    )
    if (outcome instanceof InvokeResult) return outcome
    // Committed: the seller may answer now (a push seller within the call's wait).
    if ("_tag" in outcome) return yield* answer(outcome)
    return yield* refuseWith(outcome.refused, outcome.message, outcome.missingCents)
  }, traced("Mpp.invoke"))

  const walletShort = Effect.fnUntraced(function* (
    caller: Paying,
    input: PayableRequest & { readonly tierId: string },
    short: InsufficientCredits
  ) {
    const offer = yield* offers.get(input.serviceId, input.tierId)
    const priced = { service: offer.service, tier: { ...offer.tier, priceCents: short.requiredCents } }
    const challenge = yield* issue(payerOf(caller), priced, contentDigest(input.body), input.credentialHeader)
    return paymentRequired(challenge, "wallet-insufficient-funds", short.message, short.missingCents, {
      howToFund: short.howToFund,
      requiredCents: short.requiredCents,
      balanceCents: short.balanceCents
    })
  })

  const payPurchase = Effect.fnUntraced(function* <E, R>(
    caller: Paying,
    input: PayableRequest & { readonly tierId: string; readonly credential: string },
    purchase: Effect.Effect<Bought, E, R>
  ) {
    const who = payerOf(caller)
    const offer = yield* offers.get(input.serviceId, input.tierId)
    const digest = contentDigest(input.body)
    const refuseWith = (problem: MppProblem, message: string, amountCents = offer.tier.priceCents) => {
      const priced = { service: offer.service, tier: { ...offer.tier, priceCents: amountCents } }
      return Effect.flatMap(issue(who, priced, digest, input.credentialHeader), (challenge) =>
        Effect.fail(paymentRequired(challenge, problem, message))
      )
    }
    const read = readCredential(input.credential)
    if ("refused" in read) return yield* refuseWith(read.refused, read.message)
    const outcome = yield* atomically(
      Effect.gen(function* () {
        const checked = yield* claimable(who, read.echoed, offer, digest)
        if ("refused" in checked) return { _tag: "Refused" as const, refusal: checked }
        const row = checked
        const bought = yield* purchase
        const p: Purchase | undefined = "purchase" in bought ? bought.purchase : undefined
        const held = p?.status === "pending"
        if (p === undefined || (p.status !== "completed" && !held) || p.transaction === null) {
          return { _tag: "Bought" as const, bought, receipt: undefined }
        }
        const tx = p.transaction
        if (tx.priceCents !== row.amountCents) {
          // Undoes the purchase: the unit of work fails.
          return yield* Effect.fail(new PaymentMismatch({ row, priceCents: tx.priceCents }))
        }
        // An order's price left the wallet into its escrow: the credential is spent as for a settled one.
        const hold = !held
          ? undefined
          : bought._tag === "Placed"
            ? (bought.holdEntryId ?? undefined)
            : (yield* ledger.entriesByReference(tx.id)).find((e) => e.kind === "escrow_hold")?.id
        const entryId = held ? (hold ?? null) : tx.ledgerEntryId
        const paidAt = tx.createdAt
        yield* store.update({ ...row, status: "paid", paidAt, entryId, transactionId: tx.id })
        const receipt = paidReceipt(row, {
          at: paidAt,
          reference: entryId ?? tx.id,
          transactionId: tx.id,
          settlement: held ? "held" : "settled"
        })
        return { _tag: "Bought" as const, bought, receipt: receipt as Receipt | undefined }
      })
    ).pipe(
      Effect.catch((e): Effect.Effect<never, E | StorageUnavailable | PaymentRequired | NotFound> => {
        if (isTagged(e, "InsufficientCredits")) {
          return Effect.flatMap(walletShort(caller, input, e as InsufficientCredits), Effect.fail)
        }
        if (isTagged(e, "PaymentMismatch")) {
          const { row, priceCents } = e as PaymentMismatch
          const message = `the challenge pays ${row.amountCents} cents; this purchase costs ${priceCents}`
          return refuseWith("verification-failed", message, priceCents)
        }
        return Effect.fail(e as E | StorageUnavailable)
      })
    )
    if (outcome._tag === "Refused") return yield* refuseWith(outcome.refusal.refused, outcome.refusal.message)
    return { bought: outcome.bought, receipt: outcome.receipt }
  }, traced("Mpp.payPurchase"))

  // A paid call the wallet refused (a policy, a freeze, too few credits) is kept for the owner.
  const recordedInvoke: MppService["invoke"] = (caller, input) =>
    invoke(caller, input).pipe(
      refusals.recordingRefusal({
        agentId: caller.agentId ?? "",
        serviceId: input.serviceId,
        serviceName: null,
        tierId: input.tierId ?? null,
        priceCents: null,
        path: "paid_call"
      })
    )

  const service: MppService = {
    discovery: discoveryDocument,
    health,
    invoke: recordedInvoke,
    walletShort,
    payPurchase
  }
  return service
})

export class Mpp extends Context.Service<Mpp, MppService>()("agent-commerce/Mpp") {
  static readonly make = make
  /** Provides the domain services it uses; only ports (stores, processors, config) stay open. */
  static readonly layer = Layer.effect(Mpp, make).pipe(
    Layer.provide([Ledger.layer, Refusals.layer, Purchases.layer, Orders.layer, Challenges.layer])
  )
}
