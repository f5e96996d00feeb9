// What counts against a seller's SLA report (GET services/:id/sla), on every storage, from
// docs/fulfilment.md "Judged by what it controls": a failed order, an expired push order that reached
// the seller and every expired pull order (listed or not: a pull order is the seller's from its
// placing) count as deliveries that did not succeed; a push order that expired before any attempt
// reached its seller does not count at all. The dispatcher does not run here: a push order is offered
// by one attempt the test makes (PushDispatcher.attempt) over a transport that answers 202.
import { expect } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { escrowAccount, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { PushDispatcher } from "../../src/services/purchases/PushWorker.js"
import { WebhookTransport } from "../../src/services/webhooks/WebhookTransport.js"
import type { StorageCase } from "../fixtures/db.js"
import { commerceStack, fundedBuyer, liveSellerAgent, sellerWith, serviceBody, tier } from "../fixtures/money.js"
import { forEachStorage } from "../fixtures/suite.js"

const PRICE = 100

/** A seller's endpoint that accepts every push (202) and answers later, through the API. */
const Accepting = Layer.succeed(WebhookTransport, {
  check: () => Effect.void,
  send: () => Effect.succeed({ ok: true, status: 202, durationMs: 1, error: null, body: "" }),
  timeoutMs: 10_000
})

const stack = (storage: ReturnType<StorageCase["layer"]>) =>
  PushDispatcher.layer.pipe(
    Layer.provideMerge(Orders.layer),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(commerceStack(storage)),
    Layer.provideMerge(Accepting)
  )

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))

/** A seller of its own account with one service (p95 1 s: a 10 s deadline) of the given fulfilment. */
const sellerOf = (mode: "pull" | "push") =>
  Effect.gen(function* () {
    const { agentId, caller } = yield* liveSellerAgent(`${mode} seller`)
    const service = yield* Effect.flatMap(Catalog, (c) =>
      c.publish(
        caller,
        serviceBody(
          `Judged ${mode}`,
          [tier("basic", PRICE)],
          "testing",
          mode === "pull" ? { mode } : { mode, url: "https://seller.example/orders" }
        )
      )
    )
    return { agentId, service }
  })

/** The tier's figures as the SLA report gives them. */
const reportOf = (serviceId: string) =>
  Effect.map(
    Effect.flatMap(Catalog, (c) => c.sla(serviceId)),
    (r) => r.tiers[0]!
  )

forEachStorage(
  "what counts against a seller's SLA",
  stack,
  (it) => {
    it.effect(
      "a failed order and an expired pull order count against the seller; an expired push order counts only if a push reached it",
      () =>
        Effect.gen(function* () {
          yield* TestClock.setTime(Date.parse("2026-11-28T12:00:00.000Z"))
          const orders = yield* Orders
          const commerce = yield* Commerce
          const buyer = yield* fundedBuyer(10_000)
          const buy = (serviceId: string) =>
            Effect.map(
              commerce.buy({ caller: buyer.caller, serviceId, tierId: "basic", input: "x" }),
              (p) => p.transaction!.id
            )

          // A pull seller: one delivered, one failed, one never listed and left to expire.
          const pull = yield* sellerOf("pull")
          const delivered = yield* buy(pull.service.id)
          const failed = yield* buy(pull.service.id)
          const ignored = yield* buy(pull.service.id)
          yield* orders.deliver(pull.agentId, delivered, { output: "done" })
          yield* orders.fail(pull.agentId, failed, { error: "cannot" })

          // A push seller: one order offered (a push reached it; it accepted) and one never pushed.
          const push = yield* sellerOf("push")
          const offered = yield* buy(push.service.id)
          const neverPushed = yield* buy(push.service.id)
          // One the seller failed by its id (from order.created) before any push: its own answer counts.
          const failedUnpushed = yield* buy(push.service.id)
          yield* orders.fail(push.agentId, failedUnpushed, { error: "will not do it" })
          const due = yield* orders.get(push.agentId, offered)
          yield* Effect.flatMap(PushDispatcher, (d) => d.attempt(due))
          expect((yield* orders.get(push.agentId, offered)).offeredAt).not.toBeNull()
          expect((yield* orders.get(push.agentId, neverPushed)).offeredAt ?? null).toBeNull()

          // The deadline (10 s) passes for all three left pending: each expires, refunded in full.
          yield* TestClock.adjust("10 seconds")
          let swept = 0
          for (let n = yield* orders.expireDue; n > 0; n = yield* orders.expireDue) swept += n
          expect(swept).toBeGreaterThanOrEqual(3)
          for (const [seller, id] of [
            [pull.agentId, ignored],
            [push.agentId, offered],
            [push.agentId, neverPushed]
          ] as const) {
            expect((yield* orders.get(seller, id)).status).toBe("expired")
            expect(yield* balance(escrowAccount(id))).toBe(0)
          }
          expect(yield* balance(walletAccount(buyer.agentId))).toBe(10_000 - PRICE)

          // Judged: the pull seller on its three orders (one success), the push seller on the one it was
          // offered and the one it failed itself.
          expect(yield* reportOf(pull.service.id)).toMatchObject({
            deliveries: 3,
            successes: 1,
            availabilityCompliant: false,
            status: "breached"
          })
          expect((yield* reportOf(pull.service.id)).successRatePct).toBeCloseTo(100 / 3, 1)
          expect(yield* reportOf(push.service.id)).toMatchObject({ deliveries: 2, successes: 0, successRatePct: 0 })
          // Both buyer-side records still say the purchase failed: the rule is about the seller only.
          for (const id of [ignored, offered, neverPushed]) {
            expect((yield* commerce.getTransaction(buyer.agentId, id)).status).toBe("failed")
          }
          // The seller reading its list after the expiry is not "offered" an order that had ended:
          // offeredAt stays what it was when the order ended.
          const listed = yield* orders.list(push.agentId, {})
          expect(listed.orders.find((o) => o.id === neverPushed)?.offeredAt ?? null).toBeNull()
          expect((yield* orders.get(push.agentId, neverPushed)).offeredAt ?? null).toBeNull()
        })
    )

    it.effect("a push seller whose every order expired unpushed has no data, not a breach", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(Date.parse("2026-11-28T13:00:00.000Z"))
        const orders = yield* Orders
        const buyer = yield* fundedBuyer(1_000)
        const push = yield* sellerOf("push")
        for (let i = 0; i < 2; i++) {
          yield* Effect.flatMap(Commerce, (c) =>
            c.buy({ caller: buyer.caller, serviceId: push.service.id, tierId: "basic", input: i })
          )
        }
        yield* TestClock.adjust("10 seconds")
        let swept = 0
        for (let n = yield* orders.expireDue; n > 0; n = yield* orders.expireDue) swept += n
        expect(swept).toBeGreaterThanOrEqual(2)
        expect(yield* reportOf(push.service.id)).toMatchObject({ status: "no_data", deliveries: 0, successes: 0 })
        expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000)
      })
    )

    it.effect("a simulated seller's failed delivery counts against it, as a real seller's does", () =>
      Effect.gen(function* () {
        const buyer = yield* fundedBuyer(1_000)
        const { service } = yield* sellerWith("Simulated, judged", [tier("basic", PRICE)])
        const buy = (input: unknown) =>
          Effect.flatMap(Commerce, (c) =>
            c.buy({ caller: buyer.caller, serviceId: service.id, tierId: "basic", input })
          )
        expect(yield* buy({ simulate: "fail" })).toMatchObject({ status: "failed" })
        expect(yield* buy("ok")).toMatchObject({ status: "completed" })
        expect(yield* reportOf(service.id)).toMatchObject({ deliveries: 2, successes: 1, successRatePct: 50 })
      })
    )
  },
  // No dispatcher, no sweeper, and a buy of a push service does not wait for its seller's answer.
  { workers: false, orderWaitMs: 0 }
)
