// Refusals beyond a plain /buy, on every storage (docs/money.md "Refusals" and "Freeze"): a buy at a
// negotiated price that the wallet refuses is kept with path `negotiation` and the negotiated amount;
// a frozen agent's negotiated purchase is refused and moves nothing, the negotiation still usable; a
// wallet too short is `insufficient_balance` on the paid call and on the owner's approval too, not only
// on /buy; an approval refused while the wallet is frozen stays pending and, approved after the
// unfreeze, charges once, at the price the owner was shown.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { EXTERNAL_GRANTS, walletAccount } from "../../src/schema/ledger/ledger.js"
import type { UpdateWalletBody } from "../../src/schema/commerce/wallets.js"
import type { PaymentRequired } from "../../src/schema/mpp/problems.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Ledger, LedgerStore } from "../../src/services/ledger/Ledger.js"
import { makeCredential } from "../../src/services/mpp/encoding.js"
import { Mpp } from "../../src/services/mpp/Mpp.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { NegotiatedPricesLive } from "../../src/services/negotiation/NegotiatedPricesLive.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { Refusals } from "../../src/services/refusals/Refusals.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import type { StorageCase } from "../fixtures/db.js"
import { commerceServices, liveSellerAgent, ownerCaller, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const LIST = 100

const stack = (storage: ReturnType<StorageCase["layer"]>) =>
  Layer.mergeAll(Orders.layer, Negotiations.layer, Mpp.layer, Refusals.layer).pipe(
    Layer.provideMerge(commerceServices),
    Layer.provideMerge(NegotiatedPricesLive.pipe(Layer.provide(Negotiations.layer))),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(SagaOrderOwnersLive),
    Layer.provideMerge(storage),
    Layer.provideMerge(Ids.Live)
  )

/**
 * A buyer agent of its own account (the owner's list of refusals reads the account's agents), funded
 * with `funds`, its wallet without limits until the test sets some.
 */
const fundedAgent = (funds: number) =>
  Effect.gen(function* () {
    const agent = yield* liveSellerAgent("buyer")
    if (funds > 0) yield* grant(agent.agentId, funds)
    return agent
  })
type Buyer = Effect.Success<ReturnType<typeof fundedAgent>>

/** A seller agent of an ordinary account with a pull service: it answers its orders itself. */
const pullSeller = Effect.gen(function* () {
  const { agentId, caller } = yield* liveSellerAgent("pull seller")
  const service = yield* Effect.flatMap(Catalog, (c) =>
    c.publish(caller, serviceBody("Negotiable", [tier("basic", LIST)], "testing", { mode: "pull" }))
  )
  return { agentId, service }
})

/** The buyer's accepted negotiation on the seller's tier (the automatic seller answers, the buyer accepts). */
const accepted = (buyer: Buyer, serviceId: string) =>
  Effect.gen(function* () {
    const negotiations = yield* Negotiations
    const opened = yield* negotiations.open(buyer.caller, { serviceId, tierId: "basic", proposedPriceCents: 90 })
    yield* TestClock.adjust(Date.parse(opened.sellerAnswerDueAt!) - (yield* Clock.currentTimeMillis))
    yield* negotiations.runDue()
    let n = yield* negotiations.get(buyer.agentId, opened.id)
    if (n.status === "awaiting_buyer") n = yield* negotiations.respond(buyer.caller, opened.id, { action: "accept" })
    expect(n.status).toBe("accepted")
    expect(n.agreedPriceCents).toBeLessThan(LIST)
    return { id: n.id, priceCents: n.agreedPriceCents! }
  })

const buy = (buyer: Buyer, serviceId: string, negotiationId?: string) =>
  Effect.flatMap(Commerce, (c) =>
    c.buy({
      caller: buyer.caller,
      serviceId,
      tierId: "basic",
      input: "text",
      ...(negotiationId !== undefined ? { negotiationId } : {})
    })
  )

const setPolicy = (agentId: string, body: UpdateWalletBody) =>
  Effect.flatMap(Wallet, (w) => w.updatePolicy(agentId, body, { byOwner: true }))

/** The owner's list of the buyer's refusals, oldest first. */
const refusalsOf = (buyer: Buyer) =>
  Effect.map(
    Effect.flatMap(Refusals, (r) => r.list(buyer.accountId, { agentId: buyer.agentId })),
    (page) => [...page.refusals].reverse()
  )

const balance = (agentId: string) => Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId)))
const grant = (agentId: string, amount: number) =>
  Effect.flatMap(Ledger, (l) =>
    l.transfer({
      kind: "grant",
      reference: `top-${agentId}-${amount}`,
      from: EXTERNAL_GRANTS,
      to: walletAccount(agentId),
      amount
    })
  )
/** The kinds of ledger entries an order's or purchase's id has moved, sorted. */
const entriesOf = (reference: string) =>
  Effect.map(
    Effect.flatMap(LedgerStore, (l) => l.entriesByReference(reference)),
    (es) => es.map((e) => e.kind).sort()
  )

forEachStorage("refusals on the purchase paths beyond /buy", stack, (it) => {
  it.effect(
    "a negotiated buy the wallet refuses is kept with path negotiation and the negotiated amount; the negotiation stays usable",
    () =>
      Effect.gen(function* () {
        const seller = yield* pullSeller
        const buyer = yield* fundedAgent(1_000)
        const deal = yield* accepted(buyer, seller.service.id)
        yield* setPolicy(buyer.agentId, { perTransactionLimitCents: deal.priceCents - 1 } as UpdateWalletBody)
        const refused = yield* Effect.flip(buy(buyer, seller.service.id, deal.id))
        expect(refused).toMatchObject({ _tag: "PolicyViolation", policy: "perTransactionLimit" })
        expect(yield* refusalsOf(buyer)).toEqual([
          expect.objectContaining({
            agentId: buyer.agentId,
            path: "negotiation",
            reason: "per_purchase_limit",
            serviceId: seller.service.id,
            tierId: "basic",
            priceCents: deal.priceCents
          })
        ])
        expect(yield* balance(buyer.agentId)).toBe(1_000)
        // The refused unit of work rolled back the redemption too: the price is still the buyer's.
        yield* setPolicy(buyer.agentId, { perTransactionLimitCents: null } as UpdateWalletBody)
        const bought = yield* buy(buyer, seller.service.id, deal.id)
        expect(bought).toMatchObject({ status: "pending", transaction: { priceCents: deal.priceCents } })
        // A plain buy refused beside it says buy: the path is the negotiation's only when one was named.
        yield* setPolicy(buyer.agentId, { perTransactionLimitCents: 1 } as UpdateWalletBody)
        yield* TestClock.adjust(1) // the list is newest first: one millisecond apart
        yield* Effect.flip(buy(buyer, seller.service.id))
        expect((yield* refusalsOf(buyer)).map((r) => [r.path, r.reason, r.priceCents])).toEqual([
          ["negotiation", "per_purchase_limit", deal.priceCents],
          ["buy", "per_purchase_limit", LIST]
        ])
      })
  )

  it.effect(
    "a frozen agent's negotiated purchase is refused, moves nothing and is kept; after the unfreeze the negotiation buys",
    () =>
      Effect.gen(function* () {
        const seller = yield* pullSeller
        const buyer = yield* fundedAgent(1_000)
        const deal = yield* accepted(buyer, seller.service.id)
        yield* setPolicy(buyer.agentId, { frozen: true } as UpdateWalletBody)
        const refused = yield* Effect.flip(buy(buyer, seller.service.id, deal.id))
        expect(refused).toMatchObject({ _tag: "PolicyViolation", policy: "frozen" })
        expect(refused.message).toMatch(/frozen by its owner/)
        expect(yield* balance(buyer.agentId)).toBe(1_000)
        expect(yield* refusalsOf(buyer)).toEqual([
          expect.objectContaining({ path: "negotiation", reason: "frozen", priceCents: deal.priceCents })
        ])
        yield* setPolicy(buyer.agentId, { frozen: false } as UpdateWalletBody)
        const bought = yield* buy(buyer, seller.service.id, deal.id)
        expect(bought).toMatchObject({ status: "pending", transaction: { priceCents: deal.priceCents } })
        expect(yield* balance(buyer.agentId)).toBe(1_000 - deal.priceCents)
      })
  )

  it.effect(
    "a paid call the wallet cannot cover is insufficient_balance on path paid_call; the challenge itself is no refusal",
    () =>
      Effect.gen(function* () {
        const seller = yield* pullSeller
        const buyer = yield* fundedAgent(LIST - 1)
        const mpp = yield* Mpp
        const invoke = (credential: string | undefined) =>
          mpp.invoke(buyer.caller, {
            serviceId: seller.service.id,
            tierId: "basic",
            input: "hello",
            body: `{"input":"hello"}`,
            credential,
            credentialHeader: undefined
          })
        const asked = (yield* Effect.flip(invoke(undefined))) as PaymentRequired
        expect(asked._tag).toBe("PaymentRequired")
        expect(yield* refusalsOf(buyer)).toEqual([])
        const short = (yield* Effect.flip(invoke(makeCredential(asked.challenge)))) as PaymentRequired
        expect(short).toMatchObject({ _tag: "PaymentRequired", problem: "wallet-insufficient-funds", missingCents: 1 })
        expect(yield* balance(buyer.agentId)).toBe(LIST - 1)
        expect(yield* refusalsOf(buyer)).toEqual([
          expect.objectContaining({
            path: "paid_call",
            reason: "insufficient_balance",
            serviceId: seller.service.id,
            tierId: "basic"
          })
        ])
      })
  )

  it.effect(
    "an approval the wallet cannot cover is insufficient_balance on path approval and stays pending; after a top-up it buys once",
    () =>
      Effect.gen(function* () {
        const seller = yield* pullSeller
        const buyer = yield* fundedAgent(LIST - 1)
        yield* setPolicy(buyer.agentId, { autonomyLevel: "manual" } as UpdateWalletBody)
        const asked = yield* buy(buyer, seller.service.id)
        expect(asked).toMatchObject({ status: "pending_approval", approval: { quotedPriceCents: LIST } })
        const commerce = yield* Commerce
        const owner = ownerCaller(buyer.accountId)
        const short = yield* Effect.flip(commerce.approve(owner, asked.approval!.id))
        expect(short).toMatchObject({ _tag: "InsufficientCredits" })
        expect(yield* refusalsOf(buyer)).toEqual([
          expect.objectContaining({
            path: "approval",
            reason: "insufficient_balance",
            serviceId: seller.service.id,
            priceCents: LIST
          })
        ])
        expect((yield* commerce.listApprovals(owner, "pending")).data.map((a) => a.id)).toContain(asked.approval!.id)
        expect(yield* balance(buyer.agentId)).toBe(LIST - 1)
        yield* grant(buyer.agentId, 1)
        const approved = yield* commerce.approve(owner, asked.approval!.id)
        expect(approved.transaction).toMatchObject({ status: "pending", priceCents: LIST })
        yield* Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, approved.transaction!.id, { output: "done" }))
        expect(yield* balance(buyer.agentId)).toBe(0)
        expect(yield* entriesOf(approved.transaction!.id)).toEqual(["escrow_hold", "escrow_settle"])
        expect(yield* refusalsOf(buyer)).toHaveLength(1)
      })
  )

  it.effect(
    "an approval refused while frozen stays pending; approved after the unfreeze it charges once, the negotiated price the owner saw",
    () =>
      Effect.gen(function* () {
        const seller = yield* pullSeller
        const buyer = yield* fundedAgent(1_000)
        const deal = yield* accepted(buyer, seller.service.id)
        yield* setPolicy(buyer.agentId, { autonomyLevel: "manual" } as UpdateWalletBody)
        const asked = yield* buy(buyer, seller.service.id, deal.id)
        expect(asked).toMatchObject({ status: "pending_approval", approval: { quotedPriceCents: deal.priceCents } })
        yield* setPolicy(buyer.agentId, { frozen: true } as UpdateWalletBody)
        const commerce = yield* Commerce
        const owner = ownerCaller(buyer.accountId)
        const refused = yield* Effect.flip(commerce.approve(owner, asked.approval!.id))
        expect(refused).toMatchObject({ _tag: "PolicyViolation", policy: "frozen" })
        expect(yield* refusalsOf(buyer)).toEqual([
          expect.objectContaining({ path: "approval", reason: "frozen", priceCents: deal.priceCents })
        ])
        expect((yield* commerce.listApprovals(owner, "pending")).data.map((a) => a.id)).toContain(asked.approval!.id)
        expect(yield* balance(buyer.agentId)).toBe(1_000)

        yield* setPolicy(buyer.agentId, { frozen: false } as UpdateWalletBody)
        const approved = yield* commerce.approve(owner, asked.approval!.id)
        expect(approved).toMatchObject({
          approval: { status: "approved" },
          transaction: { status: "pending", priceCents: deal.priceCents }
        })
        // Approving again charges nothing more.
        expect(yield* Effect.flip(commerce.approve(owner, asked.approval!.id))).toMatchObject({
          _tag: "Conflict",
          state: "approved"
        })
        yield* Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, approved.transaction!.id, { output: "done" }))
        expect(yield* balance(buyer.agentId)).toBe(1_000 - deal.priceCents)
        expect(yield* entriesOf(approved.transaction!.id)).toEqual(["escrow_hold", "escrow_settle"])
        const tx = yield* commerce.getTransaction(buyer.agentId, approved.transaction!.id)
        expect(tx).toMatchObject({ status: "completed", priceCents: deal.priceCents })
      })
  )
})
