// Negotiation suite, run on memory and Postgres: the seller's answer lands at the configured delay
// (TestClock + runDue) exactly once, turns and the transition table are enforced, terms give no discount, the
// price points, the round limit holds, and an accepted price is redeemable once until it expires.
// The seller policy's numbers are pure and pinned once.
import { expect } from "@effect/vitest"
import { Clock, Effect, Result, Layer } from "effect"
import { TestClock } from "effect/testing"
import { readFileSync } from "node:fs"
import { describe, it as vit } from "vitest"
import type { Permission } from "../../src/schema/keys/keys.js"
import {
  MAX_ROUNDS,
  negotiationTransitions,
  OFFER_VALIDITY_MS,
  policyPrices,
  sellerDecision
} from "../../src/schema/negotiation/negotiation.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Events } from "../../src/services/events/Events.js"
import { NegotiationServicesLive } from "../fixtures/services.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { effectiveDelayMs } from "../../src/services/negotiation/policy.js"
import { SeedOffersLive } from "../../src/services/purchases/Offers.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { forEachStorage } from "../fixtures/suite.js"

// ---------------------------------------------------------------------------------------------
// The seller policy (pure): the numbers docs/negotiation.md shows

const docTranslate = { floorPct: 70, counterStepPct: 30 } // svc_doc_translate
describe("seller policy", () => {
  vit("price points: target, floor and minimum from the list price and the policy", () => {
    expect(policyPrices(7900, docTranslate)).toEqual({
      listPriceCents: 7900,
      targetCents: 7900,
      floorCents: 5530,
      minimumCents: 2765
    })
    // The floor never goes below 50 % of the list price; 1-cent prices stay at 1 cent.
    expect(policyPrices(1000, { floorPct: 40, counterStepPct: 10 }).floorCents).toBe(500)
    expect(policyPrices(1, { floorPct: 85, counterStepPct: 15 })).toMatchObject({
      targetCents: 1,
      floorCents: 1,
      minimumCents: 1
    })
  })

  vit(
    "decisions: accept at the target, reject below the minimum, counter toward the buyer, final round at the floor",
    () => {
      const prices = policyPrices(7900, docTranslate)
      const decide = (offerCents: number, round: number, previousAskCents?: number) =>
        sellerDecision({ offerCents, round, previousAskCents, prices, policy: docTranslate })
      expect(decide(7900, 1)).toMatchObject({ action: "accept", priceCents: 7900 })
      expect(decide(2764, 1)).toMatchObject({ action: "reject" })
      expect(decide(5000, 1)).toMatchObject({ action: "counter", priceCents: 7030 })
      expect(decide(6000, 2, 7030)).toMatchObject({ action: "counter", priceCents: 6721 })
      expect(decide(3000, 2, 7030)).toMatchObject({ action: "counter", priceCents: 5821 })
      expect(decide(3000, 3, 5600)).toMatchObject({ action: "counter", priceCents: 5530 }) // clamped at the floor
      expect(decide(5530, MAX_ROUNDS, 5600)).toMatchObject({ action: "accept", priceCents: 5530 })
      expect(decide(5529, MAX_ROUNDS, 5600)).toMatchObject({ action: "reject" })
    }
  )

  vit("docs/negotiation.md lists exactly the enforced transition table", () => {
    const doc = readFileSync(new URL("../../docs/negotiation.md", import.meta.url), "utf8")
    const rows = [...doc.matchAll(/^\| `([a-z_()]+)` \| (buyer|seller|system) \| `([a-z]+)` \| `([a-z_]+)` \|/gm)].map(
      (m) => `${m[1]} ${m[2]} ${m[3]} ${m[4]}`
    )
    expect(rows.sort()).toEqual(negotiationTransitions.map((t) => `${t.from} ${t.by} ${t.action} ${t.to}`).sort())
  })

  vit("the scheduled delay never lets the answer pass 30 seconds", () => {
    expect(effectiveDelayMs(3000)).toBe(3000)
    expect(effectiveDelayMs(0)).toBe(0)
    expect(effectiveDelayMs(30_000)).toBeLessThanOrEqual(29_600)
  })
})

// ---------------------------------------------------------------------------------------------
// The service, per storage

const DELAY = 3000
const SERVICE = "svc_doc_translate"
const TIER = "business" // 7900 cents, floor 70 %, step 30 %
const SELLER = "agt_seller_lexica"

let n = 0
const buyer = (permissions: ReadonlyArray<Permission> = ["commerce:negotiate", "commerce:read"]) => ({
  accountId: "acct_test",
  agentId: `agt_buyer_${++n}_${Math.random().toString(36).slice(2, 8)}`,
  permissions: new Set<Permission>(permissions)
})
const seller = (permissions: ReadonlyArray<Permission> = ["commerce:negotiate", "commerce:sell"]) => ({
  accountId: "acct_seller",
  agentId: SELLER,
  permissions: new Set<Permission>(permissions)
})

forEachStorage(
  "negotiation",
  (storage) =>
    NegotiationServicesLive.pipe(
      Layer.provideMerge(SeedOffersLive),
      Layer.provideMerge(Wallet.layer),
      Layer.provideMerge(Layer.mergeAll(Ledger.layer, Events.layer)),
      Layer.provideMerge(storage),
      Layer.provideMerge(Ids.Live)
    ),
  (it) => {
    it.effect("the seller's answer comes at the configured delay, exactly once, and is announced to both parties", () =>
      Effect.gen(function* () {
        const negotiations = yield* Negotiations
        const events = yield* Events
        const b = buyer()
        const t0 = yield* Clock.currentTimeMillis
        const opened = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 5000 })
        expect(opened).toMatchObject({
          status: "awaiting_seller",
          turn: "seller",
          round: 0,
          listPriceCents: 7900,
          currentPriceCents: 5000,
          sellerAnswerDueAt: new Date(t0 + DELAY).toISOString()
        })
        yield* TestClock.adjust(DELAY - 1)
        yield* negotiations.runDue()
        expect((yield* negotiations.get(b.agentId, opened.id)).status).toBe("awaiting_seller")
        yield* TestClock.adjust(1)
        yield* negotiations.runDue()
        const answered = yield* negotiations.get(b.agentId, opened.id)
        expect(answered).toMatchObject({
          status: "awaiting_buyer",
          turn: "buyer",
          round: 1,
          currentPriceCents: 7030,
          sellerAnswerDueAt: null
        })
        expect(answered.expiresAt).toBe(new Date(t0 + DELAY + OFFER_VALIDITY_MS).toISOString())
        expect(answered.history.map((h) => [h.by, h.action, h.priceCents, h.automatic])).toEqual([
          ["buyer", "propose", 5000, false],
          ["seller", "counter", 7030, true]
        ])
        // Another pass, later: nothing is answered twice.
        yield* TestClock.adjust(10 * DELAY)
        yield* negotiations.runDue()
        expect((yield* negotiations.get(b.agentId, opened.id)).history).toHaveLength(2)
        const mine = (yield* events.listForAgent(b.agentId, 50)).filter((e) => e.type === "negotiation.updated")
        expect(mine.map((e) => [e.data.action, e.data.status])).toEqual([
          ["counter", "awaiting_buyer"],
          ["propose", "awaiting_seller"]
        ])
        expect((yield* events.listForAgent(SELLER, 500)).some((e) => e.data.negotiationId === opened.id)).toBe(true)
      })
    )

    it.effect("a full exchange: counter, counter, accept; the agreed price is valid for 24 h", () =>
      Effect.gen(function* () {
        const negotiations = yield* Negotiations
        const b = buyer()
        const t0 = yield* Clock.currentTimeMillis
        const opened = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 5000 })
        yield* TestClock.adjust(DELAY)
        yield* negotiations.runDue()
        const countered = yield* negotiations.respond(b, opened.id, { action: "counter", counterPriceCents: 6000 })
        expect(countered).toMatchObject({
          status: "awaiting_seller",
          currentPriceCents: 6000,
          sellerAnswerDueAt: new Date(t0 + 2 * DELAY).toISOString()
        })
        yield* TestClock.adjust(DELAY)
        yield* negotiations.runDue()
        expect(yield* negotiations.get(b.agentId, opened.id)).toMatchObject({
          status: "awaiting_buyer",
          round: 2,
          currentPriceCents: 6721
        })
        const accepted = yield* negotiations.respond(b, opened.id, { action: "accept" })
        expect(accepted).toMatchObject({
          status: "accepted",
          turn: null,
          agreedPriceCents: 6721,
          expiresAt: new Date(t0 + 2 * DELAY + OFFER_VALIDITY_MS).toISOString()
        })
        expect(accepted.history.map((h) => `${h.by}:${h.action}:${h.priceCents}`)).toEqual([
          "buyer:propose:5000",
          "seller:counter:7030",
          "buyer:counter:6000",
          "seller:counter:6721",
          "buyer:accept:6721"
        ])
      })
    )

    it.effect("turns and closed states are enforced (409), a counter needs a price (422), strangers get 404", () =>
      Effect.gen(function* () {
        const negotiations = yield* Negotiations
        const b = buyer()
        const opened = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 5000 })
        const early = yield* Effect.flip(negotiations.respond(b, opened.id, { action: "accept" }))
        expect(early).toMatchObject({ _tag: "NegotiationClosed", status: "awaiting_seller", turn: "seller" })
        yield* TestClock.adjust(DELAY)
        yield* negotiations.runDue()
        expect(yield* Effect.flip(negotiations.respond(b, opened.id, { action: "counter" }))).toMatchObject({
          _tag: "InvalidOffer",
          field: "counterPriceCents"
        })
        expect(
          yield* Effect.flip(negotiations.respond(b, opened.id, { action: "counter", counterPriceCents: 7030 }))
        ).toMatchObject({ _tag: "InvalidOffer" })
        expect(yield* Effect.flip(negotiations.respond(buyer(), opened.id, { action: "accept" }))).toMatchObject({
          _tag: "NotFound"
        })
        expect(yield* Effect.flip(negotiations.get(buyer().agentId, opened.id))).toMatchObject({ _tag: "NotFound" })
        yield* negotiations.respond(b, opened.id, { action: "reject" })
        const closed = yield* Effect.flip(negotiations.respond(b, opened.id, { action: "accept" }))
        expect(closed).toMatchObject({ _tag: "NegotiationClosed", status: "rejected", turn: null })
        expect(
          yield* Effect.flip(negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 7901 }))
        ).toMatchObject({ _tag: "InvalidOffer" })
        expect(
          yield* Effect.flip(negotiations.open(b, { serviceId: "svc_nope", tierId: TIER, proposedPriceCents: 1 }))
        ).toMatchObject({ _tag: "NotFound", resource: "service" })
        expect(
          yield* Effect.flip(negotiations.open(b, { serviceId: SERVICE, tierId: "gold", proposedPriceCents: 1 }))
        ).toMatchObject({ _tag: "NotFound", resource: "tier" })
      })
    )

    it.effect("a seller agent with commerce:sell may answer before the automatic seller; without it, 403", () =>
      Effect.gen(function* () {
        const negotiations = yield* Negotiations
        const b = buyer()
        const opened = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 5000 })
        expect(
          yield* Effect.flip(negotiations.respond(seller(["commerce:negotiate"]), opened.id, { action: "accept" }))
        ).toMatchObject({ _tag: "Forbidden" })
        const countered = yield* negotiations.respond(seller(), opened.id, {
          action: "counter",
          counterPriceCents: 7500
        })
        expect(countered).toMatchObject({ status: "awaiting_buyer", currentPriceCents: 7500, sellerAnswerDueAt: null })
        expect(countered.history[1]).toMatchObject({ by: "seller", action: "counter", automatic: false })
        // The scheduled automatic answer is gone with it.
        yield* TestClock.adjust(DELAY)
        yield* negotiations.runDue()
        expect((yield* negotiations.get(b.agentId, opened.id)).history).toHaveLength(2)
        expect(yield* Effect.flip(negotiations.respond(seller(), opened.id, { action: "accept" }))).toMatchObject({
          _tag: "NegotiationClosed",
          turn: "buyer"
        })
      })
    )

    it.effect(
      "terms buy no discount (the answer is the one without them); a lowball is rejected; the last round settles at the floor",
      () =>
        Effect.gen(function* () {
          const negotiations = yield* Negotiations
          const b = buyer()
          // A buyer promising volume and a long commitment: nothing holds it to the promise, so the
          // seller's answer is what it would be with no terms (docs/negotiation.md, "Terms").
          const withTerms = yield* negotiations.open(b, {
            serviceId: SERVICE,
            tierId: TIER,
            proposedPriceCents: 7189,
            terms: { volume: 1000, durationMonths: 120 }
          })
          const without = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 7189 })
          const lowball = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 2764 })
          const rounds = yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 3000 })
          yield* TestClock.adjust(DELAY)
          yield* negotiations.runDue()
          // 7189 is below the 7900 list price: the seller counters 7900 − ⌊(7900 − 7189) × 30 %⌋ = 7687, terms or not.
          expect(yield* negotiations.get(b.agentId, withTerms.id)).toMatchObject({
            status: "awaiting_buyer",
            currentPriceCents: 7687,
            agreedPriceCents: null,
            terms: { volume: 1000, durationMonths: 120 }
          })
          expect(yield* negotiations.get(b.agentId, without.id)).toMatchObject({
            status: "awaiting_buyer",
            currentPriceCents: 7687,
            agreedPriceCents: null
          })
          expect(yield* negotiations.get(b.agentId, lowball.id)).toMatchObject({
            status: "rejected",
            agreedPriceCents: null
          })
          // Keep offering 5530 (the floor): the seller counters down to the floor, then accepts in the last round.
          const asks: Array<number> = []
          for (let round = 1; round < MAX_ROUNDS; round++) {
            const current = yield* negotiations.get(b.agentId, rounds.id)
            expect(current.status).toBe("awaiting_buyer")
            asks.push(current.currentPriceCents)
            yield* negotiations.respond(b, rounds.id, { action: "counter", counterPriceCents: 5530 })
            yield* TestClock.adjust(DELAY)
            yield* negotiations.runDue()
          }
          expect(asks).toEqual([6430, 6160, 5971, 5839])
          expect(yield* negotiations.get(b.agentId, rounds.id)).toMatchObject({
            status: "accepted",
            round: MAX_ROUNDS,
            agreedPriceCents: 5530
          })
        })
    )

    it.effect(
      "an accepted price is redeemable once, for its service and tier, by its buyer, until it expires; release gives it back",
      () =>
        Effect.gen(function* () {
          const negotiations = yield* Negotiations
          const b = buyer()
          const accept = (price: number) =>
            Effect.gen(function* () {
              const opened = yield* negotiations.open(b, {
                serviceId: SERVICE,
                tierId: TIER,
                proposedPriceCents: price
              })
              yield* TestClock.adjust(DELAY)
              yield* negotiations.runDue()
              return opened.id
            })
          const id = yield* accept(7900)
          const redeem = (usedBy: string, over: Partial<{ agentId: string; serviceId: string; tierId: string }> = {}) =>
            Effect.result(
              negotiations.redeem({
                agentId: b.agentId,
                negotiationId: id,
                serviceId: SERVICE,
                tierId: TIER,
                usedBy,
                ...over
              })
            )
          expect(Result.getFailure(yield* redeem("x", { tierId: "starter" }))).toMatchObject({
            value: { _tag: "NegotiationUnusable" }
          })
          expect(Result.getFailure(yield* redeem("x", { agentId: buyer().agentId }))).toMatchObject({
            value: { _tag: "NotFound" }
          })
          const first = yield* redeem("txn_1")
          expect(Result.getOrThrow(first).priceCents).toBe(7900)
          expect(Result.getFailure(yield* redeem("txn_2"))).toMatchObject({
            value: { _tag: "NegotiationUnusable", status: "used" }
          })
          expect(yield* negotiations.get(b.agentId, id)).toMatchObject({ status: "used", usedBy: "txn_1" })
          expect(yield* negotiations.release(id, "txn_other")).toBe(false)
          expect(yield* negotiations.release(id, "txn_1")).toBe(true)
          expect(Result.getOrThrow(yield* redeem("txn_3")).priceCents).toBe(7900)

          const later = yield* accept(7900)
          yield* TestClock.adjust(OFFER_VALIDITY_MS)
          expect(yield* negotiations.get(b.agentId, later)).toMatchObject({ status: "expired", turn: null })
          const expired = yield* Effect.flip(
            negotiations.redeem({
              agentId: b.agentId,
              negotiationId: later,
              serviceId: SERVICE,
              tierId: TIER,
              usedBy: "txn_4"
            })
          )
          expect(expired).toMatchObject({ _tag: "NegotiationUnusable", status: "expired" })
        })
    )

    it.effect("lists the agent's negotiations newest first in cursor pages, as buyer or seller", () =>
      Effect.gen(function* () {
        const negotiations = yield* Negotiations
        const b = buyer()
        const ids: Array<string> = []
        for (let i = 0; i < 5; i++) {
          ids.push((yield* negotiations.open(b, { serviceId: SERVICE, tierId: TIER, proposedPriceCents: 6000 + i })).id)
          yield* TestClock.adjust(1)
        }
        const p1 = yield* negotiations.list(b.agentId, { limit: 2 })
        const p2 = yield* negotiations.list(b.agentId, { limit: 2, cursor: p1.nextCursor! })
        const p3 = yield* negotiations.list(b.agentId, { limit: 2, cursor: p2.nextCursor! })
        expect([...p1.data, ...p2.data, ...p3.data].map((x) => x.id)).toEqual([...ids].reverse())
        expect(p3.nextCursor).toBeNull()
        const asSeller = yield* negotiations.list(SELLER, { limit: 100 })
        expect(asSeller.data.some((x) => x.id === ids[0])).toBe(true)
        expect(yield* Effect.flip(negotiations.list(b.agentId, { cursor: "nonsense" }))).toMatchObject({
          _tag: "InvalidInput"
        })
      })
    )
  },
  { negotiationDelayMs: DELAY }
)
