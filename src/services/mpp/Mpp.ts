// Mpp: pay-per-request over HTTP 402 with the internal credit method, following the MPP "Payment"
// HTTP authentication scheme: an HMAC-bound, stored, single-use challenge bound to the agent, key,
// service, tier and request body; a credential that echoes it; one ledger charge and a receipt.
// Beside it: the MppStore port, the wire encodings (encoding.ts), challenge ids (signing.ts), what
// is refused and charged (policy.ts), challenges, the paid call, discovery and health.
import { traced } from "../platform/Tracing.js"
import { Context, Data, Effect, Layer } from "effect"
import type { InsufficientCredits, PolicyViolation } from "../../schema/commerce/wallets.js"
import type { Purchase } from "../../schema/commerce/approvals.js"
import type { InvalidInput, NotFound, StorageUnavailable } from "../../schema/platform/errors.js"
import type {
  ApprovalRequired,
  ChargeBelowMinimum,
  MppProblem,
  NotPayPerRequest,
  PaymentRequired,
  SellerFailed
} from "../../schema/mpp/problems.js"
import {
  type ChallengeRecord,
  InvokeResult,
  type PendingInvokeResult,
  type Receipt
} from "../../schema/mpp/challenge.js"
import type { MppDiscovery, MppHealth } from "../../schema/mpp/protocol.js"
import type { Caller } from "../keys/Caller.js"
import { Settlement } from "../purchases/Settlement.js"
import { Transactor } from "../platform/Db.js"
import { Ledger } from "../ledger/Ledger.js"
import { Wallet } from "../wallet/Wallet.js"
import { makeChallenges } from "./challenges.js"
import { discoveryDocument } from "./discovery.js"
import { contentDigest } from "./encoding.js"
import { makeHealth } from "./health.js"
import { MppStore } from "./MppStore.js"
import { Refusals } from "../refusals/Refusals.js"
import { makePaidCall } from "./paidCall.js"
import { makeOrderedCall } from "./orderedCall.js"
import { Orders } from "../purchases/Orders.js"
import { paidReceipt, paymentRequired } from "./policy.js"

/** Who pays: the calling key's agent and the key. */
type Paying = Pick<Caller, "agentId" | "keyId">

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
    purchase: Effect.Effect<Purchase, E, R>
  ) => Effect.Effect<
    { purchase: Purchase; receipt: Receipt | undefined },
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

const payerOf = (caller: Paying) => ({ agentId: caller.agentId!, keyId: caller.keyId ?? "" })

const make = Effect.gen(function* () {
  const store = yield* MppStore
  const { atomically } = yield* Transactor
  const { offers, payableOffer, issue, claimable, readCredential } = yield* makeChallenges
  const paidCall = yield* makePaidCall(claimable)
  const ordered = yield* makeOrderedCall
  const health = yield* makeHealth
  const ledger = yield* Ledger
  const refusals = yield* Refusals

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
    const outcome = yield* atomically(paidCall(who, read.echoed, offer, digest, input.input))
    if (outcome instanceof InvokeResult) return outcome
    // Committed: the seller may answer now (a push seller within the call's wait).
    if ("_tag" in outcome) return yield* ordered.answer(outcome)
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
    purchase: Effect.Effect<Purchase, E, R>
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
        const held = bought.status === "pending"
        if ((bought.status !== "completed" && !held) || bought.transaction === null) {
          return { _tag: "Bought" as const, purchase: bought, receipt: undefined }
        }
        const tx = bought.transaction
        if (tx.priceCents !== row.amountCents) {
          // Undoes the purchase: the unit of work fails.
          return yield* Effect.fail(new PaymentMismatch({ row, priceCents: tx.priceCents }))
        }
        // An order's price left the wallet into its escrow: the credential is spent as for a settled one.
        const hold = held ? (yield* ledger.entriesByReference(tx.id)).find((e) => e.kind === "escrow_hold") : undefined
        const entryId = held ? (hold?.id ?? null) : tx.ledgerEntryId
        const paidAt = tx.createdAt
        yield* store.update({ ...row, status: "paid", paidAt, entryId, transactionId: tx.id })
        const receipt = paidReceipt(row, {
          at: paidAt,
          reference: entryId ?? tx.id,
          transactionId: tx.id,
          settlement: held ? "held" : "settled"
        })
        return { _tag: "Bought" as const, purchase: bought, receipt: receipt as Receipt | undefined }
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
    return { purchase: outcome.purchase, receipt: outcome.receipt }
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
    Layer.provide([Ledger.layer, Wallet.layer, Settlement.layer, Refusals.layer, Orders.layer])
  )
}
