// A negotiated price is spent only by a purchase that happened (docs/fulfilment.md, docs/negotiation.md):
// a buyer who bought an agent's service with an accepted negotiation and whose order then failed
// (the seller said so) or expired (the seller never answered) got nothing, so the price can be
// used again, as after a failed simulated delivery. On every storage.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { escrowAccount, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { UpdateWalletBody } from "../../src/schema/commerce/wallets.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { NegotiatedPricesLive } from "../../src/services/negotiation/NegotiatedPricesLive.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { Ids } from "../../src/services/platform/Db.js"
import {
  agentCaller,
  commerceServices,
  fundedBuyer,
  liveSellerAgent,
  sellerWith,
  serviceBody,
  tier
} from "../fixtures/money.js"
import type { StorageCase } from "../fixtures/db.js"
import { forEachStorage } from "../fixtures/suite.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"

const LIST = 100

const stack = (storage: ReturnType<StorageCase["layer"]>) =>
  Layer.mergeAll(Orders.layer, Negotiations.layer).pipe(
    Layer.provideMerge(commerceServices),
    Layer.provideMerge(NegotiatedPricesLive.pipe(Layer.provide(Negotiations.layer))),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(SagaOrderOwnersLive),
    Layer.provideMerge(storage),
    Layer.provideMerge(Ids.Live)
  )

/** A seller agent of an ordinary account with a pull service: it answers its orders itself. */
const pullSeller = Effect.gen(function* () {
  const { agentId, caller } = yield* liveSellerAgent("pull seller")
  const service = yield* Effect.flatMap(Catalog, (c) =>
    c.publish(caller, serviceBody("Negotiable", [tier("basic", LIST)], "testing", { mode: "pull" }))
  )
  return { agentId, service }
})

/** The buyer's accepted negotiation on the seller's tier (the automatic seller answers, the buyer accepts). */
const accepted = (buyer: { caller: ReturnType<typeof agentCaller> }, serviceId: string) =>
  Effect.gen(function* () {
    const negotiations = yield* Negotiations
    const opened = yield* negotiations.open(buyer.caller, { serviceId, tierId: "basic", proposedPriceCents: 90 })
    // A live seller that stays silent: the automatic seller answers at the end of its window (the
    // platform's own sellers answer at once).
    if (opened.sellerAnswerDueAt) {
      yield* TestClock.adjust(Date.parse(opened.sellerAnswerDueAt) - (yield* Clock.currentTimeMillis))
    }
    yield* negotiations.runDue()
    let n = yield* negotiations.get(buyer.caller.agentId!, opened.id)
    if (n.status === "awaiting_buyer") n = yield* negotiations.respond(buyer.caller, opened.id, { action: "accept" })
    expect(n.status).toBe("accepted")
    return { id: n.id, priceCents: n.agreedPriceCents! }
  })

/** A buy at the negotiated price: a pending order holding that price in escrow. */
const buyWith = (buyer: { caller: ReturnType<typeof agentCaller> }, serviceId: string, negotiationId: string) =>
  Effect.flatMap(Commerce, (c) =>
    c.buy({ caller: buyer.caller, serviceId, tierId: "basic", input: "text", negotiationId })
  )

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))

forEachStorage("orders with a negotiated price", stack, (it) => {
  it.effect("the seller fails the order: the buyer is refunded and can use the negotiation again", () =>
    Effect.gen(function* () {
      const seller = yield* pullSeller
      const buyer = yield* fundedBuyer(1_000)
      const deal = yield* accepted(buyer, seller.service.id)
      const first = yield* buyWith(buyer, seller.service.id, deal.id)
      expect(first).toMatchObject({ status: "pending", transaction: { priceCents: deal.priceCents } })
      // While the order waits, the negotiation is spent: it cannot pay for a second purchase.
      const twice = yield* Effect.flip(buyWith(buyer, seller.service.id, deal.id))
      expect(twice._tag).toBe("NegotiationUnusable")

      const orders = yield* Orders
      yield* orders.fail(seller.agentId, first.transaction!.id, { error: "cannot do it" })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)

      const again = yield* buyWith(buyer, seller.service.id, deal.id)
      expect(again).toMatchObject({ status: "pending", transaction: { priceCents: deal.priceCents } })
      yield* orders.deliver(seller.agentId, again.transaction!.id, { output: "done" })
      const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, again.transaction!.id))
      expect(tx).toMatchObject({ status: "completed", priceCents: deal.priceCents })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - deal.priceCents)
      // Delivered, it is spent for good.
      expect((yield* Effect.flip(buyWith(buyer, seller.service.id, deal.id)))._tag).toBe("NegotiationUnusable")
    })
  )

  it.effect("a simulated delivery that fails: nothing charged, and the negotiation can be used again", () =>
    Effect.gen(function* () {
      const { service } = yield* sellerWith("Simulated negotiable", [tier("basic", LIST)])
      const buyer = yield* fundedBuyer(1_000)
      const deal = yield* accepted(buyer, service.id)
      const buy = (input: unknown) =>
        Effect.flatMap(Commerce, (c) =>
          c.buy({ caller: buyer.caller, serviceId: service.id, tierId: "basic", input, negotiationId: deal.id })
        )
      expect(yield* buy({ simulate: "fail" })).toMatchObject({ status: "failed" })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
      const again = yield* buy({ text: "now deliver" })
      expect(again).toMatchObject({ status: "completed", transaction: { priceCents: deal.priceCents } })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - deal.priceCents)
      expect((yield* Effect.flip(buy({ text: "a third time" })))._tag).toBe("NegotiationUnusable")
    })
  )

  it.effect("an approval its agent withdraws gives the redeemed negotiation back", () =>
    Effect.gen(function* () {
      const { service } = yield* sellerWith("Withdrawn negotiable", [tier("basic", LIST)])
      const buyer = yield* fundedBuyer(1_000)
      const deal = yield* accepted(buyer, service.id)
      const wallet = yield* Wallet
      const autonomy = (autonomyLevel: string) =>
        wallet.updatePolicy(buyer.agentId, Schema.decodeUnknownSync(UpdateWalletBody)({ autonomyLevel }), {
          byOwner: true,
          actorId: "acct_money"
        })
      yield* autonomy("manual")
      const commerce = yield* Commerce
      const buy = Effect.suspend(() =>
        commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "basic", input: 1, negotiationId: deal.id })
      )
      const asked = yield* buy
      expect(asked).toMatchObject({ status: "pending_approval", approval: { negotiationId: deal.id } })
      yield* commerce.withdrawApproval(buyer.caller, asked.approval!.id)
      yield* autonomy("full_auto")
      expect(yield* buy).toMatchObject({ status: "completed", transaction: { priceCents: deal.priceCents } })
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - deal.priceCents)
    })
  )

  it.effect("the order expires unanswered: the buyer is refunded and can use the negotiation again", () =>
    Effect.gen(function* () {
      const seller = yield* pullSeller
      const buyer = yield* fundedBuyer(1_000)
      const deal = yield* accepted(buyer, seller.service.id)
      const first = yield* buyWith(buyer, seller.service.id, deal.id)
      const orderId = first.transaction!.id
      const orders = yield* Orders
      const order = yield* orders.get(seller.agentId, orderId)
      yield* TestClock.adjust(Date.parse(order.deadlineAt) - (yield* Clock.currentTimeMillis))
      expect(yield* orders.expireDue).toBe(1)
      expect((yield* orders.get(buyer.agentId, orderId)).status).toBe("expired")
      expect(yield* balance(escrowAccount(orderId))).toBe(0)
      expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)

      const again = yield* buyWith(buyer, seller.service.id, deal.id)
      expect(again).toMatchObject({ status: "pending", transaction: { priceCents: deal.priceCents } })
    })
  )
})
