// A refusal's record never changes the refusal: when the refusals store fails or hangs, the agent
// still gets its 403 (at once, or after the record's one-second bound), and nothing is charged. The store is
// replaced by a broken one, so this runs on memory only: what is tested is the service's bound.
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { walletAccount } from "../../src/schema/ledger/ledger.js"
import { StorageUnavailable } from "../../src/schema/platform/errors.js"
import { NoNegotiatedPrices } from "../../src/services/purchases/NegotiatedPrices.js"
import { Commerce } from "../../src/services/commerce/Commerce.js"
import { Ledger } from "../../src/services/ledger/Ledger.js"
import { Ids } from "../../src/services/platform/Db.js"
import { RefusalsStore } from "../../src/services/refusals/RefusalsStore.js"
import { Wallet } from "../../src/services/wallet/Wallet.js"
import { memoryCase } from "../fixtures/db.js"
import { commerceServices, fundedBuyer, sellerWith, tier } from "../fixtures/money.js"

const brokenStore = (insert: () => Effect.Effect<void, StorageUnavailable>) =>
  Layer.succeed(RefusalsStore, {
    insert,
    page: () => Effect.succeed([]),
    latestByAgent: () => Effect.succeed([])
  })

const stackWith = (store: Layer.Layer<RefusalsStore>) =>
  commerceServices.pipe(
    Layer.provide(store),
    Layer.provideMerge(NoNegotiatedPrices),
    Layer.provideMerge(memoryCase.layer()),
    Layer.provideMerge(Ids.Live)
  )

const refusedPromptly = Effect.gen(function* () {
  const commerce = yield* Commerce
  const wallet = yield* Wallet
  const { service } = yield* sellerWith("Refused", [tier("t", 300)])
  const buyer = yield* fundedBuyer(1_000)
  yield* wallet.updatePolicy(buyer.agentId, { perTransactionLimitCents: 100 as never }, { byOwner: true })
  return {
    buyer,
    refused: Effect.flip(commerce.buy({ caller: buyer.caller, serviceId: service.id, tierId: "t", input: null }))
  }
})

const isTheRefusal = (refused: unknown, agentId: string) =>
  Effect.gen(function* () {
    expect(refused).toMatchObject({ _tag: "PolicyViolation", policy: "perTransactionLimit" })
    expect(yield* Effect.flatMap(Ledger, (l) => l.balance(walletAccount(agentId)))).toBe(1_000)
  })

layer(stackWith(brokenStore(() => Effect.fail(new StorageUnavailable({ message: "refusals table gone" })))))(
  "a refusal whose record fails",
  (it) => {
    // The test clock never moves here: the refusal answers without waiting for any time to pass.
    it.effect("is still the 403, at once", () =>
      Effect.gen(function* () {
        const { buyer, refused } = yield* refusedPromptly
        yield* isTheRefusal(yield* refused, buyer.agentId)
      })
    )
  }
)

layer(stackWith(brokenStore(() => Effect.never)))("a refusal whose record hangs", (it) => {
  it.effect("is still the 403, once the record's one-second bound has passed", () =>
    Effect.gen(function* () {
      const { buyer, refused } = yield* refusedPromptly
      const fiber = yield* Effect.forkChild(refused)
      yield* TestClock.adjust("999 millis")
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust("1 millis")
      yield* isTheRefusal(yield* Fiber.join(fiber), buyer.agentId)
    })
  )
})
