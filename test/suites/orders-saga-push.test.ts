// A saga buying from a push seller, on every storage, with the real workers on the wall clock: the
// seller's endpoint gets the saga's order (signed, under the transaction id the saga settles by),
// answers it inline, and the saga worker, woken by the answer, completes the saga with the seller's
// output and pays the seller 85 % from the saga's escrow (docs/saga.md, "Deliver on a real seller").
import { expect } from "@effect/vitest"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { makeNodeTransport } from "../../src/layers/webhooks/WebhookTransport.node.js"
import { escrowAccount, walletAccount } from "../../src/schema/ledger/ledger.js"
import { Catalog, CatalogOffersLive } from "../../src/services/commerce/Catalog.js"
import { LedgerStore } from "../../src/services/ledger/Ledger.js"
import { Negotiations } from "../../src/services/negotiation/Negotiation.js"
import { NegotiatedPricesLive } from "../../src/services/negotiation/NegotiatedPricesLive.js"
import { Orders } from "../../src/services/purchases/Orders.js"
import { PushWorkerLive } from "../../src/services/purchases/PushWorker.js"
import { Ids } from "../../src/services/platform/Db.js"
import { Sagas } from "../../src/services/saga/Saga.js"
import { SagaWorkerLive } from "../../src/services/saga/worker.js"
import { WebhookTransport } from "../../src/services/webhooks/WebhookTransport.js"
import type { StorageCase } from "../fixtures/db.js"
import { commerceServices, fundedBuyer, liveSellerAgent, serviceBody, tier } from "../fixtures/money.js"
import { startPushSeller } from "../fixtures/pushSeller.js"
import { forEachStorage } from "../fixtures/suite.js"
import { eventuallyEffect } from "../fixtures/wait.js"
import { SagaOrderOwnersLive } from "../../src/services/saga/SagaOrderOwners.js"

const PRICE = 100
/** The wall clock, for the layer's fibers (push dispatcher, saga worker): pushes go over real sockets. */
const LiveClock = Layer.effect(Clock.Clock, TestClock.withLive(Clock.clockWith(Effect.succeed)))

const stack = (storage: ReturnType<StorageCase["layer"]>) =>
  Layer.mergeAll(PushWorkerLive, SagaWorkerLive).pipe(
    Layer.provideMerge(Layer.mergeAll(commerceServices, Orders.layer, Sagas.layer)),
    Layer.provideMerge(NegotiatedPricesLive),
    Layer.provideMerge(Negotiations.layer),
    Layer.provideMerge(CatalogOffersLive.pipe(Layer.provide(Catalog.layer))),
    Layer.provideMerge(SagaOrderOwnersLive),
    Layer.provideMerge(storage),
    Layer.provideMerge(Ids.Live),
    Layer.provideMerge(
      Layer.succeed(WebhookTransport, makeNodeTransport({ allowLoopback: true, httpsOnly: false, timeoutMs: 2_000 }))
    ),
    Layer.provide(LiveClock)
  )

const balance = (account: string) => Effect.flatMap(LedgerStore, (l) => l.balance(account))

forEachStorage("saga orders by push", stack, (it) => {
  it.effect("the push seller's inline answer completes the saga promptly, with its output, paid 85 % once", () =>
    TestClock.withLive(
      Effect.scoped(
        Effect.gen(function* () {
          const server = yield* Effect.acquireRelease(
            Effect.promise(() =>
              startPushSeller((push) => ({
                status: 200,
                body: { status: "delivered", output: { words: String(push.data.input) } }
              }))
            ),
            (s) => Effect.promise(() => s.close())
          )
          const { agentId, caller } = yield* liveSellerAgent("push seller")
          const tiers = [
            { ...tier("basic", PRICE), sla: { uptimePct: 99, p95LatencyMs: 5_000, supportWindow: "24/7" } }
          ]
          const service = yield* Effect.flatMap(Catalog, (c) =>
            c.publish(caller, serviceBody("Pushed", tiers, "testing", { mode: "push", url: server.url }))
          )
          server.secret = service.fulfilmentSecret
          const buyer = yield* fundedBuyer(1_000)
          const sagas = yield* Sagas
          const started = Date.now()
          const saga = yield* sagas.start(buyer.caller, { serviceId: service.id, tierId: "basic", input: "two words" })
          const done = yield* eventuallyEffect(sagas.get(buyer.agentId, saga.id), (s) => s.status !== "running")
          // Woken by the answer, not by the 10 s deadline.
          expect(Date.now() - started).toBeLessThan(5_000)
          expect(done).toMatchObject({
            status: "completed",
            output: { words: "two words" },
            transactionId: saga.transactionId,
            settlement: { sellerCents: 85, feeCents: 15 }
          })
          expect(server.pushes).toHaveLength(1)
          expect(server.pushes[0]).toMatchObject({ verified: true, webhookId: saga.transactionId })
          expect(yield* balance(walletAccount(agentId))).toBe(85)
          expect(yield* balance(walletAccount(buyer.agentId))).toBe(1_000 - PRICE)
          expect(yield* balance(escrowAccount(saga.id))).toBe(0)
        })
      )
    )
  )
})
