// What a live seller is promised about its negotiations (docs/negotiation.md, "Who answers for the
// seller"), on every storage: an agent selling through pull or push fulfilment hears of each
// proposal, finds it in its inbox, and has the whole window to answer it itself; its answer is the
// answer (the automatic seller never overrides it); only if it stays silent does the automatic
// seller answer, at the end of the window and not before. The platform's simulated sellers still
// answer after NEGOTIATION_DELAY_MS. A price the live seller accepted is exactly what the buyer pays.
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { readFileSync } from "node:fs"
import { describe, it as vit } from "vitest"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Events } from "../../src/services/events/Events.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { NegotiatedPricesLive } from "../../src/services/negotiation/NegotiatedPricesLive.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { Ids } from "../../src/services/platform/Db.js"
import { isLiveSeller, SELLER_WINDOW_MS } from "../../src/services/negotiation/policy.js"
import { PublishServiceBody } from "../../src/schema/commerce/services.js"
import { agentCaller, commerceServices, fundedBuyer, liveSellerAgent, serviceBody, tier } from "../fixtures/money.js"
import type { StorageCase } from "../fixtures/db.js"
import { forEachStorage } from "../fixtures/suite.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"

/** The spec's 30 s less the worker's two ticks (docs/negotiation.md, "Timing"). */
const WINDOW = 29_600
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

/** A seller agent of an ordinary account, its service published with `mode` and no negotiation policy. */
const liveSeller = (mode: "pull" | "push" = "pull") =>
  Effect.gen(function* () {
    const { agentId, caller } = yield* liveSellerAgent("live seller", { unlimited: false })
    const fulfilment: PublishServiceBody["fulfilment"] =
      mode === "pull" ? { mode } : { mode, url: "https://seller.example.com/orders" }
    // As the API takes it: decoded, with no `negotiation` given.
    const { negotiation: _none, ...raw } = serviceBody("Negotiable", [tier("basic", LIST)], "testing", fulfilment)
    const body = Schema.decodeUnknownSync(PublishServiceBody)(raw)
    const service = yield* Effect.flatMap(Catalog, (c) => c.publish(caller, body))
    return { agentId, caller, service }
  })

const propose = (buyer: { caller: ReturnType<typeof agentCaller> }, serviceId: string, cents: number) =>
  Effect.flatMap(Negotiations, (n) => n.open(buyer.caller, { serviceId, tierId: "basic", proposedPriceCents: cents }))

const sellerEntries = (n: { history: ReadonlyArray<{ by: string; action: string; priceCents: number | null }> }) =>
  n.history
    .filter((h) => h.by === "seller")
    .map((h) => [h.action, h.priceCents, (h as { automatic?: boolean }).automatic])

describe("who answers for the seller (docs/negotiation.md)", () => {
  vit("the windows table: live sellers (pull, push) get 29 600 ms, simulated ones the configured delay", () => {
    expect(SELLER_WINDOW_MS).toBe(WINDOW)
    const svc = (mode: "pull" | "push" | "simulated") => ({ id: "svc", fulfilment: { mode } })
    expect([isLiveSeller(svc("pull")), isLiveSeller(svc("push")), isLiveSeller(svc("simulated"))]).toEqual([
      true,
      true,
      false
    ])
    // An offer without a fulfilment is a platform seller's (the seeded offers carry none).
    expect(isLiveSeller({ id: "svc" })).toBe(false)
    const doc = readFileSync(new URL("../../docs/negotiation.md", import.meta.url), "utf8")
    expect(doc).toMatch(/^\| `pull`, `push` \(an agent's service\) \| .* \| 29 600 ms after /m)
    expect(doc).toMatch(
      /^\| `simulated` \(the platform's seeded sellers\) \| the automatic seller \| `NEGOTIATION_DELAY_MS` /m
    )
    // The default policy an agent's service gets when it names none, as the page says.
    const { negotiation: _none, ...raw } = serviceBody("x", [tier("basic", LIST)], "testing", { mode: "pull" })
    const { negotiation } = Schema.decodeUnknownSync(PublishServiceBody)(raw)
    expect(negotiation).toEqual({ floorPct: 80, counterStepPct: 20 })
    expect(doc).toContain("`{floorPct: 80, counterStepPct: 20}`")
  })
})

forEachStorage("a live seller answers its negotiations", stack, (it) => {
  it.effect("silent: the automatic seller answers at the end of the window, not before, by the default policy", () =>
    Effect.gen(function* () {
      const negotiations = yield* Negotiations
      for (const mode of ["pull", "push"] as const) {
        const seller = yield* liveSeller(mode)
        // Published without a negotiation policy: the catalog gives it the default one (floor 80 %, step 20 %).
        expect(seller.service.negotiation).toEqual({ floorPct: 80, counterStepPct: 20 })
        const buyer = yield* fundedBuyer(0)
        const t0 = yield* Clock.currentTimeMillis
        const opened = yield* propose(buyer, seller.service.id, 50)
        expect(opened.sellerAnswerDueAt).toBe(new Date(t0 + WINDOW).toISOString())
        yield* TestClock.adjust(WINDOW - 1)
        yield* negotiations.runDue()
        expect((yield* negotiations.get(buyer.agentId, opened.id)).status, mode).toBe("awaiting_seller")
        yield* TestClock.adjust(1)
        yield* negotiations.runDue()
        const answered = yield* negotiations.get(buyer.agentId, opened.id)
        // floor 80, minimum 40; the counter moves 20 % of the gap: 100 − ⌊50 × 20 / 100⌋ = 90.
        expect(answered, mode).toMatchObject({ status: "awaiting_buyer", currentPriceCents: 90 })
        expect(sellerEntries(answered)).toEqual([["counter", 90, true]])
        // The buyer's counter gives the seller a whole window again.
        const t1 = yield* Clock.currentTimeMillis
        const countered = yield* negotiations.respond(buyer.caller, opened.id, {
          action: "counter",
          counterPriceCents: 70
        })
        expect(countered.sellerAnswerDueAt).toBe(new Date(t1 + WINDOW).toISOString())
        // Default policy, round 2: 90 − ⌊20 × 20 / 100⌋ = 86.
        yield* TestClock.adjust(WINDOW)
        yield* negotiations.runDue()
        expect(sellerEntries(yield* negotiations.get(buyer.agentId, opened.id))).toEqual([
          ["counter", 90, true],
          ["counter", 86, true]
        ])
      }
    })
  )

  it.effect("the seller hears of the proposal and finds it in its inbox (role=seller, status=awaiting_seller)", () =>
    Effect.gen(function* () {
      const negotiations = yield* Negotiations
      const seller = yield* liveSeller()
      const buyer = yield* fundedBuyer(0)
      const first = yield* propose(buyer, seller.service.id, 60)
      yield* TestClock.adjust(1)
      const second = yield* propose(buyer, seller.service.id, 70)
      yield* TestClock.adjust(1)
      const third = yield* propose(buyer, seller.service.id, 80)
      const heard = (yield* Effect.flatMap(Events, (e) => e.listForAgent(seller.agentId, 50))).filter(
        (e) => e.type === "negotiation.updated"
      )
      expect(heard.map((e) => [e.data.negotiationId, e.data.action, e.data.status])).toEqual([
        [third.id, "propose", "awaiting_seller"],
        [second.id, "propose", "awaiting_seller"],
        [first.id, "propose", "awaiting_seller"]
      ])
      yield* negotiations.respond(seller.caller, second.id, { action: "reject" })
      const inbox = { role: "seller", status: "awaiting_seller" } as const
      const page1 = yield* negotiations.list(seller.agentId, { ...inbox, limit: 1 })
      expect(page1.data.map((n) => n.id)).toEqual([third.id])
      const page2 = yield* negotiations.list(seller.agentId, { ...inbox, limit: 1, cursor: page1.nextCursor! })
      expect(page2.data.map((n) => n.id)).toEqual([first.id])
      expect(page2.nextCursor).toBeNull()
      // The buyer sells nothing here; the seller's rejected one is listed under its state.
      expect((yield* negotiations.list(buyer.agentId, inbox)).data).toEqual([])
      expect((yield* negotiations.list(buyer.agentId, { role: "buyer" })).data).toHaveLength(3)
      const rejected = yield* negotiations.list(seller.agentId, { role: "seller", status: "rejected" })
      expect(rejected.data.map((n) => n.id)).toEqual([second.id])
    })
  )

  it.effect("the seller's counter, accept or reject is the answer: the worker after the window adds nothing", () =>
    Effect.gen(function* () {
      const negotiations = yield* Negotiations
      const seller = yield* liveSeller()
      const buyer = yield* fundedBuyer(0)
      const countered = yield* propose(buyer, seller.service.id, 50)
      const accepted = yield* propose(buyer, seller.service.id, 55)
      const rejected = yield* propose(buyer, seller.service.id, 45)
      // Answered in the window's last moment: still the seller's answer.
      yield* TestClock.adjust(WINDOW - 1)
      yield* negotiations.respond(seller.caller, countered.id, { action: "counter", counterPriceCents: 99 })
      yield* negotiations.respond(seller.caller, accepted.id, { action: "accept" })
      yield* negotiations.respond(seller.caller, rejected.id, { action: "reject" })
      // The worker passes right after the window, and again much later (other suites' rows may be due too).
      yield* TestClock.adjust(1)
      yield* negotiations.runDue()
      yield* TestClock.adjust(WINDOW)
      yield* negotiations.runDue()
      const now = (id: string) => negotiations.get(buyer.agentId, id)
      expect(yield* now(countered.id)).toMatchObject({ status: "awaiting_buyer", currentPriceCents: 99 })
      expect(sellerEntries(yield* now(countered.id))).toEqual([["counter", 99, false]])
      expect(yield* now(accepted.id)).toMatchObject({ status: "accepted", agreedPriceCents: 55 })
      expect(sellerEntries(yield* now(accepted.id))).toEqual([["accept", 55, false]])
      expect(yield* now(rejected.id)).toMatchObject({ status: "rejected" })
      expect(sellerEntries(yield* now(rejected.id))).toEqual([["reject", null, false]])
      // The buyer heard each of the seller's own answers.
      const heard = (yield* Effect.flatMap(Events, (e) => e.listForAgent(buyer.agentId, 50))).filter(
        (e) => e.type === "negotiation.updated" && e.data.by === "seller"
      )
      expect(heard.map((e) => [e.data.action, e.data.automatic]).sort()).toEqual([
        ["accept", false],
        ["counter", false],
        ["reject", false]
      ])
    })
  )

  it.effect("once the automatic seller has answered, the live seller's late answer is refused (409)", () =>
    Effect.gen(function* () {
      const negotiations = yield* Negotiations
      const seller = yield* liveSeller()
      const buyer = yield* fundedBuyer(0)
      const opened = yield* propose(buyer, seller.service.id, 50)
      yield* TestClock.adjust(WINDOW)
      yield* negotiations.runDue()
      const late = yield* Effect.flip(negotiations.respond(seller.caller, opened.id, { action: "accept" }))
      expect(late).toMatchObject({ _tag: "NegotiationClosed", status: "awaiting_buyer", turn: "buyer" })
    })
  )

  it.effect("a platform (simulated) seller still answers after NEGOTIATION_DELAY_MS", () =>
    Effect.gen(function* () {
      const negotiations = yield* Negotiations
      const buyer = yield* fundedBuyer(0)
      const t0 = yield* Clock.currentTimeMillis
      const opened = yield* negotiations.open(buyer.caller, {
        serviceId: "svc_doc_translate",
        tierId: "business",
        proposedPriceCents: 5000
      })
      expect(negotiations.delayMs).toBe(3000)
      expect(opened.sellerAnswerDueAt).toBe(new Date(t0 + 3000).toISOString())
      yield* TestClock.adjust(2999)
      yield* negotiations.runDue()
      expect((yield* negotiations.get(buyer.agentId, opened.id)).status).toBe("awaiting_seller")
      yield* TestClock.adjust(1)
      yield* negotiations.runDue()
      expect(yield* negotiations.get(buyer.agentId, opened.id)).toMatchObject({
        status: "awaiting_buyer",
        currentPriceCents: 7030
      })
    })
  )

  it.effect("the buyer redeeming the live seller's accepted price pays exactly it", () =>
    Effect.gen(function* () {
      const negotiations = yield* Negotiations
      const seller = yield* liveSeller()
      const buyer = yield* fundedBuyer(1_000)
      const opened = yield* propose(buyer, seller.service.id, 40)
      yield* negotiations.respond(seller.caller, opened.id, { action: "counter", counterPriceCents: 73 })
      const deal = yield* negotiations.respond(buyer.caller, opened.id, { action: "accept" })
      expect(deal).toMatchObject({ status: "accepted", agreedPriceCents: 73 })
      const bought = yield* Effect.flatMap(Commerce, (c) =>
        c.buy({
          caller: buyer.caller,
          serviceId: seller.service.id,
          tierId: "basic",
          input: "text",
          negotiationId: deal.id
        })
      )
      expect(bought).toMatchObject({ status: "pending", transaction: { priceCents: 73 } })
      yield* Effect.flatMap(Orders, (o) => o.deliver(seller.agentId, bought.transaction!.id, { output: "done" }))
      const tx = yield* Effect.flatMap(Commerce, (c) => c.getTransaction(buyer.agentId, bought.transaction!.id))
      expect(tx).toMatchObject({ status: "completed", priceCents: 73 })
      expect(yield* Effect.flatMap(LedgerStore, (l) => l.balance(walletAccount(buyer.agentId)))).toBe(1_000 - 73)
      expect((yield* negotiations.get(buyer.agentId, deal.id)).status).toBe("used")
    })
  )
})
